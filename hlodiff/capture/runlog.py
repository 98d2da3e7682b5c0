"""What the sync hook learns cheaply from the run itself: how many executions torch_xla has logged so far, the graph
hash of each compilation, and XLA's compile time per compilation.

Stdlib only (the injected ``sitecustomize`` may load the hook into an interpreter without hlodiff).

* :class:`DebugLogCounter` follows the ``PT_XLA_DEBUG_LEVEL=2`` log torch_xla appends to (synchronously, inside the
  step marker), scanning only the bytes appended since the last call: the number of ``Execution Analysis`` blocks
  is the index the next execution will have in :mod:`hlodiff.dumps.executions`, which is what the live-tensor
  report's ``## SYNC <n>`` line must say.
* :class:`CompileTimes` appends one line per compilation to ``compile_times.tsv``, from torch_xla's
  ``CompileTime`` metric (nanoseconds per XLA compile), read only when the ``UncachedCompile`` counter moved::

      compilation<TAB>graph_hash<TAB>seconds<TAB>execution
      0<TAB>9baceec2bb32986d30ab2d8b25dd41ca<TAB>0.080631<TAB>0

  ``compilation`` is the 0-based compilation number (= the k-th ``Compilation Analysis`` block of the log = the
  k-th module of the XLA dump), ``execution`` the index of the execution it preceded (empty when unknown), and
  ``seconds`` empty when torch_xla's sample buffer no longer held the value.
* :class:`EntryCounter` counts the entries of a growing save-tensors file the same way, for a run where the user
  set ``XLA_SAVE_TENSORS_FILE``; :func:`count_save_entries` and :func:`count_executions` keep one counter per path.
"""

from __future__ import annotations

import os
import re
import threading

COMPILE_TIMES_HEADER = "compilation\tgraph_hash\tseconds\texecution\n"

_CHUNK = 1 << 20
_EXECUTION_END = re.compile(rb"^(?:Unexpected )?Execution Analysis: -{8,}\r?$", re.M)
_COMPILED_HASH = re.compile(rb"^Compilation Analysis:\s+Graph Hash: ([0-9a-fA-F]+)\r?$", re.M)
_COMPILED_OUTPUTS = re.compile(rb"^Compilation Analysis:\s+Number of Graph Outputs: (\d+)\r?$", re.M)
_EXECUTED_HASH = re.compile(rb"^(?:Unexpected )?Execution Analysis:\s+Graph Hash: ([0-9a-fA-F]+)\r?$", re.M)
_HEX = re.compile(rb"[0-9a-fA-F]+")
_ENTRY_HASH = re.compile(rb"^Graph Hash: ([0-9a-fA-F]+)\r?$", re.M)


