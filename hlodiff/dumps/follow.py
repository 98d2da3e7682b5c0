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
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps.debug_log import CompilationEvent, ExecutionEvent, parse_debug_log
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.manifest import MANIFEST_NAME
from hlodiff.errors import HlodiffError, InputWarning

_CLOSER = b" Analysis: ========"
_RULE = re.compile(rb"[\w ]+ Analysis: -{8,}\r?\n")  # matched at a line start
_END_GRAPH = b"## END_GRAPH\n"


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


def _after_last_graph(data: bytes) -> int:
    """The offset just past the last ``## END_GRAPH`` line of save-tensors bytes (0: none)."""
    pos = data.rfind(b"\n" + _END_GRAPH)
    if pos != -1:
        return pos + 1 + len(_END_GRAPH)
    return len(_END_GRAPH) if data.startswith(_END_GRAPH) else 0
_MODULE_NAME = re.compile(r"^module_(\d+)\.")
_TORCH_XLA_MODULES = ("SyncTensorsGraph", "IrToHlo")
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
        cut = len(data) if closed else _after_last_closed_block(data)
        if cut == 0:
            return []
        chunk = data[:cut].decode("utf-8", "replace")
        events = parse_debug_log(chunk, path=self.path, warnings=self.warnings)
        for e in events:
            e.line += self.lines
        self.offset += cut
        self.lines += chunk.count("\n")
        return events


_KNOWN_FILES: dict[str, object] = {}
"""Path -> its :class:`~hlodiff.dumps.xla_dump.DumpFile` (or None: not HLO), so that each poll opens only the
files that are new since the last one; a file that could not be read yet is not remembered."""


def _module_files(dump: str) -> dict[int, list]:
    """Module number -> its HLO files (:class:`hlodiff.dumps.xla_dump.DumpFile`), in stage order, listed now; a
    module file is opened once (to read its ``HloModule`` line), at the first poll that sees it."""
    from hlodiff.dumps.xla_dump import DumpFile, _NAME_RE, _NOT_HLO_SUFFIXES, _read_dump_file

    out: dict[int, list] = {}
    try:
        entries = list(os.scandir(dump))
    except OSError:
        return out
    for entry in entries:
        m = _NAME_RE.match(entry.name)
        if m is None or "thunk" in entry.name or m.group(2).endswith(_NOT_HLO_SUFFIXES):
            continue
        if entry.path not in _KNOWN_FILES:
            if not entry.is_file() or b"\n" not in _read(entry.path, 0, 1 << 16):
                continue  # its HloModule line is not whole yet: looked at again next time
            if len(_KNOWN_FILES) > 1 << 16:
                _KNOWN_FILES.clear()
            _KNOWN_FILES[entry.path] = _read_dump_file(entry.path, int(m.group(1)), m.group(2))
        found = _KNOWN_FILES[entry.path]
        if found is not None:
            out.setdefault(found.module_number, []).append(found)
    for files in out.values():
        files.sort(key=DumpFile.order)
    return out


def _chosen(files: list, stage: str | None):
    from hlodiff.dumps.xla_dump import select

    chosen = select(files, stage)
    return chosen[0] if chosen else None


class ExecutionsFollower(Follower):
    """A recording (or a dump folder with its ``PT_XLA_DEBUG_LEVEL=2`` log): one record per execution."""

    def __init__(self, source: str, log: str, dump: str, stage: str | None = None):
        Follower.__init__(self, source)
        self.log = _Log(log, self.warnings)
        self.dump, self.stage = dump, stage
        self.compilations: list[CompilationEvent] = []
        self.modules: dict[str, GraphRecord] = {}  # graph hash -> the module of its compilation
        self.waiting: list[ExecutionEvent] = []  # executions whose module is not in the dump yet
        self.index = 0
        self.paired = 0
        self.modules_only: DumpFollower | None = None
        """A recording of a program that is not torch_xla (JAX): no log will come, each module is a compilation."""

    def files(self) -> list[str]:
        return [self.log.path, self.dump]

    def poll(self) -> list[GraphRecord]:
        if self.modules_only is None and not self.compilations and self._not_torch_xla():
            self.modules_only = DumpFollower(self.dump, self.stage)
        if self.modules_only is not None:
            self.modules_only.closed = self.closed
            return self.modules_only.poll()
        for event in self.log.new_events(self.closed):
            if isinstance(event, CompilationEvent):
                self.compilations.append(event)
                if event.graph_hash:
                    self.events.setdefault(event.graph_hash, event)
            else:
                self.waiting.append(event)
        self._pair_modules()
        out = []
        while self.waiting:
            event = self.waiting[0]
            module = self.modules.get(event.graph_hash or "")
            if module is None:
                if not self.closed and self.paired < len(self.compilations):
                    break  # its module is still being written
                self.warnings.append(InputWarning(
                    f"execution {self.index} (graph hash {event.graph_hash}) has no compiled HLO in the dump "
                    "(compiled before the capture started?); skipped", self.log.path, event.line))
                self.waiting.pop(0)
                self.index += 1
                continue
            self.waiting.pop(0)
            out.append(GraphRecord(path=module.path, index=self.index, kind="executions", start_line=1,
                                   source=self.source, graph_name=event.graph_name, frames=event.frames,
                                   graph_hash=event.graph_hash, module_number=module.module_number,
                                   module_name=module.module_name, stage=module.stage,
                                   proto_path=module.proto_path))
            self.index += 1
        return out

    def _not_torch_xla(self) -> bool:
        """The dump's first module is not torch_xla's (``SyncTensorsGraph.N``, ``IrToHlo.N``): a JAX program run
        under ``record``, whose log never comes."""
        by_number = _module_files(self.dump)
        if not by_number:
            return False
        first = by_number[min(by_number)][0]
        return not first.module_name.startswith(_TORCH_XLA_MODULES)

    def _pair_modules(self) -> None:
        """The k-th compilation of the log is the k-th module of the dump (its files are complete by the time the
        log says the compilation ended)."""
        from hlodiff.dumps.hlo_proto import proto_beside

        if self.paired >= len(self.compilations):
            return
        by_number = _module_files(self.dump)
        numbers = sorted(by_number)
        for k in range(self.paired, min(len(self.compilations), len(numbers))):
            chosen = _chosen(by_number[numbers[k]], self.stage)
            event = self.compilations[k]
            if chosen is None:
                break
            self.paired = k + 1
            record = GraphRecord(path=chosen.path, index=k, kind="xla_dump", start_line=1, source=self.dump,
                                 module_number=chosen.module_number, module_name=chosen.module_name,
                                 stage=chosen.stage, proto_path=proto_beside(chosen.path))
            self.modules[event.graph_hash or f"#{k}"] = record


