"""The progress bar: drawn on a terminal's stderr while reading dumps and comparing recompilations, never on
stdout, never when piped, never with -q."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys

from rich.console import Console

from helpers import FIXTURES, cli
from hlodiff.progress import listening
from hlodiff.dumps.run_folder import discover
from helpers import explained
from hlodiff.render.progress_bar import TerminalProgress, wanted

DUMP = str(FIXTURES / "torch_xla" / "unbounded_growth" / "graphs.hlo.0")


def test_bars_for_reading_and_comparing_on_a_terminal_console():
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    bars = TerminalProgress(console, delay=0)
    with listening(bars):
        explanation = explained(discover([DUMP], None, None), [])
    bars.close()
    drawn = buffer.getvalue()
    assert "reading graphs.hlo.0" in drawn and "reading graphs" in drawn
    assert "comparing recompilations" in drawn and f"/{len(explanation.recompilations)} graphs" in drawn


def test_nothing_without_a_listener_and_nothing_when_piped():
    assert not wanted(False, io.StringIO()) and not wanted(True, sys.stderr)
    with open(os.devnull, "w") as devnull:
        assert not wanted(False, devnull)


def _run_on_terminal(args: list[str]) -> tuple[bytes, bytes]:
    """Run hlodiff with stderr on a pseudo-terminal (as in an interactive shell) and stdout on a pipe."""
    master, slave = pty.openpty()
    env = {**os.environ, "HLODIFF_PROGRESS_DELAY": "0", "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "hlodiff.cli", *args], stdout=subprocess.PIPE, stderr=slave,
                            env=env)
    os.close(slave)
    err = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read()
    proc.wait()
    os.close(master)
    return out, err


def test_terminal_gets_a_bar_and_stdout_stays_clean():
    out, err = _run_on_terminal(["explain-recompile", DUMP, "--json"])
    assert b"comparing recompilations" in err
    piped = subprocess.run([sys.executable, "-m", "hlodiff.cli", "explain-recompile", DUMP, "--json"],
                           capture_output=True, env={**os.environ, "HLODIFF_PROGRESS_DELAY": "0"})
    assert out == piped.stdout  # the JSON document is byte for byte what a pipe gets
    assert b"comparing" not in piped.stderr and b"\x1b[" not in piped.stderr


def test_quiet_draws_nothing_on_a_terminal():
    _, err = _run_on_terminal(["explain-recompile", DUMP, "-q"])
    assert b"comparing" not in err and b"reading" not in err


def test_cli_runner_output_has_no_bar():
    result = cli("inspect", DUMP)
    assert "reading" not in result.output and result.exit_code == 0
