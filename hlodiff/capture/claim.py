"""Claiming a folder for ``hlodiff record``: a lock while the command runs, and never over an earlier recording.

A second ``record`` into a folder another one is still writing would mix (or, with the old clean-up, delete) the
first run's capture; a second ``record`` into a folder that holds a finished recording would replace it. So:

* the folder is locked (``flock`` on ``.hlodiff-record.lock``, which holds the pid and command of its holder) from
  before anything is written until the command has ended and the manifest is final; a run that finds the lock taken
  refuses, naming the running one. The lock goes away with its process, even killed: no stale lock to clear by hand
  (a killed run leaves the file, unlocked; a finished one removes it).
* a folder holding a manifest (``hlodiff-record.json``, written when a recording starts) holds a recording: an
  ``--out`` the user named is refused with a hint; the default folder moves on to ``hlodiff-run-2``, ``-3``, ...
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass

from hlodiff.dumps.manifest import MANIFEST_NAME
from hlodiff.errors import HlodiffError

LOCK_NAME = ".hlodiff-record.lock"
DEFAULT_OUT = "hlodiff-run"
MAX_NUMBERED = 10_000


@dataclass
class Claim:
    """A folder held for one recording; :meth:`release` (or the process ending) lets the next one in."""

    out_dir: str
    fd: int

    def release(self) -> None:
        """Remove the lock file, then drop the lock: a finished recording leaves no lock file behind. (A run that
        opened the file just before the unlink locks a file no longer in the folder; :func:`_claim_one` sees that
        and tries again.)"""
        if self.fd >= 0:
            try:
                os.unlink(os.path.join(self.out_dir, LOCK_NAME))
            except OSError:
                pass
            os.close(self.fd)  # closing drops the flock
            self.fd = -1


def holds_recording(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, MANIFEST_NAME))


def claim(out_dir: str | None, argv: tuple[str, ...] = (), *, replace: bool = False) -> Claim:
    """Lock ``out_dir`` for a recording (``None``: the default folder, numbered past earlier recordings).

    ``replace`` lets a caller of the library API record over a finished recording (its files are then cleaned by
    the caller); a folder another recording is writing is refused either way."""
    if out_dir is not None:
        return _claim_one(os.path.abspath(out_dir), argv, replace=replace, named=True)
    for n in range(1, MAX_NUMBERED):
        folder = os.path.abspath(DEFAULT_OUT if n == 1 else f"{DEFAULT_OUT}-{n}")
        if os.path.isdir(folder) and holds_recording(folder) and not _busy(folder):
            continue  # an earlier, finished recording: never replaced
        return _claim_one(folder, argv, replace=False, named=False)
    raise HlodiffError(f"{MAX_NUMBERED} earlier recordings here; give --out", path=DEFAULT_OUT)


def _claim_one(folder: str, argv: tuple[str, ...], *, replace: bool, named: bool) -> Claim:
    if _foreign(folder):  # refused before the lock file is made: nothing is added to the user's folder
        raise HlodiffError("this folder holds files hlodiff did not record; choose another --out or empty it",
                           path=folder)
    held = None
    for _ in range(100):
        fd = _open_lock(folder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise HlodiffError(f"another hlodiff record is writing into this folder ({holder}); wait for it to end "
                               "or choose another --out", path=folder) from None
        if _still_there(folder, fd):
            held = Claim(folder, fd)
            break
        os.close(fd)  # the lock file was removed by a run that just ended: lock the new one
    if held is None:
        raise HlodiffError("cannot take the folder's lock (it keeps being replaced)", path=folder)
    if holds_recording(folder) and not replace:
        held.release()
        hint = "choose another --out" if named else "give --out"
        raise HlodiffError(f"this folder holds an earlier recording, which is never replaced: explain it with "
                           f"'hlodiff explain-recompile {folder}', {hint}, or remove it first", path=folder)
    _note_holder(fd, argv)
    return held


def _open_lock(folder: str) -> int:
    try:
        os.makedirs(folder, exist_ok=True)
        return os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise HlodiffError(f"cannot use this folder for the recording: {exc.strerror or exc}",
                           path=exc.filename or folder) from None


def _still_there(folder: str, fd: int) -> bool:
    """Whether the locked file is still the folder's lock file (not one unlinked by the run that held it)."""
    try:
        st = os.stat(os.path.join(folder, LOCK_NAME))
    except OSError:
        return False
    here = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino)


def _foreign(folder: str) -> bool:
    """A non-empty folder that no recording ever claimed (no manifest, no lock file): the user's."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return bool(names) and MANIFEST_NAME not in names and LOCK_NAME not in names


def _busy(folder: str) -> bool:
    """Whether a recording holds the folder's lock right now (without taking it)."""
    try:
        fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _note_holder(fd: int, argv: tuple[str, ...]) -> None:
    """The pid and command in the lock file, for the message another run prints (best effort: a full disk may
    refuse even these few bytes, and the lock works without them)."""
    text = f"pid {os.getpid()}: {' '.join(argv)}"[:500] + "\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode("utf-8", "backslashreplace"), 0)
    except OSError:
        pass


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 600, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "pid unknown"
