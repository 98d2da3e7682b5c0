"""Multi-rank reports: how the ranks were told apart, where they diverge, then each distinct rank's own report.

Ranks with the same graph sequence are printed once ("rank 0, and ranks 1, 3 with the same graphs"): on a pod of
256 identical ranks the reader sees one report, not 256.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlodiff.explain.ranks import position_word
from hlodiff.render.story_view import render_graph_causes
from hlodiff.render.terminal import Hanging, render_causes, render_inventory
from hlodiff.render.explain_recompile import render_explanation
from hlodiff.render.plural import counted


def render_job(console: Console, job, *, verbose: bool = False) -> None:
    """explain-recompile over ranks: job verdict, rank list, divergence section, each distinct rank's report."""
    _head(console, job)
    _divergence(console, job)
    for result in job.results:
        rank = result.spec.rank
        if rank in job.same_as:
            continue
        console.print()
        console.print(Text(_group_title(job, rank), style="bold underline"), highlight=False)
        render_explanation(console, result.explanation, verbose=verbose)


def render_job_inventory(console: Console, job) -> None:
    """inspect over ranks: the same head and divergence lines, then one graph table per rank."""
    _head(console, job)
    _divergence(console, job)
    for result in job.results:
        console.print()
        console.print(Text(f"rank {result.spec.rank}", style="bold underline"), highlight=False)
        render_inventory(console, result.graphs)


def _head(console: Console, job) -> None:
    console.print(Text(job.summary, style="bold"), highlight=False)
    for result in job.results:
        spec = result.spec
        entry = job.rank_json(result)
        if spec.rank in job.same_as:
            what = f"same graphs as rank {job.same_as[spec.rank]}"
        elif result.explanation is not None:
            what = result.explanation.summary
        else:
            what = f"{counted(entry['graphs'], 'graph')}, {counted(entry['compilations'], 'compilation')}"
        console.print(Hanging(Text(f"  rank {spec.rank:<3} {what}"), 11), highlight=False)
        console.print(Hanging(Text(f"  {'':<8} {', '.join(spec.paths)} ({spec.identified_by})", style="dim"), 11),
                      highlight=False)
    for note in job.notes:
        console.print(Text(f"note: {note}", style="yellow"), highlight=False)


def _divergence(console: Console, job) -> None:
    for d in job.divergence:
        console.print()
        head = Text(f"{position_word(d.majority or d.graph)} {d.step}: ", style="bold")
        head.append(d.summary)
        console.print(head, highlight=False)
        if d.majority_ranks:
            word = "reference" if len(job.results) == 2 else "majority"  # no majority with 2 ranks (review F7)
            console.print(Hanging(Text(f"  {'':<10}{word}: {_ranks(d.majority_ranks)}", style="dim"), 22),
                          highlight=False)
        for rank, ref in d.rank_refs[1:]:
            console.print(Hanging(Text(f"  {'':<10}rank {rank}: {ref}", style="dim"), 12), highlight=False)
        render_graph_causes(console, d, render_causes, {})


def _group_title(job, rank: int) -> str:
    twins = [r for r, owner in sorted(job.same_as.items()) if owner == rank]
    if not twins:
        return f"rank {rank}"
    return f"rank {rank}, and {_ranks(twins)} with the same graphs"


def _ranks(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(str(r) for r in ranks)


def job_json(job) -> dict:
    """The explain/inspect document body for several ranks: the job's keys, then every rank's graphs, families,
    patterns and recompilations in rank order, each tagged with its ``rank`` (the single-run keys keep their
    meaning: they list everything)."""
    body = {"summary": job.summary, **job.to_json()}
    explained = [r for r in job.results if r.explanation is not None]
    if explained:
        parts = [(r.spec.rank, r.explanation.to_json()) for r in explained]
        for key in ("graphs", "families", "recompilations"):
            body[key] = [{"rank": rank, **item} for rank, doc in parts for item in doc[key]]
        body["patterns"] = [f"rank {rank}: {p}" for rank, doc in parts for p in doc["patterns"]]
        body["hints"] = list(dict.fromkeys(h for _, doc in parts for h in doc["hints"]))
        # the job's headline: the headline of the rank worth reading first (the first that diverged, else the
        # first that recompiled), tagged with its rank. A rank that diverged by running *fewer* graphs (steady,
        # no headline of its own) leaves the story to the rank whose extra graphs made the difference: the first
        # rank with a headline (round 5, rank0_item_log: with 2 ranks and no majority, the steady rank 1 was
        # "diverged" and the job's headline was null while rank 0's step was split by an early read)
        lead = job.html_rank().spec.rank
        head = next((doc.get("headline") for rank, doc in parts if rank == lead), None)
        if not head:
            lead, head = next(((rank, doc["headline"]) for rank, doc in parts if doc.get("headline")), (lead, None))
        if not head:
            lead, head = _divergence_headline(job)
        body["headline"] = {"rank": lead, **head} if head else None
    else:
        body["graphs"] = [{"rank": r.spec.rank, **g.to_json()} for r in job.results for g in r.graphs]
    return body


def _divergence_headline(job) -> tuple[int | None, dict | None]:
    """No rank recompiled, yet ranks ran different graphs at one step that hold collectives (review 9, x2: each rank
    compiled its own graph once and the job died in the all-reduce): the job's finding is that divergence, so its
    first cause heads the document, tagged with the step, as the terminal's first line tells it. A divergence
    without a collective (``no_collective``) is told but heads nothing: no rank waits on it."""
    for d in job.divergence:
        if d.causes and not d.no_collective and d.ranks:
            cause = d.causes[0]
            where = cause.locations[0] if cause.locations else None
            return d.ranks[0], {"graph": d.graph.ref if d.graph else None, "kind": cause.kind,
                                "location": where.to_json() if where else None, "fix": cause.fix,
                                "divergence_step": d.step}
    return None, None


def job_warnings(job) -> list:
    """Every rank's warnings, in rank order, each prefixed with its rank."""
    from hlodiff.errors import InputWarning

    return [InputWarning(f"rank {r.spec.rank}: {w.message}", w.path, w.line) for r in job.results for w in r.warnings]


def job_body(job, kind: str, extra: dict | None = None) -> dict:
    """The ``--json`` document body of ``inspect`` or ``explain`` over several ranks; an ``explain`` one names
    every rank's inputs (after ``extra``: ``record``'s command and status)."""
    if kind != "explain":
        return job_json(job)
    results = job.results
    inputs = {"dumps": [p for r in results for p in r.inputs.paths],
              "tensors_reports": [p for r in results for p in r.inputs.tensors_reports],
              "debug_logs": list(dict.fromkeys(p for r in results for p in r.inputs.debug_logs)),
              "jax_logs": [p for r in results for p in r.inputs.jax_logs]}
    return {**(extra or {}), "inputs": inputs, **job_json(job)}
