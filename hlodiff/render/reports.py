"""A command's result shown: the terminal report or the HTML file, for the results of :mod:`hlodiff.api`.

``cli.py`` calls one entry point of :mod:`hlodiff.api` and then one function here (or in :mod:`.terminal`,
:mod:`.cost`, :mod:`.ranks`); the ``--json`` documents are the results' ``to_json`` bodies wrapped by
:func:`hlodiff.render.json_out.document`. The HTML writers take the body the ``--json`` document is made of, so a
command that prints both computes it once.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Iterator

from hlodiff.errors import printable
from hlodiff.render import json_out
from hlodiff.render.write import Inputs
from hlodiff.render.plural import counted

if TYPE_CHECKING:  # rich is imported where a report is drawn: a --json run never loads it
    from rich.console import Console


def stdout_console(stream=None) -> Console:
    """On a terminal, lines wrap at its width (continuations keep their indent); piped or redirected, a line of the
    report stays one line (grep and diff see whole causes), and only tables are laid out, at $COLUMNS or 120."""
    from hlodiff.render.terminal import SafeConsole

    stream = stream or sys.stdout
    width = int(os.environ.get("COLUMNS", "0") or 0) or None
    tty = stream.isatty()
    return SafeConsole(file=stream, width=width if width else (None if tty else 120), highlight=False,
                       soft_wrap=not tty)


def render_comparison(console: Console, result, *, verbose: bool = False) -> None:
    """``compare A B``: the diff, then what it costs when that was asked for."""
    from hlodiff.render.terminal import render_diff

    render_diff(console, result.diff, result.left.ref, result.right.ref, verbose=verbose)
    if result.cost is not None:
        from hlodiff.render.cost import render_cost_delta

        render_cost_delta(console, result.cost)


def render_sequence(console: Console, sequence, *, verbose: bool = False) -> None:
    """``compare DUMP``: how many graphs and changes, then each change's diff."""
    from hlodiff.render.terminal import render_diff

    steps = sequence.steps
    console.print(f"{counted(sequence.graphs, 'graph')}, {counted(len(steps), 'change')} "
                  f"(each new graph against the previous distinct graph of its family)", highlight=False)
    for step in steps:
        console.print()
        render_diff(console, step.diff, step.left.ref, step.right.ref, verbose=verbose)


def fingerprint_lines(prints, *, show_text: bool = False) -> Iterator[str]:
    """``fingerprint``: ``FINGERPRINT  REF`` per graph, or (``--text``) each normalized module under its ref."""
    from hlodiff.graph import normalized_text

    for p in prints:
        if show_text:
            yield printable(f"// {p.record.ref}\n{normalized_text(p.canonical)}", keep_lines=True)
        else:
            yield f"{p.canonical.fingerprint}  {printable(p.record.ref)}"


def write_compare_html(path: str, result, body: dict, refs: list[str], sources) -> None:
    """``compare A B --html``: the two graphs side by side, from the ``compare`` document; ``sources``: the lines it
    cites (:func:`hlodiff.api_pages.page_sources`)."""
    from hlodiff.render.html import Pair, render_compare, write_html

    write_html(path, render_compare(json_out.document("compare", body, result.warnings),
                                    Pair(result.left_canonical, result.right_canonical, result.diff.computations),
                                    sources=sources),
               Inputs.of(refs))


def write_sequence_html(path: str, sequence, body: dict, refs: list[str], sources) -> None:
    """``compare DUMP --html``: one section per change, each with its two graphs where both were kept."""
    from hlodiff.render.html import Pair, render_sequence as sequence_page, write_html

    pairs = [Pair(s.left._canonical, s.right._canonical, s.diff.computations)
             if s.left._canonical and s.right._canonical else None for s in sequence.steps]
    write_html(path, sequence_page(json_out.document("compare-sequence", body, sequence.warnings), pairs,
                                   sources=sources),
               Inputs.of(refs))


def run_inputs(inputs, given: list[str] = ()) -> Inputs:
    """Everything an explanation reads (the paths given, the dumps, reports and logs found beside them): no
    report may be written over one of them."""
    return Inputs.of([*given, *inputs.paths, *inputs.tensors_reports, *inputs.debug_logs, *inputs.jax_logs])


def write_run_html(path: str, result, body: dict, read: Inputs, costs, sources) -> None:
    """``explain-recompile --html``: the run report, with each compiled graph's cost (``costs``:
    :func:`hlodiff.api_pages.run_page_costs`; compile seconds from the logs given or found beside the dumps) and the
    lines it cites (``sources``). A graph whose cost cannot be computed adds a warning."""
    from hlodiff.render.html import explanation_cost, explanation_pairs, render_run, write_html

    explanation = result.explanation
    page = render_run(json_out.document("explain", body, result.warnings), explanation_pairs(explanation),
                      explanation_cost(explanation, costs, result.warnings), sources=sources)
    write_html(path, page, read)


def job_inputs(specs, *side: str | None) -> Inputs:
    """Every rank's dumps and the side files given (``None`` for one not given)."""
    return Inputs.of([p for spec in specs for p in spec.paths] + [p for p in side if p])


def write_job_html(path: str, page, read: Inputs) -> None:
    """``explain-recompile --html`` over ranks: the report of the rank worth a page, with the ranks and their
    divergence (``page``: :func:`hlodiff.api_pages.rank_page`)."""
    from hlodiff.render.html import explanation_cost, explanation_pairs, render_run, write_html

    doc = json_out.document("explain", page.body)
    write_html(path, render_run(doc, explanation_pairs(page.explanation),
                                explanation_cost(page.explanation, page.costs), sources=page.sources), read)


def render_warmup_verdict(console: Console, explained) -> None:
    """With ``--warmup N``, the last line says what the exit status says: how many recompilations fall after the
    first N steps (unexpected) and how many are expected, which the report above does not tell apart."""
    if explained.warmup is None:
        return
    n, unexpected = len(explained.explanation.recompilations), len(explained.unexpected)
    head = (f"--warmup {explained.warmup}: "
            + (counted(unexpected, 'unexpected recompilation') if unexpected
               else "no unexpected recompilation") + f" after the first {counted(explained.warmup, 'step')}")
    expected = n - unexpected
    tail = f"; {expected} expected (warm-up, setup or JAX eager ops)" if expected else ""
    console.print()
    console.print(head + tail, highlight=False)


def write_cost_html(path: str, run, warnings: list, paths: list[str]) -> None:  # paths: every input named
    """``cost --html``: the step as graphs with the bytes on the edges between them, the single-graph
    alternative beside, every graph's figures (:mod:`hlodiff.render.html.pipeline_view`)."""
    from hlodiff.render.html import write_html
    from hlodiff.render.html.pipeline_view import render_cost_page

    from hlodiff.render.cost_headline import cost_document

    write_html(path, render_cost_page(json_out.document("cost", cost_document(run), warnings)), Inputs.of(paths))

