"""Follow a capture while the run still writes it: each :meth:`poll` returns the graphs that became complete since
the previous one, in run order, reading only what was appended (``hlodiff record``'s live lines, ``hlodiff watch``).

What can be followed (:func:`follower_for`):

* a ``hlodiff record`` folder, or an XLA dump folder with a ``PT_XLA_DEBUG_LEVEL=2`` log beside it: the log's
  ``Execution Analysis`` blocks are the executions (cache hits too), the dump's module *k* the HLO of the *k*-th
  compilation (as :mod:`hlodiff.dumps.executions` pairs them after the run);
* an XLA dump folder alone: each module is a compilation;
* a save-tensors file: each entry is an execution;
* a ``PT_XLA_DEBUG`` log alone: compilations and executions without HLO (:attr:`Follower.events` only).

**Half-written input is never damage.** A log is read up to the end of its last *closed* block (a block's closing
``====`` line), a save-tensors file up to its last ``## END_GRAPH`` line; what follows waits for the next poll. A
module of a dump folder alone is taken once a later module exists, or once its size stayed the same for one poll
and its text ends with the closing ``}`` of a computation; with a log, once its compilation's ``Post Compilation
Analysis`` (written after XLA compiled it) is in the log. :meth:`Follower.close` (the writer is done) takes what is
left as it is.

Memory: the followers keep offsets, the compiled modules' records (one per compilation) and nothing per cache hit.
The followers of dump folders are in :mod:`hlodiff.dumps.follow_dump`; the files' here.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps.debug_log import CompilationEvent, parse_debug_log
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.manifest import CAPTURE_SAVE_TENSORS, MANIFEST_NAME
from hlodiff.errors import HlodiffError, InputWarning

_CLOSER = b" Analysis: ========"
_RULE = re.compile(rb"[\w ]+ Analysis: -{8,}\r?\n")  # matched at a line start
_END_GRAPH = b"## END_GRAPH\n"
_BEGIN_GRAPH = b"## BEGIN_GRAPH"
_SHARDING_BEGIN = b"#OUTPUT_SHARDING_BEGIN"
_SHARDING_END = b"#OUTPUT_SHARDING_END"


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


def _after_last_graph(data: bytes) -> int:
    """The offset just past the last whole entry of save-tensors bytes (0: none): past its ``## END_GRAPH`` line,
    and past its ``#OUTPUT_SHARDING_END`` when an output-sharding block follows. torch_xla writes that block after
    the compilation, so an entry whose HLO is sharded (``sharding=``) and has no closed block yet waits (it is
    whole once its block closes or the next entry starts): read early, its outputs' sharding would be lost."""
    pos = data.rfind(b"\n" + _END_GRAPH)
    if pos == -1:
        return len(_END_GRAPH) if data.startswith(_END_GRAPH) else 0
    end = pos + 1 + len(_END_GRAPH)
    rest = data[end:].lstrip()
    if rest.startswith(_SHARDING_BEGIN):
        closed = data.find(_SHARDING_END, end)
        if closed != -1:
            return data.find(b"\n", closed) + 1 or len(data)
    elif rest or data.rfind(b"sharding=", data.rfind(_BEGIN_GRAPH, 0, pos) + 1, pos) == -1:
        return end  # something else follows (the next entry's start), or the graph is not sharded
    start = data.rfind(_BEGIN_GRAPH, 0, pos)  # wait for this entry's block: cut before the entry
    header = data.rfind(b"\n[", 0, start)
    return header + 1 if header != -1 else 0


_MODULE_NAME = re.compile(r"^module_(\d+)\.")
_SAVE_FILE = re.compile(r"^graphs\.hlo\.\d+(\.gz)?$")


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


def _grown(path: str, offset: int) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return offset


def _read(path: str, start: int, end: int) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(end - start)
    except OSError:
        return b""


class _Log:
    """A growing ``PT_XLA_DEBUG`` log read block by block: :meth:`new_events` parses the blocks closed since the
    last call (line numbers are the file's)."""

    def __init__(self, path: str, warnings: list[InputWarning]):
        self.path, self.warnings = path, warnings
        self.offset = 0
        self.lines = 0

    def new_events(self, closed: bool) -> list:
        size = _grown(self.path, self.offset)
        if size <= self.offset:
            return []
        data = _read(self.path, self.offset, size)
        cut = len(data) if closed else _before_its_post(data, _after_last_closed_block(data))
        if cut == 0:
            return []
        chunk = data[:cut].decode("utf-8", "replace")
        said = len(self.warnings)
        events = parse_debug_log(chunk, path=self.path, warnings=self.warnings)
        for e in events:
            e.line += self.lines
        for w in self.warnings[said:]:  # the chunk's numbering, shifted to the file's
            if w.line is not None:
                w.line += self.lines
        self.offset += cut
        self.lines += chunk.count("\n")
        return events


