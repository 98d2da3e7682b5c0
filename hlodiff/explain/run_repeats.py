"""One step graph that repeats the other run's work: a loop traced into the graph ran more times in one run.

torch_xla traces everything between two syncs into one graph, so a Python loop inside the step (micro-batches
accumulated before one optimizer step, an unrolled inner loop, several augmented views) is unrolled into it: with
4 micro-batches the graph holds four forward/backward passes and takes four batches where a run with 2 held two
(observed: round 11's runs11_torch_microbatches, ACCUM=2 then 4: inputs f32[4,16] and f32[4,4] twice, then four
times; 177 then 349 instructions). Between two steps of one run the graph diff calls the added inputs "device data
on some steps"; between two runs the count is a setting of the run.

A model whose depth is a setting (DEPTH=2 then 4 of Linear(16,16)) repeats inputs of known shapes too, and twice
the work, but what repeats are weights the step writes back (``buffer_donor``), not data: the loop story is told
only when inputs the step does not write back (the batches) repeat; else :data:`REPEATED_WEIGHTS` says what
repeated (new-user reviewer, thirteenth stop).
"""

from __future__ import annotations

from collections import Counter

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference

REPEATED_WORK = "repeated work"
"""``KeyDifference.name`` of :func:`repeated_work` (``source`` ``"hlo"``)."""

REPEATED_WEIGHTS = "repeated weights"
"""``KeyDifference.name`` when what repeats are only inputs the step writes back (weights: more layers of one
shape?), or when the header marks no input written back, so data and weights cannot be told apart."""

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
    name = REPEATED_WORK if _data_repeats(a, b) else REPEATED_WEIGHTS
    return [KeyDifference("hlo", name, *(_said(shapes[i], sizes[i]) for i in (0, 1)))]


def _data_repeats(a: GraphRecord, b: GraphRecord) -> bool:
    """The repeated inputs include data: inputs neither program writes back (not donated), in a pair of programs
    whose headers mark the inputs they write back (a training step's weights); without donors nothing tells the
    batches from the weights."""
    data = [_array_inputs(r, _donated(r)) for r in (a, b)]
    if any(not _donated(r) for r in (a, b)):
        return False
    small, big = sorted(data, key=lambda c: sum(c.values()))
    added = big - small
    return bool(added) and set(added) <= set(small)


def _donated(rec: GraphRecord) -> set[int]:
    from hlodiff.diff.header import donated_parameters

    return set(donated_parameters(rec.module()) or ())


def _said(shapes: Counter, size: int) -> str:
    """``f32[4,16] x2, f32[4,4] x2; 177 instructions``: the repeated inputs (shapes taken more than once) and size."""
    repeated = ", ".join(f"{s} x{n}" for s, n in sorted(shapes.items()) if n > 1)
    return f"{repeated or 'no input twice'}; {size} instructions"


def _array_inputs(rec: GraphRecord, leave_out: set[int] = frozenset()) -> Counter:
    """The entry's array parameters' shapes, counted; ``leave_out``: parameter numbers not to count."""
    entry = next((c for c in rec.module().computations if c.is_entry), None)
    if entry is None:
        return Counter()
    return Counter(str(i.shape).partition("{")[0] for i in entry.instructions
                   if i.opcode == "parameter" and "[]" not in str(i.shape) and "[" in str(i.shape)
                   and i.parameter_number not in leave_out)


def _instruction_count(rec: GraphRecord) -> int:
    return sum(len(c.instructions) for c in rec.module().computations)
