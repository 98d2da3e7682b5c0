"""User-facing errors and warnings.

Every problem a user can cause with their input becomes an :class:`HlodiffError`, which the CLI prints as one
``file:line:col: message`` line with exit status 2. Anything else escaping is a bug in hlodiff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

_UNSAFE = "\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Lone surrogates (an undecodable byte kept by ``surrogateescape``, or a ``\\udc80`` escape in a dump: UTF-8 cannot
encode them, so they crash a strict writer or come out as raw invalid bytes) and bidirectional controls (U+202E
reverses the text after it: a ``source_file`` could make a report read differently from what it says)."""
_CONTROL_RE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_UNSAFE}]")
_KEEP_LINES_RE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_UNSAFE}]")
UNSAFE_RE = re.compile(f"[{_UNSAFE}]")
"""Only the characters no output may carry raw (JSON escapes control characters itself)."""


def printable(text: str, *, keep_lines: bool = False) -> str:
    """``text`` with control characters, lone surrogates and bidirectional controls written as escapes (``\\n``,
    ``\\x1b``, ``\\udc80``, ``\\u202e``): the one escaping path of every text reaching a terminal, JSON or HTML.

    Paths and names come from dumps and from the user's file system: a newline in a file name must not split a
    one-line error, an ANSI sequence or a right-to-left override in a ``source_file`` must not recolour, retitle or
    reorder the user's terminal, and a lone surrogate must not crash a UTF-8 writer.
    ``keep_lines`` keeps newlines and tabs (for rendered multi-line output).
    """
    pattern = _KEEP_LINES_RE if keep_lines else _CONTROL_RE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape_one, text)


def _escape_one(m: re.Match) -> str:
    c = m.group(0)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c)
    if named:
        return named
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_SHOWN: dict[str, str] = {}


def show_as(path: str, name: str) -> None:
    """Name ``path`` as ``name`` in messages and graph references: a file hlodiff made for the user (standard input
    copied to a temporary file) is reported as what the user typed (``-``)."""
    _SHOWN[path] = name


def shown(path: str) -> str:
    """How messages name ``path`` (see :func:`show_as`)."""
    return _SHOWN.get(path, path)


class HlodiffError(Exception):
    """An input problem reported to the user as one line, located where possible."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, col: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col

    def location(self) -> str:
        """``path:line:col`` with the parts that are known."""
        parts = [printable(shown(self.path)) if self.path else "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def __str__(self) -> str:
        return f"{self.location()}: {printable(self.message)}"

    def one_line(self) -> str:
        """What the CLI prints: ``file:line:col: error: message``, control characters escaped."""
        return f"{self.location()}: error: {printable(self.message)}"


class HloParseError(HlodiffError):
    """The HLO text does not follow the grammar."""


@dataclass(frozen=True)
class InputWarning:
    """Data that could not be read but did not stop the run (e.g. a graph cut off mid-write)."""

    message: str
    path: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = printable(shown(self.path)) if self.path else "<input>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: warning: {printable(self.message)}"


@dataclass(frozen=True)
class InputNote(InputWarning):
    """Not a warning: how an input was read when it could be read more than one way (JAX's cache misses joined to
    the dumped modules by function name, its log lacking the compile lines), printed as a note beside the
    warnings so a reader can weigh what it rests on."""

    def __str__(self) -> str:
        return super().__str__().replace(": warning: ", ": note: ", 1)


@dataclass(frozen=True)
class ReportNote(InputWarning):
    """Not a warning: a fact about the input that the terminal report tells in its place (``cost``'s steps with no
    live-tensor report after the run repeated itself: review 17, F6, printed first as "warning: ... (a note, not a
    fault ...)", which a user still read as a warning). ``--json`` keeps it among its warnings, as a note."""

    def __str__(self) -> str:
        return super().__str__().replace(": warning: ", ": note: ", 1)


@dataclass(frozen=True)
class GraphCutOff(InputWarning):
    """A warning that is also evidence: graph ``index`` of the save-tensors file ``source`` was cut off mid-write
    (the run was killed, or the file or its gzip stream was cut), so it was not read. Like a cut module of a dump
    folder, it is a graph that ran and nothing can be said about (review F10)."""

    source: str = ""
    index: int = 0


def unique(warnings: Iterable[InputWarning]) -> list[InputWarning]:
    """Each warning once, in order: two readers of one file (a recording's debug log read for its executions and
    for its compilations, once by the manifest's path and once by the folder's) find the same damage, and a user
    shown it twice wonders whether two files are cut."""
    import os

    seen: set[tuple] = set()
    out = []
    for w in warnings:
        key = (os.path.realpath(w.path) if w.path else None, w.line, w.message)
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out


def failure_line(exc: BaseException) -> tuple[str, int] | None:
    """The one stderr line and exit status a command ends with on ``exc``, never a traceback: bad input or a
    resource gone (a file, memory, the recursion limit) exits 2, an interrupt 130, a bug in hlodiff 3. None: let
    it propagate (not an error, or ``HLODIFF_DEBUG`` is set and a bug's traceback is wanted)."""
    import os

    if isinstance(exc, HlodiffError):
        return exc.one_line(), 2
    if isinstance(exc, KeyboardInterrupt):
        return "hlodiff: interrupted", 130
    if isinstance(exc, MemoryError):
        return "hlodiff: error: out of memory", 2
    if isinstance(exc, RecursionError):
        return "hlodiff: error: input nested too deeply to read", 2
    if isinstance(exc, OSError):  # permissions, a folder that vanished, a disk that filled up
        where = printable(str(exc.filename)) if exc.filename is not None else "hlodiff"
        return f"{where}: error: {printable(str(exc.strerror or exc))}", 2
    if isinstance(exc, Exception) and not os.environ.get("HLODIFF_DEBUG"):
        return (f"hlodiff: internal error: {type(exc).__name__}: {printable(str(exc))} "
                f"(a bug in hlodiff; rerun with HLODIFF_DEBUG=1 and report it)"), 3
    return None
