"""``hlodiff record [--out DIR] -- COMMAND...``: run a command so that it writes everything hlodiff reads.

The command runs with :func:`hlodiff.capture.env.capture_env` and with ``hlodiff/capture/_inject`` first on
``PYTHONPATH``: Python interpreters started by the command import hlodiff's ``sitecustomize``, which chains to the
one it shadows and installs the sync hook when (and only if) torch_xla gets imported. So ``python train.py``,
``python -m pkg.train``, ``torchrun ...`` and shell wrappers all work without editing the user's script; for
programs that are not Python (or JAX programs), the environment alone does the work (``XLA_FLAGS`` dump flags).

Output is not captured: the command's stdout/stderr are the caller's (``hlodiff record --json`` passes
``stdout=`` its own stderr, so that its stdout holds the JSON alone).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from hlodiff.capture.env import (COMPILE_TIMES_NAME, DEBUG_LOG_NAME, JAX_LOG_NAME, MANIFEST_NAME, READS_ENV,
                                 REPORT_NAME, SAVE_BASENAME, XLA_DUMP_NAME, CapturePaths, capture_env)
from hlodiff.capture import per_process, supervise
from hlodiff.capture.claim import LOCK_NAME, claim
from hlodiff.capture.lines import LINES_ENV
from hlodiff.capture.prune import prune_xla_dump
from hlodiff.errors import HlodiffError

INJECT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_inject")


@dataclass
class RecordResult:
    returncode: int
    """As ``subprocess`` reports it: negative ``-N`` when the command was killed by signal ``N``."""
    paths: CapturePaths
    argv: tuple[str, ...]
    seconds: float
    signals: tuple[int, ...] = ()
    """Signals hlodiff received while the command ran and forwarded to its process group."""
    errors: tuple[HlodiffError, ...] = ()
    """What hlodiff could not write after the command ended (the manifest, on a full disk)."""

    @property
    def exit_status(self) -> int:
        """What a shell would report: ``128 + N`` for a command killed by signal ``N``."""
        return 128 - self.returncode if self.returncode < 0 else self.returncode

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def captured_graphs(self) -> bool:
        """The command wrote an XLA dump or a save-tensors file (else there is nothing to explain)."""
        return bool(self.paths.xla_dump or self.paths.save_tensors_file or self.paths.save_tensors_files()
                    or any(p.get("captured") for p in self.paths.processes))

    @property
    def signal_names(self) -> list[str]:
        """The forwarded signals by name (``SIGINT``), in the order they came."""
        return [signal.Signals(s).name for s in self.signals]


def stderr_fd() -> int:
    """hlodiff's stderr as a file descriptor for a child (``record --json`` sends the command's stdout there, so
    that stdout holds the document alone); fd 2 when sys.stderr is not a real file (e.g. in tests)."""
    try:
        sys.stderr.flush()
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def inject_pythonpath(existing: str | None) -> str:
    """``PYTHONPATH`` with the ``sitecustomize`` folder first (once), existing entries kept after it."""
    parts = [p for p in (existing or "").split(os.pathsep) if p and os.path.abspath(p) != INJECT_DIR]
    return os.pathsep.join([INJECT_DIR, *parts])


def record_env(out_dir: str | os.PathLike[str], *, base_env: Mapping[str, str] | None = None, xla_dump: bool = True,
               cwd: str | os.PathLike[str] | None = None, clean: bool = False, lines: str = "auto"):
    """The environment :func:`record_command` runs its command with (a ``CaptureEnv``: ``.paths`` is the manifest).

    ``lines`` says when torch_xla records source lines (:mod:`hlodiff.capture.lines`): ``auto`` while the run warms
    up or compiles, ``always``, or ``never``."""
    out = os.path.abspath(os.fspath(out_dir))
    if clean:
        clean_outputs(out)
    else:
        check_ours(out)
    base = dict(os.environ if base_env is None else base_env)
    threads = per_process.device_threads(base)
    if threads:  # one process, one thread per device: only torch_xla's save file is written per device
        base["XLA_SAVE_TENSORS_FILE"] = os.path.join(out, SAVE_BASENAME)
        base.setdefault("XLA_SAVE_TENSORS_FMT", "hlo")
    env = capture_env(out, base_env=base, xla_dump=xla_dump, cwd=cwd, write_manifest=False)
    if threads:
        for name in ("XLA_SAVE_TENSORS_FILE", "XLA_SAVE_TENSORS_FMT"):
            if env.paths.user_set.get(name) == env.get(name) and not (base_env or os.environ).get(name):
                del env.paths.user_set[name]
                env.paths.env_added[name] = env[name]
        env.paths.warnings.append(f"CPU_NUM_DEVICES={threads}: torch_xla runs its devices as threads of one "
                                  "process, so each device's graphs are read from its own save file "
                                  "(graphs.hlo.<ordinal>, every execution; costlier per step)")
    env["PYTHONPATH"] = inject_pythonpath(env.get("PYTHONPATH"))
    env.setdefault(READS_ENV, "1")  # graph boundaries by identity; not in the pytest plugin (no boundaries there)
    env[LINES_ENV] = lines
    env[per_process.ROOT_ENV] = out  # each process of a launcher captures into a folder of its own (issue 36)
    for name in (per_process.DIR_ENV, per_process.OWNER_ENV):  # a recording inside a recorded run starts afresh
        env.pop(name, None)
    return env


def record_command(argv: Sequence[str], out_dir: str | os.PathLike[str] | None, *,
                   base_env: Mapping[str, str] | None = None, xla_dump: bool = True,
                   cwd: str | os.PathLike[str] | None = None, clean: bool = False, grace: float | None = None,
                   lines: str = "auto", monitor=None, **popen_kwargs) -> RecordResult:
    """Run ``argv`` writing the save-tensors file, debug log, live-tensor reports and XLA dump into ``out_dir``
    (``None``: ``hlodiff-run``, or ``hlodiff-run-2``, ``-3``... past earlier recordings).

    The folder is locked while the command runs (:mod:`hlodiff.capture.claim`): a second recording into it is
    refused, naming the running one. A folder holding an earlier recording is refused too, unless ``clean``, which
    first deletes what that recording wrote under hlodiff's own names (torch_xla and XLA append to existing files,
    which would mix two runs); files the user pointed elsewhere through the environment are never deleted. The
    manifest ``<out_dir>/hlodiff-record.json`` is written before the command starts and rewritten with its exit
    status when it ends; when that last write fails (a full disk), the manifest is removed rather than left
    describing a run still going, and the error is in ``RecordResult.errors``. Extra keyword arguments go to
    ``subprocess.Popen`` (e.g. ``stdout=``); by default the command shares the caller's terminal. The command runs
    in its own process group; SIGINT/SIGTERM/SIGHUP are forwarded to it, with SIGTERM then SIGKILL after
    ``grace`` seconds (:mod:`hlodiff.capture.supervise`).

    ``monitor``, when given, is called with the folder and returns a context manager held while the command runs
    (``record --live`` follows the capture in a thread: :func:`hlodiff.api.live_monitor`); it is left before the
    manifest is rewritten, so it has read everything the command wrote.

    Raises :class:`HlodiffError` when the folder cannot be used or the command cannot be started.
    """
    argv = tuple(os.fspath(a) for a in argv)
    if not argv:
        raise HlodiffError("no command to record (usage: hlodiff record [--out DIR] -- COMMAND ...)")
    held = claim(None if out_dir is None else os.fspath(out_dir), argv, replace=clean)
    try:
        return _record(argv, held.out_dir, base_env=base_env, xla_dump=xla_dump, cwd=cwd, clean=clean, grace=grace,
                       lines=lines, monitor=monitor, **popen_kwargs)
    finally:
        held.release()


def _record(argv: tuple[str, ...], out: str, *, base_env, xla_dump, cwd, clean, grace, lines, monitor=None,
            **popen_kwargs) -> RecordResult:
    env = record_env(out, base_env=base_env, xla_dump=xla_dump, cwd=cwd, clean=clean, lines=lines)
    paths = env.paths
    paths.command = list(argv)
    paths.make_dirs()
    paths.write()
    start = time.monotonic()
    with supervise.forwarding(grace) as signals:  # from before the command starts: no window without them
        try:
            proc = supervise.start(argv, env=dict(env), cwd=cwd, **popen_kwargs)
        except OSError as exc:
            _remove(paths.manifest_path)  # nothing ran: no recording here
            raise HlodiffError(f"cannot run the command: {exc.strerror or exc}", path=argv[0]) from None
        try:
            with (monitor(out) if monitor is not None else contextlib.nullcontext()):
                outcome = signals.wait(proc)
        except BaseException:
            supervise.stop_group(proc)  # hlodiff is failing: never leave the command running on its own
            raise
    paths.returncode = outcome.returncode
    paths.signals = [signal.Signals(s).name for s in outcome.forwarded]
    paths.refresh()
    prune_xla_dump(paths)
    paths.processes = per_process.collect(paths)
    errors = []
    try:
        paths.write()
    except HlodiffError as err:  # a full disk: no manifest rather than one saying the command is still running
        _remove(paths.manifest_path)
        errors.append(err)
    return RecordResult(outcome.returncode, paths, argv, time.monotonic() - start, tuple(outcome.forwarded),
                        tuple(errors))


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def check_ours(out_dir: str) -> None:
    """Refuse a non-empty folder hlodiff did not record into: it is the user's, never mixed with a capture."""
    if os.path.isdir(out_dir) and not os.path.isfile(os.path.join(out_dir, MANIFEST_NAME)) \
            and any(n != LOCK_NAME for n in os.listdir(out_dir)):
        raise HlodiffError("this folder holds files hlodiff did not record; choose another --out or empty it",
                           path=out_dir)


