"""The user's lines of a comparison's causes, found the way ``explain-recompile`` finds them: one helper for both.

A cause inside a library (``torch/optim/sgd.py:375``, the baked ``-lr`` of SGD's update) has no user frame in the
graph's own metadata; ``explain-recompile`` reaches the user's line through the live tensors the change feeds
(``hlodiff record`` keeps their whole stacks) and through operator wrappers. ``compare A#i A#j`` on the same run
folder printed "in library code" where ``explain-recompile`` on that folder said ``train.py:19`` (new-user review
19, F7). :func:`locate_lines` is the sequence both commands run; :func:`locate_pair` gives ``compare`` the run's
reports for its two graphs.
"""

from __future__ import annotations

from hlodiff.diff import ModuleDiff
from hlodiff.diff.model import Cause
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.locate import locate_from_stacks, locate_from_tensors
from hlodiff.explain.wrapper_lines import locate_through_wrappers


def locate_lines(causes: list[Cause], diff: ModuleDiff, left: GraphSummary, right: GraphSummary, reports: dict,
                 sources: SourceLines) -> None:
    """The graph's own stacks, then the live tensors the changes feed, then through operator wrappers."""
    locate_from_stacks(causes, right, sources)
    locate_from_tensors(causes, diff, left, right, reports)
    locate_through_wrappers(causes, right, left)


def locate_pair(diff: ModuleDiff, left_ref: str, right_ref: str, records, lcm, rcm) -> None:
    """Give ``compare``'s causes without a user line the lines :func:`locate_lines` finds, when both refs name
    graphs of one run whose folder holds live-tensor reports (a ``hlodiff record`` folder, a by-hand run folder).
    ``records``: the two graphs' records; ``lcm``/``rcm``: the comparison's canonical modules (its causes name
    their instructions)."""
    from hlodiff.dumps import split_ref
    from hlodiff.dumps.evidence import read_run
    from hlodiff.dumps.run_folder import discover
    from hlodiff.errors import HlodiffError
    from hlodiff.explain.inventory import summarize
    from hlodiff.explain.later_lines import borrow_later_reports
    from hlodiff.explain.live_tensors import aligned_reports

    if all(c.locations for c in diff.causes):
        return
    (path, i), (other, j) = split_ref(left_ref), split_ref(right_ref)
    if path != other or i is None or j is None:
        return
    quiet: list = []
    try:
        inputs = discover([path], None, None)
        if not inputs.tensors_reports:
            return
        run = read_run(inputs, quiet)
        graphs = summarize(run.records, keep=True, parse_hits=False, warnings=quiet, protos=run.protos())
    except HlodiffError:
        return
    by_key = {(g.record.source, g.record.index): g for g in graphs}
    left, right = (by_key.get((r.source, r.index)) for r in records)
    if left is None or right is None:
        return
    reports = {**run.reports, **aligned_reports(run, graphs, quiet)[0]}
    reports = borrow_later_reports(graphs, reports)
    left._canonical, right._canonical = lcm, rcm
    locate_lines(diff.causes, diff, left, right, reports, run.sources)
