"""``explain-recompile`` (and ``record`` at the command's exit) from paths to a printed report and an exit
status: one run, or several ranks' dumps rank by rank; the HTML report and Model Explorer on request.

The analysis is :mod:`hlodiff.api`'s and :mod:`hlodiff.jobs`'s, the words :mod:`hlodiff.render`'s; here they are
called in the order a command needs them.
"""

from __future__ import annotations

import functools
import sys

import click

from hlodiff.cli_shell import show


def explain_paths(paths: list[str], *, tensors_report: str | None = None, debug_log: str | None = None,
                  jax_log: str | None = None, dynamo_log: str | None = None, jobs: int | None = None,
                  scheduler: str | None = None, **how) -> None:
    """Explain one run, or several ranks' dumps rank by rank; ``how``: the keywords of :func:`_explain`."""
    from hlodiff.api import job_specs

    specs = job_specs(paths)
    if specs is None:
        from hlodiff.dumps.run_folder import discover

        _explain(discover(paths, tensors_report, debug_log, jax_log, dynamo_log), given=paths, **how)
    if how.pop("explorer", None):
        raise click.UsageError("--model-explorer and --model-explorer-out take one rank's dump")
    _explain_job(specs, tensors_report=tensors_report, debug_log=debug_log, jax_log=jax_log, jobs=jobs,
                 scheduler=scheduler, dynamo_log=dynamo_log, **how)


def _explain_job(specs, *, tensors_report, debug_log, jax_log, as_json: bool, html_path: str | None,
                 verbose: bool = False, stage: str | None = None, jobs: int | None = None,
                 scheduler: str | None = None, extra: dict | None = None, exit_status: int | None = None,
                 warmup: int | None = None, dynamo_log: str | None = None) -> None:
    """Several ranks: each explained on its own (in parallel), the divergence section, exit 1 when a rank
    recompiled or diverged (``exit_status``, when given, instead: ``record``). ``--html`` writes the report of
    the first diverging rank (else the first that recompiled, else the reference rank)."""
    from hlodiff.api import job_exit_code
    from hlodiff.api_pages import rank_page
    from hlodiff.jobs import explain_job
    from hlodiff.render.ranks import job_body, job_warnings, render_job
    from hlodiff.render.record import exit_note
    from hlodiff.render.reports import job_inputs, write_job_html
    from hlodiff.render.write import check_output

    if html_path:
        check_output(html_path, job_inputs(specs, tensors_report, debug_log, jax_log), "HTML report")
    job = explain_job(specs, stage=stage, tensors_report=tensors_report, debug_log=debug_log, jax_log=jax_log,
                      jobs=jobs, scheduler=scheduler, dynamo_log=dynamo_log)
    if html_path:
        write_job_html(html_path, rank_page(job, stage), job_inputs(specs, tensors_report, debug_log, jax_log))
    show(as_json, "explain", lambda: job_body(job, "explain", extra), job_warnings(job),
          lambda console: render_job(console, job, verbose=verbose),
          stream=sys.stderr if exit_status is not None else None)
    if exit_status is not None:
        click.echo(exit_note(exit_status, ranks=[(r.spec.rank, len(r.explanation.recompilations))
                                                 for r in job.results if r.explanation is not None]), err=True)
        sys.exit(exit_status)
    sys.exit(job_exit_code(job, warmup))


def _explain(inputs, *, as_json: bool, html_path: str | None, verbose: bool = False, stage: str | None = None,
             extra: dict | None = None, given: list[str] | None = None, exit_status: int | None = None,
             warmup: int | None = None, explorer: tuple | None = None) -> None:
    """Explain a run and print it (terminal or JSON, plus HTML on request); exit 1 when something unexpected
    recompiled, or a compiled module could not be read (``exit_status``, when given, is the exit status instead
    and the verdict goes to stderr: ``record``)."""
    from hlodiff.api import explain_inputs
    from hlodiff.api_pages import page_sources, run_page_costs
    from hlodiff.render.explain_recompile import render_explanation
    from hlodiff.render.reports import render_warmup_verdict, run_inputs, write_run_html
    from hlodiff.render.write import check_output

    read = run_inputs(inputs, given or [])
    if html_path:
        check_output(html_path, read, "HTML report")  # before the analysis, which can take minutes
    if explorer and explorer[0]:
        from hlodiff.render.model_explorer_serve import model_explorer_module

        model_explorer_module()  # the extra is missing: say so before the analysis
    result = explain_inputs(inputs, stage=stage, warmup=warmup)
    # The document only for JSON or HTML: one dict per cache hit would double a 40,000-graph run's memory.
    body = {**(extra or {}), **result.to_json()} if as_json or html_path else {}
    if html_path:
        write_run_html(html_path, result, body, read, run_page_costs(result), page_sources(body))
    def render(console) -> None:
        render_explanation(console, result.explanation, verbose=verbose)
        render_warmup_verdict(console, result)

    show(as_json, "explain", body, result.warnings, render, stream=sys.stderr if exit_status is not None else None)
    if explorer:  # (serve, folder, graph number): one recompilation and its closest earlier graph
        from hlodiff.render.model_explorer_serve import show_recompilation

        show_recompilation(result.explanation, explorer[2], serve_it=explorer[0], out_dir=explorer[1], read=read,
                           echo=functools.partial(click.echo, err=True))
    if exit_status is not None:
        from hlodiff.render.record import exit_note

        # the summary's count: programs loaded from a persistent cache and eager ops are no recompilations (review
        # 17, F3: "0 recompilations; nothing compiled" above "hlodiff: 3 recompilations (1 unexpected)")
        counts = result.explanation.counts
        told = counts.recompilations if counts is not None else len(result.explanation.recompilations)
        click.echo(exit_note(exit_status, told, len(result.unexpected),
                             result.dynamo_counts, follow_dynamo=result.follow_dynamo), err=True)
        sys.exit(exit_status)
    sys.exit(result.exit_code)
