"""A value read right after the step's sync is no cut step.

torch_xla's debug log names every graph a read runs "most likely user code trying to access tensor value before
torch_xla.sync", and a read's stack holds no sync frame, so both say "partial": a graph that ran before the step's
sync and cut it short. A metric computed from what the sync just produced (``float(entropy(weights))`` on the line
after ``torch_xla.sync()``, on logging steps) runs a small graph of its own after the step instead: the step is
whole. Taken for a cut, it joins the step's family and the periodic metric reads as "a value read before the sync
cut the step: read it after the sync", advice the user already follows (round 6, ``attn_weights_logging``).

Two facts of the capture say the read came after the sync, and both must hold: the read's user line comes after
the sync's line in the same function of the same file (a loop body runs top to bottom: a read above the sync cuts
it), and every non-scalar input of the read's graph has the shape of an output of the graph the sync just ran (it
reads the step's results; a read that cut a step whose sync is at the loop's top reads the new batch too). Round 10
(``r10_spmd_shard_late``): the sync may sit in a step function the loop calls (the loop's call line is then the
sync's line in the loop's function), and a read of scalars only (``torch.isfinite(loss).item()``) counts when one
of them has the shape of an output of the sync's graph (the others are Python numbers torch_xla made data: the
isfinite's infinity).
"""

from __future__ import annotations

from hlodiff.explain.families import is_sync_frame
from hlodiff.explain.locate import outputs_added_removed
from hlodiff.hlo.model import runs_after
from hlodiff.hlo.shapes import without_layout_text


def read_after_sync(previous, graph) -> bool:
    """``graph``, run by a read, came right after ``previous``, a whole graph a sync ran, and reads only what that
    sync produced (module docstring). False whenever a stack, a line or a module is missing."""
    before, after = previous.record.frames, graph.record.frames
    if not before or not after or not any(is_sync_frame(f) for f in before) or any(is_sync_frame(f) for f in after):
        return False
    sync_at, read_at = previous.trigger, graph.trigger
    if sync_at is None or read_at is None or not (runs_after([read_at], [sync_at]) or runs_after(
            _user_frames(after), _user_frames(before))):  # round 10: a sync inside a step function the loop calls
        return False
    made, reads = _canonical(previous), _canonical(graph)
    if made is None or reads is None:
        return False
    outputs = {without_layout_text(str(made.entry.insts[n].shape)) for n in made.entry.outputs()
               if n in made.entry.insts}
    inputs = [without_layout_text(str(i.shape)) for i in reads.entry.insts.values() if i.opcode == "parameter"]
    tensors = [s for s in inputs if not _scalar(s)]
    if not tensors:  # round 10: a check of the step's loss (`torch.isfinite(loss).item()`): scalars only, one of
        return any(s in outputs for s in inputs)  # them an output (the others Python numbers torch_xla made data)
    return all(s in outputs for s in tensors)


def _user_frames(frames) -> list:
    """The stack's frames in the user's code, innermost first: the loop's line that called a step function holding
    the sync is where the sync happened, in the loop's own function."""
    return [f for f in frames if not f.is_library]


def _canonical(summary):
    """The canonical module of a graph summary, or of the compiled graph a cache hit repeats."""
    cm = getattr(summary, "_canonical", None)
    if cm is None:
        cm = getattr(getattr(summary, "_first", None), "_canonical", None)
    return cm


def _scalar(shape: str) -> bool:
    return shape.endswith("[]") or "[" not in shape


def made_after_sync(r) -> str:
    """The step's sync line, when every user line of the outputs this graph adds comes below it in the same file and
    function (a loop body runs top to bottom): a validation or a metric computed after the sync is left pending and
    runs inside the next step's graph (review 8, T2: ``val_hits.append(...)`` under the sync, every third step). ""
    when a line or the sync is unknown, or some output is made above the sync (a metric kept inside the step)."""
    frames = r.graph.record.frames or ()
    sync_at = r.graph.trigger
    if sync_at is None or sync_at.line is None or not any(is_sync_frame(f) for f in frames):
        return ""
    added, removed = outputs_added_removed(r.diff) if r.diff is not None else ([], [])
    lines = [f for c in r.causes if c.kind == "outputs" for f in c.locations if not f.is_library and f.line is not None]
    if not added or removed or not lines:
        return ""
    for f in lines:
        if f.file != sync_at.file or (f.function and sync_at.function and f.function != sync_at.function):
            return ""
        if f.line <= sync_at.line:
            return ""
    return sync_at.short()
