"""``hlodiff compare DUMP``: each graph of a dump against the previous distinct one."""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.diff import ModuleDiff, diff_canonical
from hlodiff.explain.inventory import GraphSummary


@dataclass(slots=True)
class Step:
    """One comparison in a sequence: ``right`` against ``left``, the last graph with another fingerprint."""

    left: GraphSummary
    right: GraphSummary
    diff: ModuleDiff


def consecutive(summaries: list[GraphSummary]) -> list[Step]:
    """Compare each graph whose normalized form differs from the graph before it.

    Graphs equal after normalization to their predecessor (cache hits, or a retrace with other numbering) are
    skipped: there is nothing to explain between them. ``summaries`` must come from ``summarize(keep=True)``.
    """
    steps: list[Step] = []
    previous: GraphSummary | None = None
    for summary in summaries:
        if previous is not None and summary.fingerprint != previous.fingerprint:
            steps.append(Step(previous, summary, diff_canonical(previous._canonical, summary._canonical)))
        previous = summary
    return steps
