"""What a JAX static argument sets in the graph, from the recompilation's own causes: shapes and loop lengths (a
trip count baked into a while loop's condition), the ops traced (a Python loop over it unrolled: the added ops a
multiple of how much it changed), or a slice's bounds (a window's start only: ``lax.dynamic_slice`` makes it one
graph). Read by :mod:`hlodiff.explain.fix_context` for the static-argument fixes.
"""

from __future__ import annotations

import re
from collections import Counter


def static_structure(r) -> str:
    """What the graph's own causes say a static argument sets, in words for the fix; empty for values only."""
    kinds = {c.kind for c in r.causes}
    if "shape" in kinds or trip_count_changed(r):
        return "shapes and loop lengths"
    if kinds & {"ops", "inputs", "outputs"}:
        return "which ops are traced: a Python loop or branch on it"
    if "attribute" in kinds:
        return "" if slice_start_only(r) else "slice bounds or dimensions"
    return ""


def slice_start_only(r) -> bool:
    """Every changed attribute is a slice's bounds, each moved without changing its length (``[0:4]`` ->
    ``[4:8]``): a window's start baked in. ``lax.dynamic_slice`` with a traced start makes it one graph."""
    found = False
    for c in r.causes:
        if c.kind != "attribute":
            continue
        for o in c.origins:
            if o.left is None or o.right is None or set(o.kinds) != {"attribute:slice"}:
                return False
            before, after = o.details.get("attribute:slice", ("", ""))
            if _slice_lengths(before) != _slice_lengths(after) or not _slice_lengths(before):
                return False
            found = True
    return found


_BOUNDS = re.compile(r"\[(-?\d+):(-?\d+)(?::(\d+))?\]")


def _slice_lengths(text: str) -> tuple[int, ...]:
    return tuple(int(b) - int(a) for a, b, _ in _BOUNDS.findall(text or ""))


def trip_count_changed(r) -> bool:
    """A changed constant inside a while loop's condition: a loop count baked in (lax.scan's length,
    fori_loop with Python bounds)."""
    cm = getattr(r.graph, "_canonical", None)
    if cm is None:
        return False
    conditions = {str(inst.attrs.get("condition", "")).lstrip("%") for comp in cm.computations.values()
                  for inst in comp.instructions() if inst.opcode == "while"}
    return any(o.right is not None and o.right.computation in conditions
               for c in r.causes if c.kind == "constant" for o in c.origins)


def ops_repeat_per_count(r, before: str, after: str) -> bool:
    """The graphs differ only in instructions one of them has more of, every one an opcode the other graph also
    has, and their number a multiple of how much the static integer changed (``10 -> 15``: 30 added, 6 per
    count): a Python loop over that integer unrolled in the trace. A branch on it adds a fixed number of ops
    whatever the values, or ops the other graph lacks. A change of 1 divides every count, so the smaller graph
    must also hold the body once per count it ran (``10``: at least 10 of each added op per count); a count of
    0 holds no body to compare, and ``0 -> 1`` is as likely a flag switching a branch on."""
    try:
        low, high = sorted((int(before), int(after)))
    except ValueError:
        return False
    delta = high - low
    if delta == 0 or low < 1 or r.closest is None:
        return False
    other = [c for c in r.causes if c.kind != "static_argument"]
    if not other or any(c.kind != "ops" for c in other):
        return False
    pairs = [(o.left, o.right) for c in other for o in c.origins]
    added = [x for left, x in pairs if left is None and x is not None]
    removed = [x for x, right in pairs if right is None and x is not None]
    if len(added) + len(removed) != len(pairs) or bool(added) == bool(removed):
        return False  # a changed instruction, or ops both gained and lost: not more of the same
    one_sided, kept_in = (added, r.closest) if added else (removed, r.graph)
    cm = getattr(kept_in, "_canonical", None)
    if cm is None:
        return False
    if len(one_sided) % delta:
        return False
    held = Counter(i.opcode for comp in cm.computations.values() for i in comp.instructions())
    per_count = Counter(x.opcode for x in one_sided)
    return all(held[op] * delta >= n * low for op, n in per_count.items())


def inputs_sized_by(r, pair: tuple[str, ...]) -> bool:
    """An input parameter whose shape changed with the static value (``n_nodes`` 20 -> 17, ``nodes`` f32[20,8] ->
    f32[17,8]: the same dimension held the old value, then the new one): the static is a size of the batch itself,
    so the arrays must be padded as well (round 23, r23_jx_segment_num_nodes). A static that only sizes what the
    program makes inside (a one-hot's class count: r19_jx_onehot_max_label) changes no input's shape."""
    if len(pair) != 2 or not all(v.strip().lstrip("-").isdigit() for v in pair):
        return False
    before, after = (int(v) for v in pair)
    entries = {g._canonical.entry.name for g in (r.closest, r.graph)
               if g is not None and getattr(g, "_canonical", None) is not None}
    for cause in r.causes:
        if cause.kind != "shape":
            continue
        for o in cause.origins:
            side = o.right or o.left
            if side is None or side.opcode != "parameter" or side.computation not in entries:
                continue  # a called computation's parameter (log_softmax's Arg_0) is made inside the program
            old, new = (_dims(t) for t in o.details.get("shape", ("", "")))
            if any(a == before and b == after for a, b in zip(old, new)) and len(old) == len(new):
                return True
    return False


def _dims(shape) -> tuple[int, ...]:
    m = re.search(r"\[([0-9, ]*)\]", str(shape or ""))
    return tuple(int(d) for d in m.group(1).replace(" ", "").split(",") if d) if m else ()

