"""Live-tensor reports joined to the graphs of a run: which report describes which execution.

The reading and the matching live in :mod:`hlodiff.dumps.report_alignment` (reached through the run's evidence,
:meth:`hlodiff.dumps.evidence.Run.align_reports`); this module only turns the run's
graph summaries into the output shapes the matcher checks against (a cache hit has the outputs of the graph that
compiled its key) and keeps the reports of the graphs an explanation looks at.
"""

from __future__ import annotations

from typing import Sequence

from hlodiff.dumps.evidence import Run
from hlodiff.dumps.report_alignment import Alignment, GraphOutputs, shape_key
from hlodiff.dumps.tensors_report import SyncReport
from hlodiff.errors import InputWarning
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.later_lines import lineless_hits


def aligned_reports(run: Run, graphs: Sequence[GraphSummary],
                    warnings: list[InputWarning] | None) -> tuple[dict, dict[tuple[str, int], Alignment]]:
    """``(reports, alignments)``: reports keyed like ``explain_records`` expects (dump path, entry index) for the
    compiled graphs whose every output has its tensor, and every alignment kept for those graphs."""
    dumps = _dumps(graphs)
    wanted = {(g.record.source, g.record.index) for g in graphs if g.compiled} | lineless_hits(graphs)
    alignments = run.align_reports(dumps, wanted, warnings)
    reports: dict[tuple[str, int], SyncReport] = {}
    for key, alignment in alignments.items():
        if alignment.certain and alignment.outputs == tuple(range(len(alignment.outputs))):
            reports[key] = alignment.report
    return reports, alignments


def _dumps(graphs: Sequence[GraphSummary]) -> list[tuple[str, list[GraphOutputs]]]:
    """Per dump (in the order given), its executions with their output shapes."""
    by_ref = {g.ref: g for g in graphs}
    dumps: dict[str, list[GraphOutputs]] = {}
    for g in graphs:
        module = g._module or getattr(by_ref.get(g.first_ref), "_module", None)
        shapes = None
        if module is not None:
            root = module.entry.root.shape
            outs = root.tuple_shapes if root.is_tuple else (root,)
            shapes = tuple(shape_key(str(s.without_layout())) for s in outs)
        dumps.setdefault(g.record.source, []).append(GraphOutputs((g.record.source, g.record.index), shapes))
    return list(dumps.items())
