"""The line of layers that join the step mid-run, read from the graph and the source.

A depth curriculum (round 30, r30_tx_depth_curriculum: ``for blk in self.blocks[:self.active]``) adds weights the
step did not read before; their own instructions (the ``dot`` of ``nn.Linear``) carry torch.nn's frames only, so the
cause had no user line. The new weights' nearest users with a frame in the user's code (the ``relu`` and the
residual ``add`` around ``blk(h)``) are where the layers run; the ``for`` or ``if`` around that line, read from the
source on disk, decides how many layers run, and goes first.
"""

from __future__ import annotations

from hlodiff.hlo.model import SourceFrame

JOINED_ROWS = frozenset({"inputs_layers_joined"})
"""Rows whose story is layers that run from some step on (a test per row: tests/test_leftovers14.py)."""

_MAX_STEPS = 4000
"""Instructions visited from the new weights before giving up: the forward's user line is a few users away."""


def place_joined_layers(recompilations, sources) -> None:
    """A cause of a :data:`JOINED_ROWS` row with no user line takes the user line nearest its new weights in the
    graph's data flow, preceded by the ``for``/``if`` around it when the source is on disk."""
    for r in recompilations:
        root = r.causes[0] if r.causes else None
        if root is None or root.fix_rule not in JOINED_ROWS:
            continue
        if any(not f.is_library and f.line is not None for f in root.locations):
            continue
        used = _nearest_user_frame(r, root)
        if used is None:
            continue
        choice = sources.enclosing_choice(used.file, used.line)
        found = [SourceFrame(used.file, choice, used.function)] if choice and choice != used.line else []
        root.locations = [*found, used, *root.locations]
        root.hint = None


def _nearest_user_frame(r, root) -> SourceFrame | None:
    """Breadth first from the cause's new parameters through their users: the first instruction whose innermost
    frame outside libraries names a line; the optimizer's update (library frames only) never ends the walk."""
    cm = getattr(r.graph, "_canonical", None)
    if cm is None:
        return None
    entry = cm.entry
    todo = [o.right.name for o in root.origins if o.left is None and o.right is not None
            and o.right.opcode == "parameter" and o.right.name in entry.insts]
    seen = set(todo)
    for name in todo:  # grows while read: breadth first
        if len(seen) > _MAX_STEPS:
            return None
        for user in entry.users(name):
            if user in seen:
                continue
            seen.add(user)
            mine = next((f for f in cm.frames(entry.insts[user]) if not f.is_library and f.line is not None), None)
            if mine is not None:
                return mine
            todo.append(user)
    return None
