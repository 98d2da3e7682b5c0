"""What an HTML report shows beyond the command's document, read for it: the user's source lines its document cites,
the compiled graphs' cost evidence (compile seconds, torch_xla's memory figures), and over ranks the page of the rank
worth one, explained again with its graphs kept.

Kept apart from :mod:`hlodiff.api`'s one entry point per command: only ``--html`` asks for these, and each reads
more than the command did (:func:`hlodiff.render.reports.write_run_html` and its siblings take what they return).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # explain/ and dumps/ are imported only when a page is written
    from hlodiff.api_results import Explained
    from hlodiff.dumps.cost_evidence import RunGraphsCost
    from hlodiff.dumps.page_source import SourceText
    from hlodiff.explain.explanation import RunExplanation
    from hlodiff.explain.ranks import JobExplanation


def page_sources(*docs: dict) -> "SourceText":
    """The user's source lines an HTML report made from the documents ``docs`` cites, read
    (:func:`hlodiff.dumps.page_source.page_source_text`)."""
    from hlodiff.dumps.page_source import page_source_text

    return page_source_text(*docs)


def page_costs(explanation: "RunExplanation", logs: list[str] = (),
               debug_logs: list[str] | None = None) -> "RunGraphsCost":
    """The cost evidence of an explained run's compiled graphs, for its HTML report: compile seconds from ``logs``,
    torch_xla's memory figures from ``debug_logs`` (default: the PT_XLA_DEBUG log beside each dump)."""
    from hlodiff.dumps.cost_evidence import run_graphs_cost

    graphs = explanation.graphs
    return run_graphs_cost([g.record for g in graphs], [g.compiled for g in graphs], logs, debug_logs)


def run_page_costs(result: Explained) -> "RunGraphsCost":
    """``explain-recompile --html``: each compiled graph's cost evidence, compile seconds from the logs given or
    found beside the dumps."""
    from hlodiff.dumps.compile_times import logs_beside

    inputs = result.inputs
    return page_costs(result.explanation, [*inputs.jax_logs, *logs_beside(inputs.paths)], inputs.debug_logs or None)


@dataclass(slots=True)
class RankPage:
    """``explain-recompile --html`` over ranks: the rank worth a page (the first that diverged, else the first that
    recompiled, else the reference) explained again, keeping the graphs the side-by-side views need; ``body`` its
    ``explain`` document with the ranks and their divergence."""

    body: dict
    explanation: "RunExplanation"
    costs: "RunGraphsCost"
    sources: "SourceText"


def rank_page(job: "JobExplanation", stage: str | None = None) -> RankPage:
    """The page of a job over ranks: the rank read and explained again (the job's tasks kept no graph), its costs'
    evidence and the source lines its document cites, for :func:`hlodiff.render.reports.write_job_html`."""
    from hlodiff.dumps.evidence import read_run
    from hlodiff.explain.recompile import explain_run

    shown = job.html_rank()
    again: list = []  # again, keeping the graphs the side-by-side views need
    explanation = explain_run(read_run(shown.inputs, again, stage=stage), again)
    ranks = {k: v for k, v in job.to_json().items() if k in ("ranks", "divergence")}
    body = {"inputs": {"dumps": shown.inputs.paths}, **explanation.to_json(),
            "summary": f"rank {shown.spec.rank}: {explanation.summary}", **ranks}
    return RankPage(body, explanation, page_costs(explanation), page_sources(body))
