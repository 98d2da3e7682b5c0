"""`hlodiff record` stops its command with it and passes the command's exit status through (issue 12, items 2, 7).

Each test runs the real `hlodiff record` CLI on a real child Python process (which itself starts a grandchild),
sends a signal to hlodiff's pid only, and checks: the command heard it, nothing of the command is left running,
the manifest has the command's status, and hlodiff exits with that status.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")

CHILD = """
import os, signal, subprocess, sys, time
out = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else ""
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(os.path.join(out, "pids"), "w") as f:
    f.write(f"{os.getpid()} {grandchild.pid}\\n")
try:
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    with open(os.path.join(out, "heard"), "w") as f:
        f.write("SIGINT\\n")
    sys.exit(7)
"""


def hlodiff_cmd() -> str:
    return str(Path(sys.executable).with_name("hlodiff"))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _as_from_a_terminal() -> None:
    """hlodiff as a shell starts it in the foreground, whatever started pytest (`nohup`, `&` ignore SIGHUP, SIGINT)."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _ignoring(sig: int) -> None:
    _as_from_a_terminal()
    signal.signal(sig, signal.SIG_IGN)


def start_record(tmp_path: Path, *args: str, grace: str = "2",
                 ignored: int | None = None) -> tuple[subprocess.Popen, Path, tuple[int, int]]:
    (tmp_path / "child.py").write_text(textwrap.dedent(CHILD))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "PT_XLA", "HLODIFF_"))}
    env["HLODIFF_RECORD_GRACE"] = grace
    proc = subprocess.Popen([hlodiff_cmd(), "record", "--out", "run", "--", sys.executable, "child.py", str(tmp_path),
                             *args], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                            stdout=(tmp_path / "stdout").open("w"), stderr=(tmp_path / "stderr").open("w"),
                            preexec_fn=_as_from_a_terminal if not ignored else lambda: _ignoring(ignored))
    pids = tmp_path / "pids"
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().endswith("\n")):
        assert proc.poll() is None, (tmp_path / "stderr").read_text()
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child, grandchild = (int(p) for p in pids.read_text().split())
    return proc, tmp_path / "run", (child, grandchild)


def finish(proc: subprocess.Popen, tmp_path: Path) -> tuple[int, str]:
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, (tmp_path / "stderr").read_text()


def manifest(run: Path) -> dict:
    return json.loads((run / "hlodiff-record.json").read_text())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_term_and_hup_stop_the_command_and_its_children(tmp_path, sig):
    proc, run, (child, grandchild) = start_record(tmp_path)
    proc.send_signal(sig)
    status, err = finish(proc, tmp_path)
    assert status == 128 + sig  # the command's status, as a shell reports a command killed by a signal
    assert not alive(child) and not alive(grandchild)
    data = manifest(run)
    assert data["returncode"] == -sig and data["signals"] == [signal.Signals(sig).name]
    assert f"stopped by {signal.Signals(sig).name}" in err and err.count("\n") == 1


def test_sigint_to_hlodiff_alone_reaches_the_command(tmp_path):
    proc, run, (child, grandchild) = start_record(tmp_path)
    proc.send_signal(signal.SIGINT)  # hlodiff's pid only, not the group (kill -INT <pid>)
    status, _ = finish(proc, tmp_path)
    assert (tmp_path / "heard").read_text() == "SIGINT\n"  # the command's own KeyboardInterrupt handler ran
    assert status == 7 and manifest(run)["returncode"] == 7 and manifest(run)["signals"] == ["SIGINT"]
    assert not alive(child) and not alive(grandchild)


def test_nohup_stays_in_force_for_the_command(tmp_path):
    """`nohup hlodiff record -- cmd`: a hang-up stops neither hlodiff nor the command, as without hlodiff."""
    proc, run, (child, grandchild) = start_record(tmp_path, ignored=signal.SIGHUP)
    proc.send_signal(signal.SIGHUP)
    time.sleep(1.5)
    assert proc.poll() is None and alive(child) and alive(grandchild)
    proc.send_signal(signal.SIGTERM)
    status, _ = finish(proc, tmp_path)
    assert status == 128 + signal.SIGTERM and manifest(run)["signals"] == ["SIGTERM"]
    assert not alive(child) and not alive(grandchild)


def test_a_command_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path):
    proc, run, (child, grandchild) = start_record(tmp_path, "ignore-term", grace="1")
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    status, _ = finish(proc, tmp_path)
    assert status == 128 + signal.SIGKILL and 0.9 < time.monotonic() - started < 30
    assert manifest(run)["returncode"] == -signal.SIGKILL
    assert not alive(child) and not alive(grandchild)


def test_hlodiff_killed_outright_takes_the_command_with_it(tmp_path):
    proc, _, (child, grandchild) = start_record(tmp_path)
    proc.send_signal(signal.SIGKILL)  # no chance to forward anything
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not alive(child)  # PR_SET_PDEATHSIG: the kernel sent the command SIGTERM
    finally:  # the command's own children are its business once hlodiff cannot act (documented)
        for pid in (child, grandchild):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_exit_status_is_the_commands(tmp_path):
    (tmp_path / "fail.py").write_text("import sys\nprint('working')\nsys.exit(3)\n")
    proc = subprocess.run([hlodiff_cmd(), "record", "--out", "run", "--", sys.executable, "fail.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3 and "working" in proc.stdout
    assert manifest(tmp_path / "run")["returncode"] == 3
    # nothing was captured (no torch_xla): hlodiff says so on one line, and still exits with the command's status
    assert proc.stderr.count("the command produced no graph") == 1 and "status 3" in proc.stderr
