"""One line per cause in the user's terms, and where in their code: the summaries :mod:`hlodiff.diff.causes`
builds from a cause's origin changes.

A summary names the first origin (a parameter before what it feeds, then the order the dump reads in) and what
changed on it; locations are the innermost user frame of each origin's stack, library frames kept apart for
causes that have no user frame.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.diff.model import Cause, Change
from hlodiff.hlo.model import SourceFrame


def key_sort(key) -> tuple[str, str]:
    return (key[0] or "", key[1] or "")



def origin_cause(kind: str, changes: list[Change], context: str) -> Cause:
    changes = sorted(changes, key=_origin_order)
    first = changes[0]
    if kind == "ops" and first.side != "changed":
        first = next(c for c in changes if c.side == "changed")
    baked = None
    what = {"shape": "shape", "dtype": "element_type", "layout": "layout", "constant": "literal",
            "sharding": "sharding"}.get(kind)
    if kind == "attribute":
        keys = sorted({k.split(":", 1)[1] for c in changes for k in c.kinds if k.startswith("attribute:")})
        what = "attribute:" + keys[0]
        summary = f"{', '.join(keys)} changed on {_describe(first)}"
    elif kind == "constant" and "opcode" in first.kinds:
        if first.left.opcode == "constant":
            baked = first.details.get('value', ('?',))[0]
            summary = (f"the value {baked} ({first.left.shape}) was baked into the "
                       f"left graph as a constant; on the right it is an input parameter")
        else:
            summary = (f"an input parameter ({first.left.shape}) on the left became the constant "
                       f"{first.details.get('value', ('', '?'))[1]} baked into the right graph")
        what = None
    elif kind == "reordered":
        a, b = first.details["parameter_number"]
        summary = (f"same computation, {len(changes)} parameter{'s' if len(changes) != 1 else ''} numbered "
                   f"differently (e.g. %{first.left.name}: {a} -> {b})")
        what = None
    elif kind == "ops" and "operands" in first.details:
        summary = f"{_describe(first)} takes the same operands in another order"
        what = None
    elif kind == "ops":
        summary = f"{_describe(first)} changed ({', '.join(first.kinds)})"
        what = first.kinds[0] if first.kinds else None
    else:
        noun = {"shape": "shape", "dtype": "element type", "layout": "layout", "constant": "constant value",
                "sharding": "sharding"}[kind]
        where = "input" if first.left.opcode == "parameter" else ""
        summary = f"{where + ' ' if where else ''}{noun} changed on {_describe(first)}"
    if "used_by" in first.details:  # a shared constant changed for one of its users (diff/shared_constants.py)
        summary += f" used by {first.details['used_by'][1]}"
    if what and what in first.details:
        a, b = first.details[what]
        if kind == "sharding":  # review 10 F8: a side without an annotation printed nothing before the arrow
            a, b = (v or NO_SHARDING for v in (a, b))
        summary += f": {a} -> {b}"
    if len(changes) > 1 and kind != "reordered":
        summary += f" (+{len(changes) - 1} more instruction{'s' if len(changes) > 2 else ''} like it)"
    stacks = change_stacks(changes)
    user, library = locations(stacks)
    return Cause(kind, summary + context, user, instructions(changes), library, origins=changes,
                 callers=callers(stacks), named=first, baked_value=baked,
                 element_types=first.details.get("element_type") if kind == "dtype" else None)


NO_SHARDING = "none (no sharding annotation)"
"""A parameter the module gives no ``sharding={...}``: an argument JAX had not placed (uncommitted, as ``jnp.ones``
makes it), left to XLA, or a one-device module. Which of them the text cannot tell, so the words say what is seen."""


def _origin_order(change: Change) -> tuple:
    side = change.left or change.right
    return (side.opcode != "parameter", side.position, side.name)


def _describe(change: Change) -> str:
    side = change.right or change.left
    return f"{side.opcode} %{side.name}"


def inputs_cause(changes: list[Change], context: str) -> Cause:
    added = [c.right for c in changes if c.right is not None]
    removed = [c.left for c in changes if c.left is not None]
    parts = []
    if added:
        parts.append(f"{len(added)} input{'s' if len(added) != 1 else ''} added ({_shapes(added)})")
    if removed:
        parts.append(f"{len(removed)} input{'s' if len(removed) != 1 else ''} removed ({_shapes(removed)})")
    stacks = change_stacks(changes)
    user, library = locations(stacks)
    return Cause("inputs", "; ".join(parts) + context, user, instructions(changes), library, origins=list(changes),
                 callers=callers(stacks), added=bool(added), removed=bool(removed))


MOVED_OPCODES = frozenset(("transpose", "copy", "bitcast", "reshape", "broadcast"))
"""Layout plumbing: what appears or goes when the same values are only wired another way."""


def computes_anew(changes: list[Change]) -> bool:
    """Some instruction that appears or goes is arithmetic, not layout plumbing (a transpose placed elsewhere)."""
    return any(c.side != "changed" and (c.left or c.right).opcode not in MOVED_OPCODES for c in changes)


def new_work(changes: list[Change]) -> bool:
    """Operations appear or go besides instructions that only read their operands in another order: the
    computation itself changed (erf replaced by tanh), and the rewired instructions are where it joins the rest,
    not the story."""
    return computes_anew(changes) and all(set(c.kinds) == {"operands"} for c in changes if c.side == "changed")


def ops_cause(changes: list[Change], context: str) -> Cause:
    added = Counter(c.right.opcode for c in changes if c.left is None)
    removed = Counter(c.left.opcode for c in changes if c.right is None)
    rewired = sum(1 for c in changes if c.side == "changed")
    parts = []
    for counter, verb in ((added, "added"), (removed, "removed")):
        if counter:
            n = sum(counter.values())
            parts.append(f"{n} instruction{'s' if n != 1 else ''} {verb} ({_opcodes(counter)})")
    if rewired:
        parts.append(f"{rewired} instruction{'s' if rewired != 1 else ''} reading them in another order")
    stacks = change_stacks(changes)
    user, library = locations(stacks)
    return Cause("ops", "; ".join(parts) + context, user, instructions(changes), library, origins=list(changes),
                 callers=callers(stacks), added=bool(added), removed=bool(removed),
                 instructions_removed=sum(removed.values()))


def absorb(cause: Cause, changes: list[Change]) -> None:
    added = sum(1 for c in changes if c.right is not None)
    removed = sum(1 for c in changes if c.left is not None)
    bits = []
    if added:
        bits.append(f"{added} instruction{'s' if added != 1 else ''} added")
    if removed:
        bits.append(f"{removed} instruction{'s' if removed != 1 else ''} removed")
    cause.summary += f"; with it: {', '.join(bits)}"
    cause.added, cause.removed = cause.added or bool(added), cause.removed or bool(removed)
    cause.instructions_removed += removed
    cause.instructions = sorted(set(cause.instructions) | set(instructions(changes)), key=key_sort)


def _opcodes(counter: Counter) -> str:
    return ", ".join(f"{n} {op}" if n > 1 else op for op, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _shapes(refs) -> str:
    text = ", ".join(r.shape for r in refs[:4])
    return text + (" ..." if len(refs) > 4 else "")


def instructions(changes: list[Change]) -> list[tuple[str | None, str | None]]:
    return sorted({(c.left.name if c.left else None, c.right.name if c.right else None) for c in changes},
                  key=key_sort)


def change_stacks(changes: list[Change]) -> list[tuple[SourceFrame, ...]]:
    """Frame stacks per change: the right side's when it has one (the newer code), else the left's."""
    stacks = []
    for change in changes:
        sides = [s for s in (change.right, change.left) if s is not None and s.frames]
        if sides:
            stacks.append(sides[0].frames)
    return stacks


def locations(stacks) -> tuple[list[SourceFrame], list[SourceFrame]]:
    """The innermost user frame of each stack (outside torch, torch_xla, JAX ...); library frames kept apart."""
    user: list[SourceFrame] = []
    library: list[SourceFrame] = []
    for frames in stacks:
        if not frames:
            continue
        mine = [f for f in frames if not f.is_library]
        if mine:
            if mine[0] not in user:
                user.append(mine[0])
        elif frames[0] not in library:
            library.append(frames[0])
    # Discovery order, not line order: origins come first. The frames that called a location (a jitted
    # function's call site) are its stack (:func:`callers`), not locations of their own.
    return user[:8], library[:4]


def callers(stacks) -> dict[SourceFrame, tuple[SourceFrame, ...]]:
    """For each location :func:`locations` picks, the user frames outside it, innermost first (its first stack)."""
    found: dict[SourceFrame, tuple[SourceFrame, ...]] = {}
    for frames in stacks:
        mine = [f for f in frames if not f.is_library]
        if mine and mine[0] not in found:
            found[mine[0]] = tuple(mine[1:])
    return found


