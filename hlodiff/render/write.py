"""Writing report files without ever destroying what the run read.

A report path typed next to the input (``--html graphs.hlo.0``), another spelling of it (``./d/../graphs.hlo.0``),
a symlink or a hard link to it, or a side file the run reads (``tensors_report.txt``, ``pt_xla_debug.log``) would
replace the user's only copy of a dump with a page about it. So every output is checked against every file the run
reads, by real path and by inode, before anything is written; and it is written to a temporary file in the same
folder and renamed over the target, so a crash or a full disk never leaves a half-written report (or a truncated
old one) behind.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Iterable

from hlodiff.errors import HlodiffError


@dataclass
class Inputs:
    """The identities of everything a run reads: real paths, and ``(device, inode)`` of what exists."""

    real_paths: set[str] = field(default_factory=set)
    inodes: set[tuple[int, int]] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, paths: Iterable[str]) -> "Inputs":
        """Files given, and for folders (XLA dump folders, ``hlodiff record`` folders) the files directly in them."""
        from hlodiff.dumps import split_ref

        inputs = cls()
        for path in paths:
            inputs.add(split_ref(path)[0])
        return inputs

    def add(self, path: str) -> None:
        real = os.path.realpath(path)
        self.real_paths.add(real)
        self._add_inode(real)
        if os.path.isdir(real):
            self.folders.add(real)
            try:
                entries = list(os.scandir(real))
            except OSError:
                return
            for entry in entries:
                self.real_paths.add(os.path.realpath(entry.path))
                self._add_inode(entry.path)

    def _add_inode(self, path: str) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        self.inodes.add((st.st_dev, st.st_ino))

    def holds(self, path: str) -> bool:
        """Whether writing ``path`` would replace something the run reads."""
        real = os.path.realpath(path)
        if real in self.real_paths or real in self.folders:
            return True
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) in self.inodes


_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def check_output(path: str, inputs: Inputs, what: str = "report") -> None:
    """Refuse (one-line error, exit 2) an output that is one of the inputs, a folder, or anything else that is not a
    regular file (a FIFO, a socket, a device node: the report is renamed over its target, which would replace
    ``/dev/null`` itself with a page). A new path or a regular file (through symlinks) is fine."""
    if inputs.holds(path):
        raise HlodiffError(f"refusing to write the {what} over a file this run reads; choose another path", path=path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # a new path (or one whose folder is missing: the write reports that, naming it)
    if stat.S_ISDIR(mode):
        raise HlodiffError(f"cannot write the {what}: this is a folder; give a file name", path=path)
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "an unknown kind of file")
        raise HlodiffError(f"refusing to write the {what} here: this is {kind}, not a regular file; give a file name",
                           path=path)


def write_text(path: str, text: str, inputs: Inputs, what: str = "report") -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename), after
    :func:`check_output`. A failure leaves the old file, if any, untouched and no temporary file behind."""
    check_output(path, inputs, what)
    path = os.path.realpath(path)  # through a symlink to its target, as a plain open would write
    folder = os.path.dirname(path)
    tmp = None
    try:
        import tempfile  # here: every report imports this module, few write a file

        fd, tmp = tempfile.mkstemp(prefix=".hlodiff-", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        check_output(path, inputs, what)  # again: a node made at the path while the report was written stays
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise HlodiffError(f"cannot write the {what}: {exc.strerror or exc}", path=path) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _umask() -> int:
    """The process umask (mkstemp creates 0600 files; a report should get the permissions a plain open gives)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
