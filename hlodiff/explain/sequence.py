"""``hlodiff compare DUMP``: each graph of a dump against the previous distinct graph of its own family.

A run interleaves unrelated graphs (a training step, an eval step, JAX's small ``jit_broadcast_in_dim`` helpers);
comparing each with whatever ran just before it reports differences between things that were never meant to be
alike. Graphs are grouped the way ``explain-recompile`` groups them (the sync line, or the jitted function) and
compared within the group only.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.diff import ModuleDiff, diff_canonical
from hlodiff.explain.families import group, is_partial
from hlodiff.explain.inventory import GraphSummary


@dataclass(slots=True)
class Step:
    """One comparison in a sequence: ``right`` against ``left``, the last graph of its family with another
    fingerprint."""

    left: GraphSummary
    right: GraphSummary
    diff: ModuleDiff


def consecutive(summaries: list[GraphSummary]) -> list[Step]:
    """Compare each graph whose normalized form differs from the previous graph of its family and was not seen
    earlier in it, in run order.

    Graphs equal after normalization to their predecessor (cache hits, or a retrace with other numbering) are
    skipped: there is nothing to explain between them, unless both are XLA dump modules (each one a compilation)
    whose headers differ (donation, layout, partitions): that is then the only difference reported.
    ``summaries`` must come from ``summarize(keep=True)``.
    """
    partial = {i for i, g in enumerate(summaries) if is_partial(g)}
    position = {id(g): i for i, g in enumerate(summaries)}
    steps: list[Step] = []
    for family in group(summaries, partial):
        previous: GraphSummary | None = None
        seen: set = set()
        for summary in family.members:
            again = summary.fingerprint in seen and not _recompiled(summary)
            seen.add(summary.fingerprint)
            if again:  # a graph of the family already compared (A,B,A,B: the third is B's cache hit of A): nothing
                previous = summary  # new to explain (review F7: 16 graphs of 2 distinct ones gave 15 blocks)
                continue
            if previous is not None and (summary.fingerprint != previous.fingerprint or _recompiled(summary)):
                diff = diff_canonical(previous._canonical, summary._canonical)
                if not diff.equal or diff.causes:
                    steps.append(Step(previous, summary, diff))
            previous = summary
    steps.sort(key=lambda s: position[id(s.right)])
    return steps


def _recompiled(summary: GraphSummary) -> bool:
    return summary.record.kind == "xla_dump" and summary.compiled
