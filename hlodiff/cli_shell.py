"""What wraps every ``hlodiff`` command: one line and an exit status for every failure (never a traceback),
the choice between the ``--json`` document and the terminal report, and a quick exit once all is written.

:mod:`hlodiff.cli` declares the commands and their options and calls these; they hold no analysis.
"""

from __future__ import annotations

import functools
import sys

import click

from hlodiff._runtime import flush_stdout, silence_stdout
from hlodiff.errors import HlodiffError, InputWarning, failure_line, printable

INPUTS = ("paths", "refs", "tensors_report", "debug_log", "jax_log", "debug_logs", "dynamo_log")
"""The arguments naming input files, where ``-`` reads standard input."""


def guarded(fn):
    """Turn every failure into one line and an exit status; never a traceback (unless HLODIFF_DEBUG is set)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            from hlodiff.render.progress_bar import progress_on_terminal

            from hlodiff.dumps.stdin import spool_arguments

            with progress_on_terminal(quiet=kwargs.pop("quiet", False)):
                result = fn(*args, **spool_arguments(kwargs, INPUTS))
            flush_stdout()
            return result
        except (click.exceptions.Exit, click.ClickException):
            raise
        except SystemExit:
            flush_stdout()  # the command's status stands when the reader closed the pipe early
            raise
        except BrokenPipeError:  # closed while the report was printed outside show(): nothing failed
            silence_stdout()
            sys.exit(0)
        except BaseException as exc:  # noqa: BLE001 - the last line of defence against tracebacks
            if (failure := failure_line(exc)) is None:
                raise
            click.echo(failure[0], err=True)
            sys.exit(failure[1])

    return wrapper


def warn(warnings: list[InputWarning]) -> None:
    from hlodiff.errors import ReportNote, unique

    for warning in unique(warnings):
        if not isinstance(warning, ReportNote):  # the report tells it where it belongs
            click.echo(str(warning), err=True)


def print_json(kind: str, body: dict, warnings) -> None:
    from hlodiff.render import json_out

    click.echo(json_out.dumps(json_out.document(kind, body, warnings)), nl=False)


def show(as_json: bool, kind: str, body, warnings, render, stream=None) -> None:
    """The choice every command makes: the ``--json`` document (``body``, or a function making it) alone on
    stdout, or the warnings on stderr and ``render(console)``'s report on stdout (``stream``: ``record`` puts it on
    stderr, beside its live lines, out of the command's own stdout). A reader that closes the pipe early
    (``| head``) ends the printing, not the command: its exit status is still the verdict."""
    try:
        if as_json:
            print_json(kind, body() if callable(body) else body, warnings)
        else:
            from hlodiff.render.reports import stdout_console

            warn(warnings)
            render(stdout_console(stream))
    except BrokenPipeError:
        silence_stdout()


def print_unexplained(command: tuple[str, ...], exit_status: int | None, error: str, signals=()) -> None:
    """``record --json`` with nothing explained: still a document, naming why."""
    from hlodiff.render.json_out import dumps, unexplained

    click.echo(dumps(unexplained(list(command), exit_status, error, signals)), nl=False)


class OneLineGroup(click.Group):
    """Usage errors (a missing argument, ``--html DIR``, an unreadable path) as the one ``file: error: message``
    line every other error is, with exit status 2, instead of click's three-line usage block."""

    def main(self, *args, **kwargs):
        own_process = not args and "args" not in kwargs  # the console script, not click's CliRunner in a test
        kwargs["standalone_mode"] = False
        try:
            result = super().main(*args, **kwargs)
        except SystemExit as exc:
            if own_process and leave_quickly.asked:
                leave_quickly(exc.code)
            raise
        except click.exceptions.Abort:
            click.echo("hlodiff: interrupted", err=True)
            sys.exit(130)
        except click.exceptions.NoArgsIsHelpError as exc:  # bare `hlodiff`: the help, as --help prints it
            click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.ClickException as exc:
            click.echo(usage_line(exc), err=True)
            sys.exit(exc.exit_code if not isinstance(exc, click.UsageError) else 2)
        sys.exit(result if isinstance(result, int) else 0)


def leave_quickly(code) -> None:
    """End the process without freeing, object by object, what the command built: the two parsed, normalized and
    matched modules of a large ``compare`` are millions of objects (0.5 s of a 300K-instruction pair just to free
    them, memory the system takes back at once). Everything is written by then; exit handlers (standard input's
    temporary copy) still run, and the streams are flushed first."""
    import atexit
    import os

    atexit._run_exitfuncs()
    flush_stdout()
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


leave_quickly.asked = False  # set by a command once its output is all written


def usage_line(exc: click.ClickException) -> str:
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "hlodiff"
    hint = f" (see '{where} --help')" if isinstance(exc, click.UsageError) else ""
    return f"{printable(where)}: error: {printable(exc.format_message())}{hint}"


def note_stale_accelerator() -> None:
    """Before every command: a checkout updated without rebuilding the accelerator runs the Python code (the
    results are the same, only slower), and the user is told how to get the speed back."""
    from hlodiff import accel

    if accel.stale:
        click.echo("hlodiff: note: the compiled accelerator was built from other sources than these; running the "
                   "Python code (same results, slower): rebuild it with `pip install -e .`", err=True)


def source_map_given(ctx, param, values):
    """``--source-map``'s callback: the mapping is set for the whole command as the option is read, and a bad
    ``OLD=NEW`` is click's usage error (exit 2), named with the option."""
    from hlodiff.dumps.source_paths import use_source_map

    try:
        use_source_map(values)
    except HlodiffError as exc:
        raise click.BadParameter(exc.message) from None
    return values
