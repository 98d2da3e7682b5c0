"""A test whose graphs were not stable runs once more, in a fresh process with source lines on, so its failure
message names the user's lines although passing tests never pay for them.

Under pytest, torch_xla's frame capture (``XLA_IR_DEBUG``) costs about 1.5x per traced step (pytest's stack is
some forty frames deep), so the plugin leaves it off. A graph's lines can only be had by tracing it again, and in
the same process the second run's graphs are cache hits that no XLA dump writes again; a fresh process compiles
them anew. The child is the same pytest on the one test id, with ``hlodiff_source_lines=true``; its plugin writes
its stability message to :data:`MESSAGE_ENV`, which replaces the parent's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

MESSAGE_ENV = "HLODIFF_RERUN_MESSAGE"
"""Set in the child: the file its stability failure message goes to (and: do not rerun again)."""
TIMEOUT_S = 900


def in_rerun() -> bool:
    return bool(os.environ.get(MESSAGE_ENV))


def write_message(message: str) -> None:
    """In the child: hand the failure message to the parent."""
    with open(os.environ[MESSAGE_ENV], "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(message)


def with_lines(error: AssertionError, *, nodeid: str, rootdir: str, inifile: str | None, lines_on: bool,
               rerun: bool, paths, keep_dir: str | None = None) -> AssertionError:
    """The stability failure ``error``, its message from a second run of the test with source lines on where the
    plugin left them off (``lines_on``: they were on; ``rerun``: the ini and the test allow a second run;
    ``paths``: the plugin's capture, whose variables the child takes back; ``keep_dir``: the user's
    ``--hlodiff-dir``, where the second run's capture is kept too, in a folder of its own: review 4, F4, the kept
    capture was the first, line-less one, so ``explain-recompile`` on it said "line unknown")."""
    from hlodiff.testing.stability import HloStabilityError

    if in_rerun():
        write_message(str(error))
        return error
    if lines_on or os.environ.get("XLA_IR_DEBUG", "0") not in ("", "0"):
        return error
    if not getattr(error, "torch_xla", True):
        return error  # a JAX dump: its lines are in it; a second run would only double the test's time
    if not rerun:
        return HloStabilityError(f"{error}\n\n(source lines: this test is not run twice; run pytest with "
                                 f"`-o hlodiff_source_lines=true` to name your lines)")
    from hlodiff.capture.session import saved_env

    kept = lines_folder(keep_dir, nodeid) if keep_dir else None
    message, status = rerun_with_lines(nodeid, rootdir, inifile, paths.env_added, saved_env(paths), kept)
    if message is None:
        return HloStabilityError(f"{error}\n\n(source lines: {SECOND_RUN.get(status, SECOND_RUN_FAILED)})",
                                 getattr(error, "torch_xla", True))
    where = f"; its capture, with lines: {kept}" if kept else ""
    return HloStabilityError(f"{message}\n\n(source lines from a second run of this test, in a fresh process "
                             f"with torch_xla's frame capture on; passing tests run without it{where})")


SECOND_RUN = {
    0: "a second run of this test with source lines on passed: its failure depends on what ran before it",
    None: "a second run of this test with source lines on could not be run (timed out or not started): the "
          "message above has no lines of yours",
}
"""Why a second run gave no message of its own, by its exit status; any other status: it failed without a
stability message (another failure, or a check that read no capture of its own), said as such: "did not fail the
same way" read as a flaky test where the failure was the same every time (review 14, F5)."""
SECOND_RUN_FAILED = ("a second run of this test with source lines on failed too, without a stability message of "
                     "its own: the message above is the first run's")


def lines_folder(keep_dir: str, nodeid: str) -> str:
    """The folder under ``--hlodiff-dir`` that keeps a test's second run (source lines on): one per test id."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in nodeid.split("::")[-1]) or "test"
    return os.path.join(os.path.abspath(keep_dir), "with-lines", name)


def rerun_with_lines(nodeid: str, rootdir: str, inifile: str | None, env_added: dict[str, str],
                     saved_env: dict[str, str | None], keep: str | None = None) -> tuple[str | None, int | None]:
    """Run ``nodeid`` again in a fresh pytest with source lines on: (its stability message, or None when it wrote
    none; its exit status, or None when it could not be run)."""
    fd, message_path = tempfile.mkstemp(prefix="hlodiff-rerun-", suffix=".txt")
    os.close(fd)
    try:
        args = [sys.executable, "-m", "pytest", nodeid, "-q", "-p", "no:cacheprovider", "-o",
                "hlodiff_source_lines=true", "--rootdir", rootdir]
        if inifile:
            args += ["-c", inifile]
        if keep:
            args += ["--hlodiff-dir", keep]
        proc = subprocess.run(args, cwd=rootdir, env=_child_env(env_added, saved_env, message_path),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TIMEOUT_S, check=False)
        with open(message_path, encoding="utf-8") as f:
            return f.read() or None, proc.returncode
    except (OSError, subprocess.SubprocessError):
        return None, None
    finally:
        os.unlink(message_path)


def _child_env(env_added: dict[str, str], saved_env: dict[str, str | None], message_path: str) -> dict[str, str]:
    """The parent's environment as the user set it: the capture variables this plugin added are taken back, so
    the child arranges its own capture in a folder of its own."""
    env = dict(os.environ)
    for name in env_added:
        before = saved_env.get(name)
        if before is None:
            env.pop(name, None)
        else:
            env[name] = before
    env[MESSAGE_ENV] = message_path
    return env
