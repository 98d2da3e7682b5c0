"""A scalar baked as a constant on one side that the other side reads from an input both graphs have.

torch_xla passes a Python number into the graph as device data, but bakes 0 and 1 in as constants (its special
scalars), and gives equal values one input parameter. A loss scale of 1.0 that becomes 2.0 therefore shows up
as three constants removed, their users now reading the parameter that already carried another 2.0 (the
derivative of ``pow(2)``): no input is added, the instruction that read ``constant(1)`` reads ``%p4`` in the same
operand slot. Instruction by instruction that is "ops removed", which reads as a Python ``if`` that traced code
on some steps only (new-user review 15, F1). What the user changed is a value: this module finds that shape of
change and says it as one constant that became an input (or the reverse), like a constant matched to a new
parameter (:func:`hlodiff.diff.causes._origin_kind`'s ``opcode`` change).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.diff.model import Change
from hlodiff.diff.shared_constants import Key, one_operand_changes, value_chain

_ENDS = ("constant", "parameter")
"""Where a value's chain of value-keeping ops ends: a baked constant, or the input that carries it."""


@dataclass(slots=True)
class MergedScalar:
    """One use whose operand went from a baked constant to an input the other graph also has (or back): the
    synthetic constant <-> parameter change that stands for it, and the changes it explains (the user's operand
    change, the one-sided constant and the value-keeping ops that shaped it)."""

    change: Change
    explained: list[Key]


def merged_scalars(cd, changes: dict[Key, Change], ref) -> list[MergedScalar]:
    """For a region of change (``changes``) that is nothing else: every matched instruction of an entry computation
    in it whose only difference is one operand,
    read on one side through value-keeping ops from a scalar constant found on that side only, and on the other
    from an entry parameter of the same element type matched on both sides. ``ref(side, name)`` makes the
    :class:`InstructionRef` of an instruction (side ``"left"`` or ``"right"``)."""
    if cd.caller is not None:
        return []  # a called computation's parameters are its caller's operands, not device data
    m = cd.matching
    found: list[MergedScalar] = []
    for key, lo, ro in one_operand_changes(cd, changes):
        lchain, rchain = value_chain(cd.left, lo, _ENDS), value_chain(cd.right, ro, _ENDS)
        if lchain is None or rchain is None:
            continue
        lend, rend = cd.left.insts[lchain[-1]], cd.right.insts[rchain[-1]]
        if {lend.opcode, rend.opcode} != {"constant", "parameter"}:
            continue
        baked_left = lend.opcode == "constant"
        const, param = (lend, rend) if baked_left else (rend, lend)
        if not _scalar(const) or const.shape.element_type != param.shape.element_type:
            continue
        if baked_left and (lchain[-1] in m.l2r or rchain[-1] not in m.r2l):
            continue  # the constant is still there, or the input is new (a new input is the inputs story)
        if not baked_left and (rchain[-1] in m.r2l or lchain[-1] not in m.l2r):
            continue
        one_sided = [(n, None) for n in lchain if n not in m.l2r] + [(None, n) for n in rchain if n not in m.r2l]
        explained = [k for k in one_sided if k in changes]
        found.append(MergedScalar(_opcode_change(cd, key, lchain[-1], rchain[-1], baked_left, ref),
                                  [key, *explained]))
    # only where that is all the region's change: a code path that changed (other ops, inputs, sizes around it)
    # also rewires operands between constants and inputs, which is no value of the user's (review2_multitask_rr)
    if {k for m in found for k in m.explained} != set(changes):
        return []
    return found


def _scalar(inst) -> bool:
    """A single value: rank 0, or one element."""
    return not inst.shape.is_tuple and inst.shape.num_elements() == 1


def _opcode_change(cd, key: Key, lend: str, rend: str, baked_left: bool, ref) -> Change:
    """The change a matcher would have made had it paired the constant with the parameter: ``opcode`` with the
    baked literal as ``value`` (what :func:`hlodiff.diff.summaries.origin_cause` and the fix facts read). The
    constant has no stack of its own when torch_xla gives it none: the user's stack is where it enters."""
    lname, rname = key
    left, right = ref("left", lend), ref("right", rend)
    user = ref("left", lname) if baked_left else ref("right", rname)
    if baked_left and not left.frames:
        left = _with_frames(left, user.frames)
    if not baked_left and not right.frames:
        right = _with_frames(right, user.frames)
    literal = (cd.left.insts[lend] if baked_left else cd.right.insts[rend]).literal or ""
    value = (literal, "") if baked_left else ("", literal)
    details = {"opcode": (left.opcode, right.opcode), "value": value}
    return Change(left, right, ("opcode",), details)


def _with_frames(r, frames):
    from hlodiff.diff.model import InstructionRef

    return InstructionRef(r.computation, r.name, r.opcode, r.shape, tuple(frames), r.position, r.target)
