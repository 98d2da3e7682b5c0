"""A constant shared by many identical blocks, changed in one of them: a changed constant, not added ops.

XLA's text gives one ``constant`` instruction to equal values (JAX lowers a layer norm's ``eps`` once for every
block that uses 1e-05). When one block of thousands gets 1e-06, the right graph has a new constant (and the
broadcast that shapes it) and that block's ``add`` reads it instead of the shared one: instruction by instruction,
two instructions were added and one changed operands, which reads as "the traced Python takes another path".
What the user changed is a value. This module finds that shape of change and says it as one: the old and new
value, the instruction that uses it, and which of the look-alike users it is (the block).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.diff.model import Change, InstructionRef

Key = tuple[str | None, str | None]

VALUE_KEEPING = frozenset(("broadcast", "reshape", "convert", "bitcast", "copy"))
"""Ops between a constant and its use that keep its value (they only shape or retype it)."""
_MAX_CHAIN = 8


@dataclass(slots=True)
class SplitConstant:
    """One use whose constant operand took another value: the synthetic ``literal`` change that stands for it, and
    the changes it explains (the user's operand change, the one-sided constant and its shaping ops)."""

    change: Change
    explained: list[Key]


def one_operand_changes(cd, changes: dict[Key, Change]):
    """``(key, left operand, right operand)`` of every matched instruction in ``changes`` whose only difference is
    one operand that is no longer the matched one: where a value's source moved (another constant, an input)."""
    m = cd.matching
    for key, change in changes.items():
        lname, rname = key
        if lname is None or rname is None or set(change.kinds) != {"operands"}:
            continue
        lops, rops = cd.left.operands[lname], cd.right.operands[rname]
        if len(lops) != len(rops):
            continue
        diverging = [(lo, ro) for lo, ro in zip(lops, rops) if m.l2r.get(lo) != ro]
        if len(diverging) == 1:
            yield key, diverging[0][0], diverging[0][1]


def split_constants(cd, changes: dict[Key, Change], ref) -> list[SplitConstant]:
    """Every matched instruction in ``changes`` whose only difference is one operand now read from another
    constant of the same shape (through value-keeping ops), where that constant's chain exists on one side only.
    ``ref(side, name)`` makes the :class:`InstructionRef` of an instruction (side ``"left"`` or ``"right"``)."""
    m = cd.matching
    found: list[SplitConstant] = []
    for key, lo, ro in one_operand_changes(cd, changes):
        lchain, rchain = value_chain(cd.left, lo), value_chain(cd.right, ro)
        if lchain is None or rchain is None:
            continue
        lconst, rconst = cd.left.insts[lchain[-1]], cd.right.insts[rchain[-1]]
        if lconst.shape != rconst.shape or lconst.literal == rconst.literal:
            continue
        one_sided = ([(None, n) for n in rchain if n not in m.r2l], [(n, None) for n in lchain if n not in m.l2r])
        explained = [k for k in (*one_sided[0], *one_sided[1]) if k in changes]
        if not explained:
            continue  # both constants were there before: an operand swap between existing values, not a split
        found.append(SplitConstant(_literal_change(cd, key, lchain, rchain, ref), [key, *explained]))
    return found


def value_chain(cc, name: str, ends: tuple[str, ...] = ("constant",)) -> list[str] | None:
    """``name`` and the value-keeping ops under it down to an instruction of an opcode in ``ends`` (that one last:
    a constant, or for :mod:`hlodiff.diff.merged_scalars` a constant or a parameter); None otherwise."""
    chain = [name]
    while len(chain) <= _MAX_CHAIN:
        inst = cc.insts[chain[-1]]
        if inst.opcode in ends:
            return chain
        operands = cc.operands[chain[-1]]
        if inst.opcode not in VALUE_KEEPING or len(operands) != 1:
            return None
        chain.append(operands[0])
    return None


def _literal_change(cd, key: Key, lchain: list[str], rchain: list[str], ref) -> Change:
    lname, rname = key
    lconst, rconst = ref("left", lchain[-1]), ref("right", rchain[-1])
    user = ref("right", rname)
    # The constant has no stack of its own (JAX puts none on constants): the user's stack is where it enters.
    right = InstructionRef(rconst.computation, rconst.name, rconst.opcode, rconst.shape,
                           rconst.frames or user.frames, user.position)
    left_value = cd.left.insts[lchain[-1]].literal or ""
    right_value = cd.right.insts[rchain[-1]].literal or ""
    details = {"literal": (left_value, right_value),
               "used_by": (f"%{lname}", f"%{rname}, {_which(cd.left, lname, lchain[0])}")}
    return Change(lconst, right, ("literal",), details)


def _which(cc, user: str, operand: str) -> str:
    """Which of the look-alike users of the shared value this one is: ``the 3,401st of 6,800 add instructions
    that read it`` (program order), or ``its only user``."""
    opcode = cc.insts[user].opcode
    alike = sorted((u for u in cc.users(operand) if cc.insts[u].opcode == opcode), key=lambda u: cc.insts[u].line)
    if len(alike) <= 1:
        return "its only user"
    return f"the {_ordinal(alike.index(user) + 1)} of {len(alike):,} {opcode} instructions that read it"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"