class DumpFollower(Follower):
    """An XLA dump folder alone: one record per module (each one is a compilation)."""

    def __init__(self, dump: str, stage: str | None = None):
        Follower.__init__(self, dump)
        self.stage = stage
        self.done: set[int] = set()
        self.sizes: dict[str, int] = {}
        self.index = 0

    def files(self) -> list[str]:
        return [self.source]

    def poll(self) -> list[GraphRecord]:
        from hlodiff.dumps.hlo_proto import proto_beside

        by_number = _module_files(self.source)
        numbers = sorted(n for n in by_number if n not in self.done)
        out = []
        for position, number in enumerate(numbers):
            chosen = _chosen(by_number[number], self.stage)
            if chosen is None:
                continue
            later = position + 1 < len(numbers)
            if not (self.closed or later or self._settled(chosen.path)):
                break  # modules are taken in order: a later one waits for this one
            self.done.add(number)
            out.append(GraphRecord(path=chosen.path, index=self.index, kind="xla_dump", start_line=1,
                                   source=self.source, module_number=number, module_name=chosen.module_name,
                                   stage=chosen.stage, proto_path=proto_beside(chosen.path)))
            self.index += 1
        return out

    def _settled(self, path: str) -> bool:
        """Same size as at the previous poll, and the text ends with a computation's closing brace."""
        size = _grown(path, -1)
        before, self.sizes[path] = self.sizes.get(path), size
        if size <= 0 or before != size:
            return False
        tail = _read(path, max(0, size - 64), size).rstrip()
        return tail.endswith(b"}")


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


class UndecidedFollower(Follower):
    """A folder with no log of executions yet: ``watch`` started before the job wrote much. torch_xla writes the
    first module as it compiles and the log's first ``Execution Analysis`` block right after, so the folder is
    looked at again at each poll: a log appears (cache hits and steps will be seen), or :data:`LOG_WAIT` seconds
    pass after the first module without one (a JAX dump, a log not written: each module is a compilation)."""

    LOG_WAIT = 2.0

    def __init__(self, path: str, stage: str | None):
        Follower.__init__(self, path)
        self.stage = stage
        self.inner: Follower | None = None
        self.first_module_at: float | None = None

    def files(self) -> list[str]:
        return self.inner.files() if self.inner is not None else [self.source]

    def poll(self) -> list[GraphRecord]:
        if self.inner is None:
            self._decide()
        if self.inner is None:
            return []
        self.inner.closed = self.closed
        return self.inner.poll()

    def _decide(self) -> None:
        import time

        found = follower_for(self.source, self.stage, wait=False)
        found.warnings, found.events = self.warnings, self.events  # the lists its readers were given stay ours
        if isinstance(getattr(found, "log", None), _Log):
            found.log.warnings = self.warnings
        if not isinstance(found, DumpFollower):
            self.inner = found
            return
        if not _module_files(found.source):
            if self.closed:
                self.inner = found
            return
        now = time.monotonic()
        if self.first_module_at is None:
            self.first_module_at = now
        if self.closed or now - self.first_module_at >= self.LOG_WAIT:
            self.inner = found


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
    from hlodiff.dumps.manifest import read_manifest

    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, MANIFEST_NAME)):
            paths = read_manifest(path)
            if paths.save_tensors_file and not paths.xla_dump:
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
