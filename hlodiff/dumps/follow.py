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

from hlodiff.dumps.debug_log import CompilationEvent
from hlodiff.dumps.follow_dump import DumpFollower, ExecutionsFollower, module_files, torch_xla_modules
from hlodiff.dumps.follower_base import Follower, GrowingDebugLog, grown_size, read_range
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.manifest import CAPTURE_SAVE_TENSORS, MANIFEST_NAME
from hlodiff.errors import HlodiffError, InputWarning

_END_GRAPH = b"## END_GRAPH\n"
_BEGIN_GRAPH = b"## BEGIN_GRAPH"
_SHARDING_BEGIN = b"#OUTPUT_SHARDING_BEGIN"
_SHARDING_END = b"#OUTPUT_SHARDING_END"


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
        from hlodiff.dumps.save_tensors_scanner import SaveTensorsScanner

        size = grown_size(self.source, self.offset)
        if size <= self.offset:
            return []
        data = read_range(self.source, self.offset, size)
        cut = len(data) if self.closed else _after_last_graph(data)
        if cut == 0:
            return []
        chunk = data[:cut]
        records = []
        if chunk.strip():
            scanner = SaveTensorsScanner(self.source, self.source, False, self.warnings)
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

        size = grown_size(self.source, -1)
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
        self.log = GrowingDebugLog(path, self.warnings)
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


class UndecidedFollower(Follower):
    """A folder whose capture is not known yet: ``watch`` started before the job wrote much. It is looked at again
    at each poll until what it holds decides (:meth:`_decide`).

    Review 6 (p04): torch_xla writes a ``PT_XLA_DEBUG_LEVEL=2`` log's first block (``Compilation Analysis``) as a
    graph is traced, the dump's first module as XLA starts compiling it, and the log's first ``Execution
    Analysis`` only once that compilation ended: seconds later on a loaded machine. Waiting a fixed 2 s for an
    execution after the first module took the dump alone for good (one line, no sync line, no steps, no pattern).
    A torch_xla dump alone is now decided by the run itself: once a second module exists, the first graph has run,
    so a level-2 log would hold its execution by then. A JAX module never comes with such a log: taken at once."""

    def __init__(self, path: str, stage: str | None):
        Follower.__init__(self, path)
        self.stage = stage
        self.inner: Follower | None = None

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
        found = follower_for(self.source, self.stage, wait=False)
        found.warnings, found.events = self.warnings, self.events  # the lists its readers were given stay ours
        if isinstance(getattr(found, "log", None), GrowingDebugLog):
            found.log.warnings = self.warnings
        if self.closed or not isinstance(found, (DumpFollower, ExecutionsFollower)):
            self.inner = found
            return
        by_number = module_files(found.dump if isinstance(found, ExecutionsFollower) else found.source)
        if not by_number:
            return  # a log's first block comes before the dump folder and its first module: wait for them
        if isinstance(found, ExecutionsFollower) or len(by_number) > 1 or not torch_xla_modules(by_number):
            self.inner = found


def follower_for(path: str, stage: str | None = None, *, wait: bool = True) -> Follower:
    """The follower of what ``path`` is (see the module docstring); a folder may still be empty (the run has not
    started writing: with ``wait``, it is decided once it has a log or modules). Raises :class:`HlodiffError` for
    a path that is none of them."""
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
        if wait and (log is None or not module_files(dump)):
            return UndecidedFollower(path, stage)  # its dump folder (or log) may be written later
        if log is not None:
            return ExecutionsFollower(path, log, dump, stage)
        return DumpFollower(dump, stage)
    if not os.path.exists(path):
        raise HlodiffError("no such file or folder", path=path)
    return _file_follower(path)


def _file_follower(path: str) -> Follower:
    head = read_range(path, 0, 1 << 16)
    if head.startswith(b"\x1f\x8b"):
        return GzipFollower(path)
    if b"Analysis: " in head:
        return LogFollower(path)
    return SaveTensorsFollower(path)


def _log_in(folder: str) -> str | None:
    """A ``PT_XLA_DEBUG`` log in ``folder``: one holding ``Execution Analysis`` blocks (level 2), or ``Compilation
    Cause`` blocks alone (level 1: each compilation with its sync, review 9 F1)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for name in names:
        p = os.path.join(folder, name)
        if name.endswith((".log", ".txt")) and not _MODULE_NAME.match(name) and os.path.isfile(p):
            head = read_range(p, 0, 1 << 20)
            if b"Execution Analysis: " in head or b"Compilation Analysis: Compilation Cause" in head:
                return p
    return None
