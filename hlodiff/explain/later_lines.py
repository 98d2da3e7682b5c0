"""A graph that compiled while torch_xla recorded no source lines borrows the live-tensor report of a later
execution of the same graph that has them.

``hlodiff record --lines auto`` (:mod:`hlodiff.capture.lines`) switches torch_xla's frame capture off on steady
steps; a graph that first compiles then has op metadata but no lines, and the XLA dump writes a compiled graph
only once. The hook turns lines back on and takes reports while the graph may recur; the same graph hash means the
same traced program, so that later report names the tensors and lines of the compilation too.
"""

from __future__ import annotations

from typing import Sequence

from hlodiff.dumps.graph_record import TRACED_KINDS
from hlodiff.explain.locate import has_source_metadata


def borrow_later_reports(graphs: Sequence, reports: dict) -> dict:
    """``reports`` plus, for each compiled graph whose own report is missing or frameless, the report of the first
    later execution of its cache key whose tensors carry frames (keys as in ``reports``)."""
    if not reports:
        return reports
    wanting: dict[str, object] = {}
    borrowed = dict(reports)
    for graph in graphs:
        if graph.compiled:
            if not _has_frames(_report_of(graph.record, reports)):
                wanting[graph.cache_key] = graph
            continue
        first = wanting.get(graph.cache_key)
        if first is None:
            continue
        later = _report_of(graph.record, reports)
        if _has_frames(later):
            borrowed[(first.record.path, first.record.index)] = later
            borrowed[(first.record.source, first.record.index)] = later
            del wanting[graph.cache_key]
    return borrowed


def lineless_hits(graphs: Sequence) -> set[tuple[str, int]]:
    """(source, index) of the cache hits whose compiled graph has no source lines: their reports are worth
    aligning, since :func:`borrow_later_reports` may take their lines."""
    keys = {g.cache_key for g in graphs if g.compiled and g.record.kind in TRACED_KINDS and not _has_lines(g)}
    return {(g.record.source, g.record.index) for g in graphs if not g.compiled and g.cache_key in keys}


def _has_lines(graph) -> bool:
    return graph._canonical is None or has_source_metadata(graph)  # unread: nothing to borrow for


def _report_of(record, reports: dict):
    return reports.get((record.path, record.index)) or reports.get((record.source, record.index))


def _has_frames(report) -> bool:
    return report is not None and any(t.frames for t in report.tensors)
