"""One step graph that repeats the other run's work: a loop traced into the graph ran more times in one run.

torch_xla traces everything between two syncs into one graph, so a Python loop inside the step (micro-batches
accumulated before one optimizer step, an unrolled inner loop, several augmented views) is unrolled into it: with
4 micro-batches the graph holds four forward/backward passes and takes four batches where a run with 2 held two
(observed: round 11's runs11_torch_microbatches, ACCUM=2 then 4: inputs f32[4,16] and f32[4,4] twice, then four
times; 177 then 349 instructions). Between two steps of one run the graph diff calls the added inputs "device data
on some steps"; between two runs the count is a setting of the run.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference

REPEATED_WORK = "repeated work"
"""``KeyDifference.name`` of :func:`repeated_work` (``source`` ``"hlo"``)."""

MIN_GROWTH = 1.5
"""The larger graph holds at least this many times the smaller one's instructions: whole passes repeated, not an
input fed instead of a constant (``XLA_NO_SPECIAL_SCALARS``: a few more parameters, as many instructions)."""


def repeated_work(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("hlo", "repeated work", A's inputs and size, B's)]`` when one program takes, beside every
    array input of the other, more array inputs (rank 1 or more) of shapes the other already takes, and holds at
    least :data:`MIN_GROWTH` times its instructions; else empty (an input of a new shape, inputs on both sides, or
    as much work: the graph diff says it)."""
    if a is None or b is None:
        return []
    shapes = [_array_inputs(r) for r in (a, b)]
    sizes = [_instruction_count(r) for r in (a, b)]
    small, big = (0, 1) if sum(shapes[0].values()) < sum(shapes[1].values()) else (1, 0)
    added = shapes[big] - shapes[small]
    if not added or shapes[small] - shapes[big] or not set(added) <= set(shapes[small]):
        return []
    if sizes[big] < MIN_GROWTH * sizes[small]:
        return []
    return [KeyDifference("hlo", REPEATED_WORK, *(_said(shapes[i], sizes[i]) for i in (0, 1)))]


def _said(shapes: Counter, size: int) -> str:
    """``f32[4,16] x2, f32[4,4] x2; 177 instructions``: the repeated inputs (shapes taken more than once) and size."""
    repeated = ", ".join(f"{s} x{n}" for s, n in sorted(shapes.items()) if n > 1)
    return f"{repeated or 'no input twice'}; {size} instructions"


def _array_inputs(rec: GraphRecord) -> Counter:
    entry = next((c for c in rec.module().computations if c.is_entry), None)
    if entry is None:
        return Counter()
    return Counter(str(i.shape).partition("{")[0] for i in entry.instructions
                   if i.opcode == "parameter" and "[]" not in str(i.shape) and "[" in str(i.shape))


def _instruction_count(rec: GraphRecord) -> int:
    return sum(len(c.instructions) for c in rec.module().computations)
