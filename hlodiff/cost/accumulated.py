"""Gradients accumulated from one micro-batch's graph to the next: no finding, but the first line says so.

A loop that syncs after every micro-batch (gradient accumulation, pytorch/xla#1367 and #3593: the sync per
micro-batch is what keeps the graph, and its memory, that of one micro-batch) hands each next graph the
gradients summed so far, and the last micro-batch's graph, which also steps the optimizer, reads them too.
:mod:`hlodiff.cost.headline` leaves those hops out of ``held_across_graphs`` by design; the report still lists
them in its boundaries and its per-step held bytes. A first line saying "nothing held across a sync" above that
list contradicts it (new-user review 19, F1): this module gives the fact the first line names instead.
Typed facts; the words are the cost renderer's.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.cost.headline import ACCUMULATION, _accumulating, _added_hops, _dump, _hop
from hlodiff.cost.model import RunCost
from hlodiff.cost.roles import BACKWARD, OPTIMIZER

ACCUMULATED_PHASES = frozenset({(BACKWARD, BACKWARD), (BACKWARD, OPTIMIZER)})
"""(phase handing, phase reading) of a hop carrying accumulated gradients: micro-batch to micro-batch, and the
last micro-batch's graph that also steps the optimizer."""


@dataclass(frozen=True, slots=True)
class AccumulatedGradients:
    """The gradients an accumulating run hands from graph to graph: ``count`` tensors and ``bytes`` at the hop
    carrying the most, ``hops``: how many boundaries of the run carry them."""

    count: int
    bytes: int
    hops: int


def accumulated_gradients(run: RunCost) -> AccumulatedGradients | None:
    """The accumulated gradients crossing the run's boundaries, or None when the run accumulates none (no
    backward graph hands the next gradients the optimizer also reads, and no reading graph adds into them)."""
    by_ref = {g.ref: g for g in run.graphs}
    accumulating = _accumulating(run)
    added = _added_hops(run, by_ref)
    sizes = []
    for b in run.boundaries:
        if (b.source_phase, b.target_phase) not in ACCUMULATED_PHASES:
            continue
        if _dump(b.source) not in accumulating and _hop(by_ref, b) not in added:
            continue
        grads = [t for t in b.tensors if t.role == ACCUMULATION[0]]
        if grads:
            sizes.append((sum(t.bytes for t in grads), len(grads)))
    if not sizes:
        return None
    size, count = max(sizes)
    return AccumulatedGradients(count, size, len(sizes))
