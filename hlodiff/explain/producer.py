"""Which framework made a graph (``torch_xla`` or ``jax``), told from how it was dumped and named.

Its own module because fixes (:mod:`hlodiff.explain.fix_context`), the evidence they read
(:mod:`hlodiff.explain.family_values`) and the train/eval rule (:mod:`hlodiff.explain.modes`) all ask it, and
fix_context imports the other two: kept there, it tied them in an import circle.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import TRACED_KINDS
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.producer import producer_from_name, producer_of


def producer(graph: GraphSummary) -> str | None:
    """``torch_xla`` or ``jax`` from how the graph was dumped and named; None when unknown."""
    record = graph.record
    if record.kind in TRACED_KINDS:
        return "torch_xla"
    found = producer_from_name(graph.name or record.module_name or "")
    if found is None and graph._canonical is not None:
        found = producer_of(graph._canonical.module)
    return found
