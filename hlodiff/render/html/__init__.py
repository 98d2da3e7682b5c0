"""Self-contained HTML reports: a run (timeline, compiled graphs, each recompilation) and a comparison of two
graphs. One module per view; :mod:`.page` holds the shared shell. Views read the JSON documents the other
commands print, plus the canonical graphs for the side-by-side view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlodiff.dumps.page_source import SourceText
from hlodiff.render.story import AFTER_THE_STORY
from hlodiff.render.html.extras_view import cost_delta_section, cost_section, ranks_section
from hlodiff.render.html.page import esc, page
from hlodiff.render.html.recompile_view import Pair, causes_html, graphs_html
from hlodiff.render.html.run_view import graph_table, run_header, timeline, toc
from hlodiff.render.write import Inputs, write_text
from hlodiff.render.plural import counted

if TYPE_CHECKING:
    from hlodiff.dumps.cost_evidence import RunGraphsCost

__all__ = ["Pair", "explanation_cost", "explanation_pairs", "render_compare", "render_run", "render_sequence", "write_html"]


def explanation_pairs(explanation) -> dict[str, Pair]:
    """Recompiled graph ref -> (closest earlier, recompiled) canonical graphs, for the side-by-side views."""
    pairs: dict[str, Pair] = {}
    for r in explanation.recompilations:
        if r.closest is not None and r.closest._canonical is not None and r.graph._canonical is not None:
            pairs[r.graph.ref] = Pair(r.closest._canonical, r.graph._canonical,
                                      r.diff.computations if r.diff is not None else None)
    return pairs


def explanation_cost(explanation, evidence: "RunGraphsCost", warnings: list | None = None) -> dict:
    """``hlodiff.cost/1`` graphs for the run's compiled graphs (already parsed: no second read of a big dump),
    from ``evidence`` (:func:`hlodiff.dumps.cost_evidence.run_graphs_cost`: compile seconds where the logs have
    them, torch_xla's and XLA's memory figures). A graph whose cost cannot be computed is left out with a warning;
    the report itself does not depend on it."""
    from hlodiff.cost.run import record_cost
    from hlodiff.errors import HlodiffError, InputWarning

    graphs = explanation.graphs
    seconds = evidence.seconds
    costs = []
    for position, g in enumerate(graphs):
        if not g.compiled:
            continue
        try:
            cost = record_cost(evidence.graphs[position], g._module).to_json()
        except HlodiffError as err:
            if warnings is not None:
                warnings.append(InputWarning(f"cost of {g.ref} left out of the HTML report: {err.message}",
                                             path=err.path, line=err.line))
            continue
        if cost.get("compile_seconds") is None and position in seconds:
            cost["compile_seconds"] = seconds[position]
        costs.append(cost)
    return {"graphs": costs}


def render_run(doc: dict, pairs: dict[str, Pair], cost_doc: dict | None = None, *, sources: SourceText) -> str:
    """The run report from an ``hlodiff.explain/1`` document; ``sources``: the lines it cites
    (:func:`hlodiff.dumps.page_source.page_source_text`)."""
    graphs = {g["ref"]: g for g in doc.get("graphs") or []}
    extra = ([("cost", "cost")] if cost_doc and cost_doc.get("graphs") else []) + \
        ([("ranks", "ranks")] if doc.get("ranks") or doc.get("divergence") else [])
    body = [run_header(doc), toc(doc, extra), ranks_section(doc, sources), timeline(doc), graph_table(doc, cost_doc)]
    recs = doc.get("recompilations") or []
    if not recs:
        body.append("<p>Nothing recompiled: every family compiled once.</p>")
    from hlodiff.render.html.story_view import recompilation_sections

    eager = {f.get("label") for f in doc.get("families") or []
             if ((f.get("pattern") or {}).get("name") if isinstance(f.get("pattern"), dict) else None)
             in AFTER_THE_STORY}
    body.extend(recompilation_sections(doc, pairs, sources, graphs, last_families=eager))
    body.append(cost_section(cost_doc))
    return page("hlodiff: " + (doc.get("summary") or "run"), [b for b in body if b])


def render_compare(doc: dict, pair: Pair | None, *, sources: SourceText) -> str:
    """The recompilation view for two graphs, from an ``hlodiff.compare/1`` document."""
    left, right = doc.get("left_ref", "left"), doc.get("right_ref", "right")
    stats = doc.get("stats") or {}
    verdict = ("equal after normalization" if doc.get("equal")
               else counted(len(doc.get('causes') or []), 'difference'))
    body = [f"<h1>{esc(left)} → {esc(right)}</h1>", f"<p class='summary'>{esc(verdict)}</p>",
            f"<p class='dim small'>instructions {stats.get('left_instructions', 0):,} → "
            f"{stats.get('right_instructions', 0):,}; matched {stats.get('matched', 0):,} "
            f"({stats.get('changed', 0):,} changed), only left {stats.get('only_left', 0):,}, only right "
            f"{stats.get('only_right', 0):,}</p>",
            causes_html(doc.get("causes") or [], sources)]
    ignored = doc.get("ignored") or []
    if ignored:
        body.append("<p class='dim small'>normalization ignored: "
                    + esc("; ".join(i.get("summary", "") for i in ignored)) + "</p>")
    body.append(cost_delta_section(doc.get("cost")))
    body.append(ranks_section(doc, sources))
    body.append(graphs_html(pair, "cmp") if not doc.get("equal") else "")
    return page(f"hlodiff: {left} -> {right}", [b for b in body if b])


def render_sequence(doc: dict, pairs: list[Pair | None], *, sources: SourceText) -> str:
    """``compare DUMP``: each graph against the previous distinct one of its family, one section each."""
    comparisons = doc.get("comparisons") or []
    body = [f"<h1>{doc.get('graphs', 0)} graphs, {counted(len(comparisons), 'change')} "
            "(each new graph against the previous distinct graph of its family)</h1>"]
    if comparisons:
        body.append("<nav class='toc'>" + "".join(f"<a href='#change-{k}'>{esc(c.get('right_ref'))}</a>"
                                                  for k, c in enumerate(comparisons[:40])) + "</nav>")
    for k, (c, pair) in enumerate(zip(comparisons, pairs)):
        body.append(f"<section class='recompile' id='change-{k}'><h2>{esc(c.get('left_ref'))} → "
                    f"{esc(c.get('right_ref'))}</h2>")
        body.append(causes_html(c.get("causes") or [], sources))
        body.append(graphs_html(pair, f"change-{k}-"))
        body.append("</section>")
    return page(f"hlodiff: {len(comparisons)} changes", body)


def write_html(path: str, text: str, inputs: Inputs | None = None) -> None:
    """Write the report atomically, refusing a path that is one of the run's ``inputs``."""
    write_text(path, text, inputs or Inputs(), what="HTML report")
