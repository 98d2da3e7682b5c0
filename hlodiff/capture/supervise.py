"""Run the recorded command like a shell runs a job, so that stopping ``hlodiff record`` stops the command too.

Without this, SIGTERM or SIGHUP to ``hlodiff record`` killed hlodiff and left the training job running, and a
SIGINT sent to hlodiff's pid alone never reached the command (issue 12). Now:

* the command runs in its own process group (it and everything it starts: torchrun workers, data loaders);
* SIGINT, SIGTERM and SIGHUP received by hlodiff are forwarded to that group, from before the command starts;
  a signal hlodiff was started ignoring (``nohup`` ignores SIGHUP, a shell's ``cmd &`` SIGINT) stays ignored,
  by hlodiff and by the command, as it would without hlodiff;
* if the command is still running ``grace`` seconds after the first forwarded signal (default 10 s,
  ``HLODIFF_RECORD_GRACE``), the group gets SIGTERM, and ``grace`` seconds later SIGKILL;
* once the command has exited after a forwarded signal, whatever is left in its group is killed (no orphans);
* if hlodiff itself dies without a chance to forward (SIGKILL), the kernel sends the command SIGTERM
  (``PR_SET_PDEATHSIG``, Linux);
* when hlodiff's stdin is the terminal and hlodiff is in the foreground, the command's group is made the
  terminal's foreground group for the run (so Ctrl-C reaches it exactly once, and it can read the terminal, e.g.
  a ``pdb`` breakpoint), then handed back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_ENV = "HLODIFF_RECORD_GRACE"
DEFAULT_GRACE = 10.0
_POLL = 0.2


@dataclass
class Supervision:
    """What happened while the command ran."""

    returncode: int
    forwarded: list[int] = field(default_factory=list)
    """Signals hlodiff received and passed on, in order."""
    escalated: list[int] = field(default_factory=list)
    """Signals hlodiff sent on its own because the command outlived the grace period."""


def grace_from_env(default: float = DEFAULT_GRACE) -> float:
    try:
        value = float(os.environ.get(GRACE_ENV, "") or default)
    except ValueError:
        return default
    return value if value > 0 else default


def start(argv, **popen_kwargs) -> subprocess.Popen:
    """``subprocess.Popen`` in a new process group, dying with its parent (Linux)."""
    if os.name != "posix":
        return subprocess.Popen(argv, **popen_kwargs)
    return subprocess.Popen(argv, process_group=0, preexec_fn=_die_with_parent, **popen_kwargs)


class Forwarding:
    """Forwards the signals hlodiff receives to the command's group, from before the command starts.

    The handlers are installed before ``Popen``: a signal that arrives while the command is starting (a busy
    machine can run the child's first lines before hlodiff's next one) is kept and passed on once the command
    exists, instead of killing hlodiff with its default action."""

    def __init__(self, grace: float):
        self.grace = grace
        self.state = Supervision(returncode=0)
        self.first_at: float | None = None
        self.proc: subprocess.Popen | None = None
        self.pending: list[int] = []

    def __call__(self, signum, frame) -> None:
        self.state.forwarded.append(signum)
        if self.first_at is None:
            self.first_at = time.monotonic()
        if self.proc is None:
            self.pending.append(signum)
        else:
            _killpg(self.proc, signum)

    def wait(self, proc: subprocess.Popen) -> Supervision:
        """Pass on what arrived while the command started, then wait for it (see the module docstring)."""
        self.proc = proc
        while self.pending:  # a signal arriving now goes straight to the group (self.proc is set)
            _killpg(proc, self.pending.pop(0))
        state = self.state
        with _foreground(proc):
            while True:
                try:
                    state.returncode = proc.wait(timeout=_POLL)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if self.first_at is not None:
                    _escalate(proc, state, time.monotonic() - self.first_at, self.grace)
        if state.forwarded or state.escalated:
            _killpg(proc, signal.SIGKILL)  # what the command left in its group
        return state


@contextmanager
def forwarding(grace: float | None = None):
    """``with forwarding() as f: proc = start(...); outcome = f.wait(proc)``."""
    f = Forwarding(grace_from_env() if grace is None else grace)
    with _handlers(f):
        yield f


def supervise(proc: subprocess.Popen, grace: float | None = None) -> Supervision:
    """Wait for ``proc`` (started by :func:`start`), forwarding signals to its group from now on."""
    with forwarding(grace) as f:
        return f.wait(proc)


def stop_group(proc: subprocess.Popen) -> None:
    """SIGKILL the command's group and reap it (hlodiff is going down)."""
    _killpg(proc, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _escalate(proc: subprocess.Popen, state: Supervision, waited: float, grace: float) -> None:
    """After ``grace`` seconds: SIGTERM (SIGKILL when SIGTERM was what we forwarded); after twice that: SIGKILL."""
    if waited >= grace and not state.escalated:
        sig = signal.SIGKILL if signal.SIGTERM in state.forwarded else signal.SIGTERM
    elif waited >= 2 * grace and signal.SIGKILL not in state.escalated:
        sig = signal.SIGKILL
    else:
        return
    state.escalated.append(sig)
    _killpg(proc, sig)


def _killpg(proc: subprocess.Popen, sig: int) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


@contextmanager
def _handlers(handler):
    """Install ``handler`` for the forwarded signals (main thread only; elsewhere nothing is forwarded)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for sig in FORWARDED:
        try:
            if signal.getsignal(sig) == signal.SIG_IGN:
                continue  # ignored by whoever started hlodiff (nohup, `cmd &`): the command inherits that too
            old[sig] = signal.signal(sig, handler)
        except (OSError, ValueError):
            pass
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


@contextmanager
def _foreground(proc: subprocess.Popen):
    """Give the terminal to the command's group while it runs, when hlodiff holds it (job control)."""
    fd = None
    try:
        if os.name == "posix" and sys.stdin is not None and sys.stdin.isatty():
            candidate = sys.stdin.fileno()
            if os.tcgetpgrp(candidate) == os.getpgrp():
                os.tcsetpgrp(candidate, proc.pid)
                fd = candidate
    except (OSError, ValueError, AttributeError):
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # we are a background group at this point
            try:
                os.tcsetpgrp(fd, os.getpgrp())
            except OSError:
                pass
            finally:
                signal.signal(signal.SIGTTOU, previous)


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when hlodiff dies (``prctl(PR_SET_PDEATHSIG)``; Linux only)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except Exception:
        pass
