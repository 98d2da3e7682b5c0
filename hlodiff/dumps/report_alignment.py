"""Which graph does each live-tensor report describe?

A report printed before a sync lists the tensors the coming execution turns into outputs: the tensors with pending
IR, in id order, one output each. Reports printed by users carry no sync number, and not every execution has one
(a ``.item()`` or ``print(t)`` executes a graph without the user printing a report first). So reports are matched
to executions in order, and each match is *checked*: the report's pending tensors must have the shapes of the
graph's outputs, in order — all of them (threshold 0), or a subsequence of them when a threshold hid small tensors.

Alignment streams over the reports (a multi-GB log is never held) and keeps only the matches the caller asks for.
It says how sure it is: ``certain`` is False when no graph near the expected position has those outputs and the
report was placed by order alone, or when a subsequence match could place the tensors in more than one way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from hlodiff.dumps.tensors_report import LiveTensor, SyncReport, iter_reports
from hlodiff.errors import InputWarning

LOOKAHEAD = 8
"""How many executions a report may skip (graphs run without a report printed before them, e.g. ``.item()``)."""

_LAYOUT_RE = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True, slots=True)
class GraphOutputs:
    """One execution of the run, as the aligner needs it: its key and its output shapes (layouts dropped)."""

    key: tuple[str, int]
    shapes: tuple[str, ...] | None  # None: unknown (the graph could not be read)


@dataclass(frozen=True, slots=True)
class Alignment:
    """A report matched to the execution it describes.

    ``outputs[i]`` is the output index fed by the report's i-th pending tensor (see :meth:`SyncReport.pending`);
    empty when the shapes did not match and the report was placed by order only.
    """

    report: SyncReport
    key: tuple[str, int]
    how: str  # "sync header" | "order" | "order, after N executions without a report" | "order only" | "subset"
    certain: bool
    outputs: tuple[int, ...] = ()

    def tensor_for_output(self, output: int) -> LiveTensor | None:
        pending = self.report.pending()
        for i, out in enumerate(self.outputs):
            if out == output and i < len(pending):
                return pending[i]
        return None


def shape_key(text: str) -> str:
    """``f32[2,8]{1,0}`` -> ``f32[2,8]``: reports print layouts, HLO outputs may carry other ones."""
    return _LAYOUT_RE.sub("", text).replace(" ", "")


def align_reports(reports: Iterable[SyncReport], graphs: Sequence[GraphOutputs], *, path: str,
                  warnings: list[InputWarning] | None = None) -> Iterator[Alignment]:
    """Yield an :class:`Alignment` per report that describes one of ``graphs`` (given in execution order)."""
    position = {g.key[1]: i for i, g in enumerate(graphs)}
    state = _Stats()
    aligned: set[tuple[str, ...]] = set()  # output shapes of graphs already matched
    j = 0
    for report in reports:
        state.reports += 1
        if report.sync is not None:  # hlodiff's own header names the execution
            k = position.get(report.sync)
            if k is None:
                state.unplaced(report)
                continue
            found = _match(report, graphs[k])
            yield Alignment(report, graphs[k].key, "sync header", found is not None and found[1],
                            found[0] if found else ())
            j = k + 1
            continue
        if not report.pending():
            continue  # nothing pending: the sync that followed executed no graph
        placed = _place(report, graphs, j)
        if placed is None or (placed[0].how == "order only" and _repeats(report, aligned)):
            if not _repeats(report, aligned):
                state.unplaced(report)
            continue  # a cache hit of a graph already seen: an XLA dump folder holds compiled modules only
        alignment, j = placed
        if alignment.outputs and graphs[j - 1].shapes is not None:
            aligned.add(graphs[j - 1].shapes)
        if not alignment.certain:
            state.uncertain(report)
        yield alignment
    state.warn(path, warnings)


def _place(report: SyncReport, graphs: Sequence[GraphOutputs], j: int) -> tuple[Alignment, int] | None:
    for k in range(j, min(j + LOOKAHEAD + 1, len(graphs))):
        found = _match(report, graphs[k])
        if found is not None:
            outputs, unique, exact = found[0], found[1], len(found[0]) == len(graphs[k].shapes or ())
            how = "order" if k == j else f"order, after {k - j} executions without a report"
            if not exact:
                how += ", subset"
            return Alignment(report, graphs[k].key, how, unique, outputs), k + 1
    if j < len(graphs):
        return Alignment(report, graphs[j].key, "order only", False), j + 1
    return None


def _repeats(report: SyncReport, aligned: set[tuple[str, ...]]) -> bool:
    return any(_match(report, GraphOutputs(("", 0), shapes)) is not None for shapes in aligned)


def _match(report: SyncReport, graph: GraphOutputs) -> tuple[tuple[int, ...], bool] | None:
    """Output index per pending tensor, and whether that placement is the only one; None when they do not fit."""
    if graph.shapes is None:
        return None
    pending = [shape_key(t.shape_text) for t in report.pending()]
    if not pending:
        return None
    outputs = graph.shapes
    if pending == list(outputs):
        return tuple(range(len(outputs))), True
    left = _embed(pending, outputs)
    if left is None:
        return None
    right = _embed(pending[::-1], outputs[::-1])
    right_ids = tuple(len(outputs) - 1 - i for i in reversed(right)) if right is not None else ()
    return left, left == right_ids


def _embed(needles: list[str], hay: Sequence[str]) -> tuple[int, ...] | None:
    """Leftmost placement of ``needles`` as a subsequence of ``hay``."""
    out, i = [], 0
    for needle in needles:
        while i < len(hay) and hay[i] != needle:
            i += 1
        if i == len(hay):
            return None
        out.append(i)
        i += 1
    return tuple(out)


class _Stats:
    """Counts for one summary warning per file (a log of 10,000 steps must not print 10,000 warnings)."""

    def __init__(self):
        self.reports = 0
        self.unsure: list[int] = []
        self.left_over: list[int] = []

    def uncertain(self, report: SyncReport) -> None:
        self.unsure.append(report.line)

    def unplaced(self, report: SyncReport) -> None:
        self.left_over.append(report.line)

    def warn(self, path: str, warnings: list[InputWarning] | None) -> None:
        if warnings is None:
            return
        if self.unsure:
            warnings.append(InputWarning(
                f"{len(self.unsure)} of {self.reports} live-tensor reports fit no graph's outputs nearby (or fit "
                f"them more than one way): their tensors were not used; first here", path, self.unsure[0]))
        if self.left_over:
            warnings.append(InputWarning(
                f"{len(self.left_over)} live-tensor reports describe no graph of the dump (more reports than "
                f"executions: a report from another run?); first here", path, self.left_over[0]))


def align_files(report_paths: Sequence[str], dumps: Sequence[tuple[str, Sequence[GraphOutputs]]], *,
                wanted: set[tuple[str, int]] | None = None,
                warnings: list[InputWarning] | None = None) -> dict[tuple[str, int], Alignment]:
    """Alignments of every report file with the executions of its dump (report file *i* goes with dump *i*, the
    last dump takes any extra files), streaming; only keys in ``wanted`` are kept (None: all)."""
    found: dict[tuple[str, int], Alignment] = {}
    if not dumps:
        return found
    for i, report_path in enumerate(report_paths):
        _, graphs = dumps[min(i, len(dumps) - 1)]
        reports = iter_reports(report_path, warnings, ir="roots")
        for alignment in align_reports(reports, graphs, path=report_path, warnings=warnings):
            if wanted is None or alignment.key in wanted:
                found[alignment.key] = alignment
    return found
