"""``record`` from a training command to its capture and, at its exit, the explanation: the live monitor while it
runs, the notes on how it ended, then :func:`hlodiff.cli_explain.explain_paths` on the folder with the command's
own exit status (an error explaining never replaces it).

The capture is :mod:`hlodiff.capture.record`'s, the words :mod:`hlodiff.render`'s; here they are called in the order
the command needs them.
"""

from __future__ import annotations

import sys

import click

from hlodiff.cli_explain import explain_paths
from hlodiff.cli_shell import print_unexplained
from hlodiff.errors import HlodiffError, failure_line


def record_and_explain(command: tuple[str, ...], out_dir: str | None, *, as_json: bool, html_path: str | None,
                       lines: str, live: bool) -> None:
    """Run ``command`` with everything captured, then explain it; exits with the command's status."""
    from hlodiff.capture.record import record_command, stderr_fd
    from hlodiff.render.record import record_notes

    if html_path:  # a FIFO, a device or a folder there is refused before the command runs, not after
        from hlodiff.render.write import Inputs, check_output

        check_output(html_path, Inputs(), "HTML report")
    # With --json, stdout is the document alone (`record --json > out.json`): the command's stdout goes to stderr.
    try:
        monitor = None
        if live:
            from hlodiff.api import live_monitor
            from hlodiff.render.live import echo_event

            monitor = live_monitor(echo_event)
        result = record_command(list(command), out_dir, lines=lines, monitor=monitor,
                                **({"stdout": stderr_fd()} if as_json else {}))
    except HlodiffError as err:  # the command could not start: with --json, the error is the document
        if as_json:
            print_unexplained(command, None, err.one_line())
        raise
    notes = record_notes(result, out_dir)
    for line in notes.lines:
        click.echo(line, err=True)
    if notes.unexplained is not None:
        if as_json:
            print_unexplained(command, result.exit_status, notes.unexplained, notes.signals)
        sys.exit(result.exit_status)
    try:  # several devices wrote graphs.hlo.0, graphs.hlo.1, ...: one explanation per ordinal
        explain_paths([notes.folder], as_json=as_json, html_path=html_path, exit_status=result.exit_status,
                      extra={"command": list(command), "exit_status": result.exit_status})
    except Exception as exc:  # noqa: BLE001 - nothing to explain, or a bug explaining: the command's status stands
        if (failure := failure_line(exc)) is None:
            raise
        click.echo(failure[0], err=True)
        if as_json:
            print_unexplained(command, result.exit_status, failure[0])
        sys.exit(result.exit_status)
