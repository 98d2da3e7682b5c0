"""``inspect``, ``fingerprint``, ``cost`` and ``compare-runs`` from paths to a printed report: each reads through
one entry point of :mod:`hlodiff.api`, then prints the ``--json`` document or the terminal report.

:mod:`hlodiff.cli` declares the commands and calls these, as it calls :mod:`hlodiff.cli_compare` for ``compare``
and :mod:`hlodiff.cli_explain` for ``explain-recompile``; the words are :mod:`hlodiff.render`'s.
"""

from __future__ import annotations

import sys

import click

from hlodiff.cli_shell import print_json, show, warn
from hlodiff.errors import InputWarning


def inspect_report(paths: tuple[str, ...], *, as_json: bool, stage: str | None, jobs: int | None,
                   scheduler: str | None) -> None:
    """The graphs of one run, or of every rank when the paths name several."""
    from hlodiff.api import inspect_paths
    from hlodiff.render import terminal

    result = inspect_paths(list(paths), stage=stage, jobs=jobs, scheduler=scheduler)
    if result.job is not None:
        from hlodiff.render.ranks import job_body, job_warnings, render_job_inventory

        show(as_json, "inspect", lambda: job_body(result.job, "inspect"), job_warnings(result.job),
              lambda console: render_job_inventory(console, result.job))
    else:
        show(as_json, "inspect", result.to_json, result.warnings,
              lambda console: terminal.render_inventory(console, result.summaries))


def fingerprint_report(paths: tuple[str, ...], *, as_json: bool, show_text: bool, no_normalize: tuple[str, ...],
                       ignore_layouts: bool, stage: str | None) -> None:
    """Each graph's fingerprint (or its normalized text) under the normalization the options leave on."""
    from hlodiff.api import fingerprint_refs
    from hlodiff.graph import Normalization
    from hlodiff.render.reports import fingerprint_lines

    warnings: list[InputWarning] = []
    prints = fingerprint_refs(list(paths), options=Normalization.without(*no_normalize, ignore_layouts=ignore_layouts),
                              stage=stage, warnings=warnings)
    if as_json:
        print_json("fingerprint", {"graphs": [p.to_json() for p in prints]}, warnings)
        return
    warn(warnings)
    for line in fingerprint_lines(prints, show_text=show_text):
        click.echo(line)


def cost_report(paths: tuple[str, ...], *, debug_logs: tuple[str, ...], tensors_report: str | None,
                as_json: bool, stage: str | None, html_path: str | None) -> None:
    """The run's costs, and its HTML page first when asked."""
    from hlodiff.api import cost_paths

    warnings: list[InputWarning] = []
    run = cost_paths(list(paths), debug_logs=list(debug_logs), tensors_report=tensors_report, stage=stage,
                     warnings=warnings)
    from hlodiff.render.cost import render_cost

    if html_path:
        from hlodiff.render.reports import write_cost_html

        write_cost_html(html_path, run, warnings, [*paths, *debug_logs, *([tensors_report] if tensors_report else [])])
    from hlodiff.render.cost_headline import cost_document

    show(as_json, "cost", lambda: cost_document(run), warnings, lambda console: render_cost(console, run))


def compare_runs_report(run_a: str, run_b: str, *, cache: str | None, as_json: bool) -> None:
    """Run B's compilations against run A's cache, printed, and exit (0 all loaded, 1 one compiled again)."""
    from hlodiff.api import compare_runs_paths
    from hlodiff.render.across_runs import render

    warnings: list[InputWarning] = []
    result = compare_runs_paths(run_a, run_b, cache=cache, warnings=warnings)
    show(as_json, "compare-runs", result.to_json, warnings, lambda console: render(console, result.result))
    sys.exit(result.exit_code)
