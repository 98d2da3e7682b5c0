"""What every follower shares (:mod:`hlodiff.dumps.follow` for files, :mod:`hlodiff.dumps.follow_dump` for dump
folders): the common state, reading what a file grew by, and a growing ``PT_XLA_DEBUG`` log read block by block.

Its own module so that the dump folders' followers import it rather than :mod:`hlodiff.dumps.follow`, which picks
a follower among them: the two no longer import each other.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps.debug_log import CompilationEvent, parse_debug_log
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import InputWarning

_CLOSER = b" Analysis: ========"
_RULE = re.compile(rb"[\w ]+ Analysis: -{8,}\r?\n")  # matched at a line start

def _after_last_closed_block(data: bytes) -> int:
    """The offset just past the last closed analysis block of log bytes (0: none): a ``... Analysis: ====`` line
    that follows a ``... Analysis: ----`` line (an opening ``====`` line follows anything else). Searched from the
    end: the cost is that of the last block, not of the whole chunk."""
    pos = data.rfind(_CLOSER)
    while pos != -1:
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        if end == -1:  # the line is still being written
            pos = data.rfind(_CLOSER, 0, start)
            continue
        before = data.rfind(b"\n", 0, max(0, start - 1)) + 1
        if start and _RULE.match(data, before, start):
            return end + 1
        pos = data.rfind(_CLOSER, 0, start)
    return 0


_COMPILATION_OPEN = re.compile(rb"^Compilation Analysis: ={8,}\r?$", re.M)


def _before_its_post(data: bytes, cut: int) -> int:
    """``cut``, or the start of the last block before it when that block is a ``Compilation Analysis``: its ``Post
    Compilation Analysis`` (written once XLA compiled the graph) is still to come, and read in the next chunk alone
    it would have no compilation before it (review 5, F7: a false warning at the end of ``watch``). The two are
    read together at the next poll."""
    if cut == 0:
        return 0
    closer = data.rfind(b"\n", 0, cut - 1) + 1
    if not data.startswith(b"Compilation Analysis: ", closer):
        return cut
    starts = [m.start() for m in _COMPILATION_OPEN.finditer(data, 0, closer)]  # its opening line
    return _after_last_closed_block(data[:starts[-1]]) if starts else cut


@dataclass(slots=True)
class Follower:
    """The common state: where the run is read from, what was read, the warnings of what was read."""

    source: str
    warnings: list[InputWarning] = field(default_factory=list)
    events: dict[str, CompilationEvent] = field(default_factory=dict)
    """Graph hash -> the ``PT_XLA_DEBUG`` compilation, when a log is followed (torch_xla's cause and frames)."""
    closed: bool = False

    def poll(self) -> list[GraphRecord]:  # pragma: no cover - every follower overrides it
        raise NotImplementedError

    def close(self) -> list[GraphRecord]:
        """The writer is done: whatever is left counts as written."""
        self.closed = True
        return self.poll()

    def files(self) -> list[str]:
        """The files whose growth means news (the idle timer of ``watch`` looks at their sizes)."""
        return []


def grown_size(path: str, offset: int) -> int:
    """The file's size now, or ``offset`` (no growth) when it cannot be looked at: a file being written may be
    replaced or not there yet, and a follower waits for it rather than failing."""
    try:
        return os.path.getsize(path)
    except OSError:
        return offset


def read_range(path: str, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` of a growing file (nothing when it went away): followers read only what grew."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(end - start)
    except OSError:
        return b""


class GrowingDebugLog:
    """A growing ``PT_XLA_DEBUG`` log read block by block: :meth:`new_events` parses the blocks closed since the
    last call (line numbers are the file's)."""

    def __init__(self, path: str, warnings: list[InputWarning]):
        self.path, self.warnings = path, warnings
        self.offset = 0
        self.lines = 0

    def new_events(self, closed: bool) -> list:
        size = grown_size(self.path, self.offset)
        if size <= self.offset:
            return []
        data = read_range(self.path, self.offset, size)
        cut = len(data) if closed else _before_its_post(data, _after_last_closed_block(data))
        if cut == 0:
            return []
        chunk = data[:cut].decode("utf-8", "replace")
        said = len(self.warnings)
        events = parse_debug_log(chunk, path=self.path, warnings=self.warnings)
        for e in events:
            e.line += self.lines
        for i in range(said, len(self.warnings)):  # the chunk's numbering, shifted to the file's (a warning
            w = self.warnings[i]                    # is frozen: replaced, never assigned to; review 8, F6)
            if w.line is not None:
                self.warnings[i] = dataclasses.replace(w, line=w.line + self.lines)
        self.offset += cut
        self.lines += chunk.count("\n")
        return events