class DebugLogCounter:
    """Executions and compilation hashes of a growing ``PT_XLA_DEBUG`` log, read incrementally."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.offset = 0
        self.executions = 0
        self.compiled: list[str] = []
        self.last_outputs: int | None = None
        """``Number of Graph Outputs`` of the latest compilation (how big a live-tensor report would be)."""
        self.last_executed: str | None = None
        """The ``Graph Hash`` of the latest execution (what the latest sync ran)."""
        self.ident: tuple[int, int] | None = None
        self.fd: int | None = None
        self.last_read: bytes | None = None
        """The bytes the latest :meth:`update` read, when it read whole lines in one piece (else None)."""
        self.last_delta = 0
        """Executions the latest :meth:`update` counted."""

    def update(self) -> "DebugLogCounter":
        """Bring the counts up to date. The sync hook calls this after every sync, so the common case (a block was
        appended) costs one read through a descriptor kept open; the file's identity is looked at only when
        nothing new was read (a replaced or truncated log reads nothing through the old descriptor)."""
        with self.lock:
            self.last_read, before = None, self.executions
            if self.fd is None or not self._read_new():
                self._check_file()
            self.last_delta = self.executions - before
        return self

    def take_repeat(self, block: bytes, executions: int, graph_hash: str | None) -> bool:
        """When exactly ``block`` was appended since the last read (bytes an earlier update read, which counted
        ``executions`` and ended on ``graph_hash``), move past it as that update did and return True. One ``fstat``
        and, when the size fits, one read and a comparison: how the sync hook follows a run that repeats itself
        without parsing the log again (a block with a compilation in it is never passed here)."""
        with self.lock:
            if self.fd is None:
                return False
            offset = self.offset
            try:
                if os.fstat(self.fd).st_size - offset != len(block) or os.pread(self.fd, len(block), offset) != block:
                    return False
            except OSError:
                return False
            self.offset = offset + len(block)
            self.executions += executions
            self.last_executed = graph_hash
            self.last_read, self.last_delta = block, executions
            return True

    def _check_file(self) -> None:
        try:
            st = os.stat(self.path)
        except OSError:
            return
        ident = (st.st_dev, st.st_ino)
        if ident != self.ident or st.st_size < self.offset:  # replaced or truncated: count again
            self.offset, self.executions, self.compiled, self.ident = 0, 0, [], ident
            self.last_outputs = self.last_executed = None
            self._close()
        if st.st_size > self.offset:
            self._read_new()

    def _read_new(self) -> bool:
        """Read the whole lines appended since the last read; False when there was nothing at all."""
        try:
            if self.fd is None:
                self.fd = os.open(self.path, os.O_RDONLY)
            size = os.fstat(self.fd).st_size  # (os.pread allocates all it is asked for: ask for what is there)
            if size <= self.offset:
                return False
            start = self.offset
            while self.offset < size:
                buf = os.pread(self.fd, min(_CHUNK, size - self.offset), self.offset)
                cut = buf.rfind(b"\n") + 1
                if not cut:
                    if len(buf) == _CHUNK:  # one line longer than a chunk: the general reader carries it over
                        self.offset = scan_lines(self.path, self.offset, size, self._count)
                    return True  # else the last line is still being written: read next time
                whole = cut == len(buf) and self.offset + cut == size and self.offset == start
                self._count(buf, cut)
                self.offset += cut
                self.last_read = buf if whole else None
            return True
        except OSError:
            self._close()
            return False

    def _close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def _count(self, buf: bytes, cut: int) -> None:
        """Substring searches, not multi-line regular expressions: a cache hit's block (about 800 bytes) is read
        at every sync, and the expressions cost 30 us on it, the searches 3."""
        self.executions += buf.count(b"Execution Analysis: --------", 0, cut)
        if b"Compilation Analysis" in buf:  # a cache hit's block has none
            self.compiled += [h.decode("ascii") for h in _COMPILED_HASH.findall(buf, 0, cut)]
            outputs = _COMPILED_OUTPUTS.findall(buf, 0, cut)
            if outputs:
                self.last_outputs = int(outputs[-1])
        executed = _last_executed_hash(buf, cut)
        if executed:
            self.last_executed = executed


def _last_executed_hash(buf: bytes, cut: int) -> str | None:
    """The hash on the last ``[Unexpected ]Execution Analysis:   Graph Hash: <hex>`` line of ``buf[:cut]``."""
    end = cut
    while True:
        i = buf.rfind(b"Graph Hash: ", 0, end)
        if i < 0:
            return None
        start = buf.rfind(b"\n", 0, i) + 1
        prefix = buf[start:i].rstrip()
        if prefix in (b"Execution Analysis:", b"Unexpected Execution Analysis:"):
            stop = buf.find(b"\n", i, cut)
            value = buf[i + 12:stop if stop >= 0 else cut].strip()
            if _HEX.fullmatch(value):
                return value.decode("ascii")
        end = start


def scan_lines(path: str, offset: int, size: int, count) -> int:
    """Read ``path`` from ``offset`` to ``size`` in chunks, calling ``count(buf, cut)`` on the whole lines of each
    (``buf[:cut]``); returns the offset after the last whole line (a line still being written is read next time)."""
    try:
        f = open(path, "rb")
    except OSError:
        return offset
    with f:
        f.seek(offset)
        carry = b""
        remaining = size - offset
        while remaining > 0:
            chunk = f.read(min(_CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            buf = carry + chunk
            cut = buf.rfind(b"\n") + 1
            count(buf, cut)
            offset += cut
            carry = buf[cut:]
    return offset


class CompileTimes:
    """Appends torch_xla's ``CompileTime`` samples to a TSV, one line per compilation, in order."""

    def __init__(self, path: str, log: DebugLogCounter | None):
        self.path = os.path.abspath(path)
        self.log = log
        self.written = 0
        self.lock = threading.Lock()

    def flush(self, metric_data, execution: int | None = None) -> None:
        """Write the compilations not written yet. ``metric_data`` is ``torch_xla.debug.metrics.metric_data``."""
        with self.lock:
            data = metric_data("CompileTime")
            if not data:
                return
            total, samples = int(data[0]), list(data[2] or ())
            new = total - self.written
            if new <= 0:
                return
            values: list[float | None] = [None] * max(0, new - len(samples)) + [v for _, v in samples[-new:]]
            hashes = self.log.update().compiled if self.log is not None else []
            lines = []
            for k, value in enumerate(values, start=self.written):
                graph_hash = hashes[k] if k < len(hashes) else ""
                seconds = f"{value / 1e9:.6f}" if value is not None else ""
                lines.append(f"{k}\t{graph_hash}\t{seconds}\t{'' if execution is None else execution}\n")
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                if f.tell() == 0:
                    f.write(COMPILE_TIMES_HEADER)
                f.writelines(lines)
            self.written = total