def clean_outputs(out_dir: str | os.PathLike[str]) -> list[str]:
    """Delete what an earlier recording wrote in ``out_dir`` under hlodiff's names; returns what was deleted.

    Only a folder hlodiff recorded into before (it holds the manifest) is cleaned; a non-empty folder without
    one is the user's, and is refused rather than emptied. Callers hold the folder's lock (:func:`claim`), so
    this never removes what a running capture wrote.
    """
    out = os.fspath(out_dir)
    if not os.path.isdir(out):
        return []
    check_ours(out)
    removed = []
    names = [DEBUG_LOG_NAME, REPORT_NAME, MANIFEST_NAME, COMPILE_TIMES_NAME, JAX_LOG_NAME]
    prefix = SAVE_BASENAME + "."
    names += [n for n in os.listdir(out) if n.startswith(prefix) and n[len(prefix):].isdigit()]
    for name in names:
        p = os.path.join(out, name)
        if os.path.isfile(p):
            os.unlink(p)
            removed.append(p)
    dump = os.path.join(out, XLA_DUMP_NAME)
    if os.path.isdir(dump) and not os.path.islink(dump):
        shutil.rmtree(dump)
        removed.append(dump)
    for folder in reversed(per_process.process_folders(out)):  # the processes' own captures (issue 36)
        removed += clean_outputs(folder)
        try:
            os.rmdir(folder)  # only when nothing but hlodiff's files was in it
            parent = os.path.dirname(folder)
            if parent != out and not os.listdir(parent):
                os.rmdir(parent)  # restart<N>/
        except OSError:
            pass
    return removed
