"""Where an input that grows by concatenation is grown: the ``torch.cat`` line, before its first use.

A tensor appended to every step (``ids = torch.cat([ids, next_id], dim=1)`` in a generation loop, a cache kept
without a fixed size) enters each step's graph as device data one step longer than before. The changed
parameter's first users are wherever the step reads it (the model's forward), but the line to change is the
concatenation, which the same graph also holds: the parameter feeds a ``concatenate`` whose result the graph
hands back as an output, the next step's input. That concatenation's user frame leads the cause's locations.
"""

from __future__ import annotations

_PASS_THROUGH = frozenset({"copy", "bitcast", "reshape", "convert"})


def place_grown_tensors(recompilations) -> None:
    """Put the concatenation that grows a changed input first among its ``shape`` cause's locations."""
    for r in recompilations:
        cm = getattr(r.graph, "_canonical", None)
        if cm is None:
            continue
        for cause in r.causes:
            if cause.kind != "shape":
                continue
            frame = growing_concatenation(cm, cause)
            if frame is not None:
                cause.locations = [frame] + [f for f in cause.locations if (f.file, f.line) != (frame.file, frame.line)]


def growing_concatenation(cm, cause):
    """The user frame of a ``concatenate`` that reads a changed entry parameter of the recompiled graph and whose
    result (through copies or reshapes) is an output of that graph; None when there is none."""
    entry = cm.entry
    outputs = set(entry.outputs())
    for o in cause.origins:
        ref = o.right
        if ref is None or ref.opcode != "parameter" or ref.computation != entry.name:
            continue
        for user in entry.users(ref.name):
            inst = entry.insts.get(user)
            if inst is None or inst.opcode != "concatenate" or not _reaches_output(entry, user, outputs):
                continue
            mine = next((f for f in cm.frames(inst) if not f.is_library), None)
            if mine is not None:
                return mine
    return None


def _reaches_output(entry, name: str, outputs: set[str], depth: int = 3) -> bool:
    frontier = [name]
    for _ in range(depth + 1):
        if any(n in outputs for n in frontier):
            return True
        frontier = [u for n in frontier for u in entry.users(n)
                    if entry.insts.get(u) is not None and entry.insts[u].opcode in _PASS_THROUGH]
    return False