class SaveTensorsFollower(Follower):
    """A save-tensors file: one record per entry, read up to its last ``## END_GRAPH``."""

    def __init__(self, path: str):
        Follower.__init__(self, path)
        self.offset = 0
        self.lines = 0
        self.index = 0

    def files(self) -> list[str]:
        return [self.source]

    def poll(self) -> list[GraphRecord]:
        from hlodiff.dumps._io import lines
        from hlodiff.dumps.save_tensors import _Scanner

        size = _grown(self.source, self.offset)
        if size <= self.offset:
            return []
        data = _read(self.source, self.offset, size)
        cut = len(data) if self.closed else _after_last_graph(data)
        if cut == 0:
            return []
        chunk = data[:cut]
        records = []
        if chunk.strip():
            scanner = _Scanner(self.source, self.source, False, self.warnings)
            try:
                records = list(scanner.run(lines(io.BytesIO(chunk), self.source, self.warnings, skip_long=True)))
            except HlodiffError as err:  # damage in whole entries (not a half-written one): said once, read past
                self.warnings.append(InputWarning(err.message, err.path or self.source,
                                                  (err.line or 0) + self.lines or None))
        for r in records:  # the chunk's numbering, shifted to the file's
            r.byte_offset += self.offset
            r.start_line += self.lines
            r.index = self.index
            self.index += 1
        self.offset += cut
        self.lines += chunk.count(b"\n")
        return records


class GzipFollower(Follower):
    """A gzip-compressed save-tensors file: a gzip stream cannot be read at an offset, so it is read whole once it
    stopped growing for one poll (or is closed)."""

    def __init__(self, path: str):
        Follower.__init__(self, path)
        self.size: int | None = None
        self.done = False

    def files(self) -> list[str]:
        return [self.source]

    def poll(self) -> list[GraphRecord]:
        from hlodiff.dumps import iter_graphs

        size = _grown(self.source, -1)
        settled, self.size = size == self.size, size
        if self.done or not (settled or self.closed):
            return []
        self.done = True
        try:
            return list(iter_graphs(self.source, self.warnings))
        except HlodiffError as err:
            self.warnings.append(InputWarning(err.message, err.path or self.source, err.line))
            return []


class LogFollower(Follower):
    """A ``PT_XLA_DEBUG`` log alone: its events, no HLO (``watch`` says what torch_xla said, without a diff)."""

    def __init__(self, path: str):
        Follower.__init__(self, path)
        self.log = _Log(path, self.warnings)
        self.new: list = []

    def files(self) -> list[str]:
        return [self.source]

    def poll(self) -> list[GraphRecord]:
        for event in self.log.new_events(self.closed):
            if isinstance(event, CompilationEvent) and event.graph_hash:
                self.events.setdefault(event.graph_hash, event)
            self.new.append(event)
        return []

    def take_events(self) -> list:
        out, self.new = self.new, []
        return out


def follower_for(path: str, stage: str | None = None, *, wait: bool = True) -> Follower:
    """The follower of what ``path`` is (see the module docstring); a folder may still be empty (the run has not
    started writing: with ``wait``, it is decided once it has a log or modules). Raises :class:`HlodiffError` for
    a path that is none of them."""
    from hlodiff.dumps.follow_dump import DumpFollower, ExecutionsFollower, UndecidedFollower
    from hlodiff.dumps.manifest import read_manifest

    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, MANIFEST_NAME)):
            paths = read_manifest(path)
            if paths.save_tensors_file and (not paths.xla_dump or paths.capture == CAPTURE_SAVE_TENSORS):
                # the save file holds every execution's HLO and is what the report at exit reads first
                # (run_folder): under CPU_NUM_DEVICES=N (SPMD on CPU threads) record asks for it, and the XLA dump
                # it also names stays empty (review 5, F5: no live line, the dump was followed)
                return SaveTensorsFollower(paths.save_tensors_file)
            if paths.debug_log and paths.xla_dump:
                return ExecutionsFollower(path, paths.debug_log, paths.xla_dump, stage)
            if paths.xla_dump:
                return DumpFollower(paths.xla_dump, stage)
            raise HlodiffError("this recording names neither an XLA dump nor a save-tensors file", path=path)
        from hlodiff.dumps.run_folder import dump_inside

        saved = sorted(n for n in os.listdir(path) if _SAVE_FILE.match(n))
        if saved:
            return _file_follower(os.path.join(path, saved[0]))
        inner = dump_inside(path)
        if inner is not None and os.path.isfile(os.path.join(inner, MANIFEST_NAME)):
            return follower_for(inner, stage)
        dump = inner or path
        log = _log_in(dump) or _log_in(os.path.dirname(os.path.abspath(dump)))
        if log is not None:
            return ExecutionsFollower(path, log, dump, stage)
        return UndecidedFollower(path, stage) if wait else DumpFollower(dump, stage)
    if not os.path.exists(path):
        raise HlodiffError("no such file or folder", path=path)
    return _file_follower(path)


def _file_follower(path: str) -> Follower:
    head = _read(path, 0, 1 << 16)
    if head.startswith(b"\x1f\x8b"):
        return GzipFollower(path)
    if b"Analysis: " in head:
        return LogFollower(path)
    return SaveTensorsFollower(path)


def _log_in(folder: str) -> str | None:
    """A ``PT_XLA_DEBUG_LEVEL=2`` log in ``folder`` (one holding ``Execution Analysis`` blocks)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for name in names:
        p = os.path.join(folder, name)
        if name.endswith((".log", ".txt")) and not _MODULE_NAME.match(name) and os.path.isfile(p):
            if b"Execution Analysis: " in _read(p, 0, 1 << 20):
                return p
    return None
