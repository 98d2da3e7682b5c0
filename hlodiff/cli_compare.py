"""``compare`` from references to a printed comparison and an exit status: two graphs (A B), or each graph of one
dump against the previous distinct one; the HTML report and Model Explorer on request.

The analysis is :mod:`hlodiff.api`'s, the words :mod:`hlodiff.render`'s; here they are called in the order the
command needs them (as :mod:`hlodiff.cli_explain` does for ``explain-recompile``).
"""

from __future__ import annotations

import functools
import sys

import click

from hlodiff.cli_shell import leave_quickly, show


def compare_refs(refs: tuple[str, ...], *, no_normalize: tuple[str, ...], ignore_layouts: bool, as_json: bool,
                 verbose: bool, with_cost: bool, html_path: str | None, stage: str | None, explorer: bool = False,
                 explorer_out: str | None = None) -> None:
    """Compare two graphs or a dump's sequence, print it and exit (0 equal, 1 different); ``--html`` implies the
    cost figures. The normalization is every pass but those ``no_normalize`` turns off."""
    from hlodiff import api, api_pages
    from hlodiff.graph import Normalization
    from hlodiff.render import reports

    options = Normalization.without(*no_normalize, ignore_layouts=ignore_layouts)

    with_cost = with_cost or bool(html_path)
    if len(refs) == 2:
        if explorer:
            from hlodiff.render.model_explorer_serve import model_explorer_module

            model_explorer_module()  # the extra is missing: say so before the analysis, not after
        result = api.compare_refs(refs[0], refs[1], options=options, stage=stage, cost=with_cost)
        body = result.to_json()
        if html_path:
            reports.write_compare_html(html_path, result, body, list(refs), api_pages.page_sources(body))
        show(as_json, "compare", body, result.warnings,
              lambda console: reports.render_comparison(console, result, verbose=verbose))
        if explorer or explorer_out:
            from hlodiff.render.model_explorer_serve import show_diff
            from hlodiff.render.write import Inputs

            show_diff(result.diff, result.left.ref, result.right.ref, serve_it=explorer, out_dir=explorer_out,
                      read=Inputs.of(list(refs)), echo=functools.partial(click.echo, err=True))
        leave_quickly.asked = True
        sys.exit(result.exit_code)
    if explorer or explorer_out:
        raise click.UsageError("--model-explorer and --model-explorer-out need two graphs (A B)")
    if len(refs) != 1:
        raise click.UsageError("give one dump, or two graphs (A B)")
    sequence = api.compare_dump(refs[0], options=options, stage=stage, cost=with_cost)
    body = sequence.to_json()
    if html_path:
        reports.write_sequence_html(html_path, sequence, body, list(refs), api_pages.page_sources(body))
    show(as_json, "compare-sequence", body, sequence.warnings,
          lambda console: reports.render_sequence(console, sequence, verbose=verbose))
    leave_quickly.asked = True
    sys.exit(sequence.exit_code)
