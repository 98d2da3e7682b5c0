"""``watch`` from a path to lines told as a capture grows: the path waited for when the job has not made it yet,
each event echoed (terminal lines or JSON Lines), and where the full report is once it stops.

:mod:`hlodiff.cli` declares the command and calls :func:`watch_capture`; the following is
:mod:`hlodiff.api`'s ``watch_path``, the words :mod:`hlodiff.render.live`'s.
"""

from __future__ import annotations

import functools
import os
import sys

import click

from hlodiff.cli_shell import warn


def watch_capture(path: str, *, until_idle: float | None, as_json: bool, stage: str | None) -> None:
    """Follow ``path`` until Ctrl-C or ``until_idle`` seconds without a write."""
    from hlodiff.api import POLL_SECONDS, watch_path
    from hlodiff.dumps.appear import wait_until_exists
    from hlodiff.render.live import echo_event, echo_json, watch_report, watch_stopped

    if not os.path.exists(path):  # started before the job made its folder: wait for it (review 6)
        click.echo(f"hlodiff: {path} does not exist yet: waiting for the run to create it (Ctrl-C to stop)",
                   err=True)
        try:
            wait_until_exists(path, interval=POLL_SECONDS)
        except KeyboardInterrupt:
            return
    report = watch_report(path)
    ends = []
    warnings = watch_path(path, echo_json if as_json else functools.partial(echo_event, stream=sys.stdout,
                                                                            report=report),
                          until_idle=until_idle, stage=stage, ended=ends.append)
    warn(warnings)
    click.echo(watch_stopped(path, ends[0] if ends else None), err=True)  # where the full report is
