"""An input whose type or shape changed in a graph compiled while source lines were off: where the earlier value
was made is no line of the change.

``hlodiff record --lines auto`` turns torch_xla's source lines off on steady steps (:mod:`hlodiff.capture.lines`).
A value made anew on such a step (a checkpoint restored as float64 at step 4) enters the graph that compiles with
no frames of its own, and the diff falls back on the earlier graph's side: that parameter's stack is where the
*earlier* value was made (the model built at start-up), not where the new one came from (review 20, F1: "dtype at
t1_restore_f64.py:8" for a restore at line 24, which `--lines always` names). The earlier graph's first use of the
parameter is code both graphs run (the model call), so it is told instead, and the cause says what is unknown.
Only when the source shows the earlier value was made outside the loop (once, at start-up): a value made in the
loop's body (``x = torch.randn(batch, 8).to(dev)`` in live_batch_change) is made anew there every step, the new one
too, so that line stays.
"""

from __future__ import annotations

from hlodiff.diff.model import Cause
from hlodiff.dumps.graph_record import TRACED_KINDS
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.locate import has_op_metadata, has_source_metadata
from hlodiff.hlo.model import SourceFrame, user_frame

INPUT_KINDS = frozenset({"dtype", "shape"})
"""Cause kinds of a changed input: its value is made outside the graph, where its stack points."""


def place_lineless_inputs(causes: list[Cause], left: GraphSummary, right: GraphSummary, sources) -> None:
    """For a torch_xla graph traced with lines off (op metadata, no frames) against an earlier one with lines,
    replace the earlier parameters' origins in each input cause by the earlier graph's first use of them."""
    if right.record.kind not in TRACED_KINDS or has_source_metadata(right) or not has_op_metadata(right):
        return
    cm = left._canonical
    if cm is None or not has_source_metadata(left):
        return
    for cause in causes:
        if cause.kind in INPUT_KINDS and cause.locations:
            _place(cause, cm, sources)


def _place(cause: Cause, cm, sources) -> None:
    entry = cm.entry
    origins: list[SourceFrame] = []
    uses: list[SourceFrame] = []
    for name, _ in cause.instructions:
        inst = entry.insts.get(name) if name is not None else None
        if inst is None or inst.opcode != "parameter":
            continue
        if (made := user_frame(cm.frames(inst))) is not None and made not in origins:
            origins.append(made)
        if (use := _first_use(cm, entry, name)) is not None and use not in uses:
            uses.append(use)
    if not origins or not any(f in origins for f in cause.locations[:1]):
        return  # the cause's line is no earlier value's origin
    if any(sources.in_loop(f.file, f.line) is not False for f in origins):
        return  # made in the loop (anew every step, the new value too), or no source to tell
    kept = [f for f in cause.locations if f not in origins]
    cause.locations = uses[:1] + [f for f in kept if f not in uses[:1]]
    made = " and ".join(f.short() for f in origins[:2])
    cause.hint = (f"where the new value was made: this graph compiled while source lines were off (`hlodiff record "
                  f"--lines auto` turns them off on steady steps), so only its use is known; the earlier "
                  f"value{'s were' if len(origins) > 1 else ' was'} made at {made}, not where it changed: rerun with "
                  "`hlodiff record --lines always -- ...`")


def _first_use(cm, entry, name: str) -> SourceFrame | None:
    """The user frame of the earliest instruction (in the graph's order, the order torch_xla traced it: the
    forward before the optimizer's update) using parameter ``name``, through users that carry none (broadcasts,
    converts)."""
    order = {n: i for i, n in enumerate(entry.insts)}
    frontier, seen = sorted(entry.users(name), key=lambda n: order.get(n, 0)), {name}
    while frontier and len(seen) < 64:
        found = [f for u in frontier if (f := user_frame(cm.frames(entry.insts[u]))) is not None]
        if found:
            return found[0]
        seen.update(frontier)
        frontier = sorted({v for u in frontier for v in entry.users(u)} - seen, key=lambda n: order.get(n, 0))
    return None