# -- counting save-tensors entries and executions ----------------------------------------------------------------

class EntryCounter:
    """Counts the entries of a growing save-tensors file, scanning only what was appended since the last call.

    An entry starts with a header line ``[ScheduleSyncTensorsGraph]`` (``[Name]``); a file that was replaced or
    truncated is counted again from the start.
    """

    def __init__(self, path: str):
        self.path = path
        self._header = re.compile(rb"^\[\w+\]\r?$", re.M)
        self._lock = threading.Lock()
        self._offset = 0
        self._count = 0
        self._ident: tuple[int, int] | None = None
        self.last_hash: str | None = None
        """The ``Graph Hash`` of the newest entry read (what the latest sync executed)."""

    def count(self) -> int:
        with self._lock:
            try:
                st = os.stat(self.path)
            except OSError:
                self._offset = self._count = 0
                self._ident = None
                return 0
            ident = (st.st_dev, st.st_ino)
            if ident != self._ident or st.st_size < self._offset:
                self._offset = self._count = 0
                self._ident = ident
            if st.st_size > self._offset:
                self._scan(st.st_size)
            return self._count

    def _scan(self, size: int) -> None:
        self._offset = scan_lines(self.path, self._offset, size, self._add)

    def _add(self, buf: bytes, cut: int) -> None:
        self._count += len(self._header.findall(buf, 0, cut))
        hashes = _ENTRY_HASH.findall(buf, 0, cut)
        if hashes:
            self.last_hash = hashes[-1].decode("ascii")


_COUNTERS: dict[str, EntryCounter] = {}


def count_save_entries(path: str | os.PathLike[str]) -> int:
    """Number of entries in a torch_xla save-tensors file (0 when it does not exist); incremental per path."""
    return save_entries(path).count()


def save_entries(path: str | os.PathLike[str]) -> EntryCounter:
    """The one :class:`EntryCounter` of a save-tensors file (call ``count()`` to bring it up to date)."""
    key = os.path.abspath(os.fspath(path))
    counter = _COUNTERS.get(key)
    if counter is None:
        counter = _COUNTERS.setdefault(key, EntryCounter(key))
    return counter


_LOG_COUNTERS: dict = {}


def count_executions(path: str | os.PathLike[str]) -> int:
    """Executions logged so far in a ``PT_XLA_DEBUG_LEVEL=2`` log (0 when it does not exist); incremental per path."""
    key = os.path.abspath(os.fspath(path))
    counter = _LOG_COUNTERS.get(key)
    if counter is None:
        counter = _LOG_COUNTERS.setdefault(key, DebugLogCounter(key))
    return counter.update().executions
