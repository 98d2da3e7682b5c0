"""The save-tensors format's line-driven scanner: torch_xla save-tensors files (``XLA_SAVE_TENSORS_FILE=P
XLA_SAVE_TENSORS_FMT=hlo`` writes ``P.<ordinal>``), read from lines a caller gives (a whole file, or a grown chunk of
one being written: :mod:`hlodiff.dumps.follow`).

One entry per sync, appended by torch_xla 2.9 in three separate writes::

    [ScheduleSyncTensorsGraph]
    Graph Name: NAME                          only under torch_xla.compile(name=...)
    TensorsGraphInfo:
      sync (/site-packages/torch_xla/torch_xla.py:87)      Python frames, innermost first
      <module> (/home/user/train.py:16)

    Root Hashes: (987fb93999e5ce7ae1459f2437f59ad, 7748...)   hashes are not zero-padded (31 digits happen)

    ## BEGIN_GRAPH
    HloModule IrToHlo.128, entry_computation_layout={...}
    ...

                                              <- end of the first write (graph), then, before compiling:
    Graph Hash: c94ab09d2cce1a7b2ff8f9ec2755830a

    ## END_GRAPH

    #OUTPUT_SHARDING_BEGIN                    only for sharded graphs, written after compilation, so it
                                              follows END_GRAPH and belongs to the entry before it
    f32[8,4] {devices=[4,1]0,1,2,3}

    #OUTPUT_SHARDING_END

Releases before Dec 2023 wrote ``Hashes: (...)`` and ``## END_GRAPH`` right after the HLO, with no Graph Hash.

The scan is streaming over binary lines with byte offsets: the body of a graph (almost all of the file) costs one
first-byte test per line, and no HLO text is kept (except for gzip input, see :class:`GraphRecord`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from hlodiff.dumps._io import BOM, OverlongLine, Packer, decode
from hlodiff.dumps.frames import parse_frame
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.limits import LIMIT_VARIABLES, Limits, limit_error
from hlodiff.errors import GraphCutOff, HlodiffError, InputWarning
from hlodiff.dumps.save_tensors_sniff import HEADER_RE as _HEADER_RE
from hlodiff.dumps.shared_values import UNSEEN, SharedValues
from hlodiff.hlo.model import SourceFrame

_HASHES_RE = re.compile(r"^(?:Root )?Hashes: \((.*)\)\s*$")
_MODULE_NAME_RE = re.compile(rb"^HloModule\s+([^\s,]+)")
_BODY_SPECIAL = (b"G", b"#", b"[", b"E")
_OTHER_FORMATS = (
    (b"IR {", "lazy IR text (XLA_SAVE_TENSORS_FMT=text)"),
    (b"digraph", "a dot graph (XLA_SAVE_TENSORS_FMT=dot)"),
    (b"module @", "StableHLO (XLA_SAVE_TENSORS_FMT=stablehlo)"),
)

MAX_WARNINGS = 100
"""Warnings per file: a damaged file can have one on every line, and the user needs the first few."""

# Scanner states.
_OUT, _HEAD, _TAIL, _SHARD = "out", "head", "tail", "shard"


@dataclass(slots=True)
class _Entry:
    """An entry being read."""

    index: int
    line: int
    graph_name: str | None = None
    frames: list[SourceFrame] = field(default_factory=list)
    root_hashes: tuple[str, ...] = ()
    graph_hash: str | None = None
    module_name: str | None = None
    text_start: int = -1
    text_line: int = 0
    text_end: int = -1
    head_start: int = 0
    saw_entry: bool = False
    packed: bytes | None = None
    tail: bytes = b""
    sharding: list[str] = field(default_factory=list)
    in_frames: bool = False
    complete: bool = True
    overlong: OverlongLine | None = None
    """A line of the entry longer than the limit (read past, not kept): the entry is skipped, the next ones are read."""


class SaveTensorsScanner:
    """Line-driven state machine. ``pos`` is the byte offset just past the line being handled, ``lineno`` its number.

    A finished entry waits in ``pending`` until the next entry starts (an output-sharding block may follow it).
    """

    def __init__(self, path: str, source: str, gz: bool, warnings: list[InputWarning] | None,
                 limits: Limits | None = None):
        self.limits = limits or Limits.from_env()
        self.warned = 0
        self.path = path
        self.source = source
        self.gz = gz
        self.warnings = warnings
        self.pos = 0
        self.lineno = 0
        self.state = _OUT
        self.entry: _Entry | None = None
        self.pending: _Entry | None = None
        self.count = 0
        self.junk_reported = False
        self.ready: list[GraphRecord] = []
        self.shared = SharedValues()
        self.frames_seen: dict[str, SourceFrame | None] = {}
        self.recorded = 0
        self.overlong_error: HlodiffError | None = None  # the first over-long line that cost a graph

    # -- driving ------------------------------------------------------------------------------------------------

    def run(self, it: Iterator[bytes]) -> Iterator[GraphRecord]:
        carry: bytes | None = None
        while True:
            line = carry if carry is not None else next(it, None)
            carry = None
            if line is None:
                break
            self.lineno += 1
            self.pos += len(line)
            if type(line) is OverlongLine:
                self.pos += line.size
                self._overlong(line)
                continue
            if self.lineno == 1 and line.startswith(BOM):
                line = line[len(BOM):]  # offsets above count it; the header below must not see it
            if line.endswith(b"\n") or not self._partial_last_line(line):
                carry = self._dispatch(line, it)
            if self.ready:
                yield from self.ready
                self.ready.clear()
        self._finish_file()
        yield from self.ready

    def _overlong(self, line: OverlongLine) -> None:
        """A line past the limit: the entry it belongs to is skipped when it ends; between entries, nothing is lost."""
        if self.entry is not None and self.state is _HEAD:
            self.entry.overlong = self.entry.overlong or line
        else:
            self._warn(f"{line.error.message}: skipped", line.lineno)

    def _partial_last_line(self, line: bytes) -> bool:
        """A last line without its newline was cut mid-write; True when it needs no further handling."""
        if self.state is _HEAD or self.state is _SHARD:
            return True  # the entry is reported as cut off (or its sharding block) at the end of the file
        if self.state is _OUT and line.startswith(b"["):
            self._start_entry()  # a header cut short: the new entry is reported as cut off
            return True
        return False

    def _dispatch(self, line: bytes, it: Iterator[bytes]) -> bytes | None:
        if self.state is _OUT:
            self._out_line(line)
        elif self.state is _HEAD:
            return self._head_line(line, it)
        elif self.state is _TAIL:
            self._tail_line(line)
        else:
            self._shard_line(line)
        return None

    # -- between entries ----------------------------------------------------------------------------------------

    def _out_line(self, line: bytes) -> None:
        stripped = line.strip()
        if not stripped:
            return
        if _HEADER_RE.match(line):
            self._start_entry()
        elif stripped == b"#OUTPUT_SHARDING_BEGIN":
            self._start_sharding()
        elif not self.junk_reported:
            self.junk_reported = True
            self._warn("unexpected text between graphs; skipped")

    def _start_entry(self) -> None:
        self.flush_pending()
        self.entry = _Entry(index=self.count, line=self.lineno, head_start=self.pos)
        self.count += 1
        self.state = _HEAD
        self.junk_reported = False

    def _start_sharding(self) -> None:
        if self.pending is None:
            self._warn("output sharding block without a graph before it; skipped")
        self.state = _SHARD

    def _shard_line(self, line: bytes) -> None:
        stripped = line.strip()
        if stripped == b"#OUTPUT_SHARDING_END":
            self.state = _OUT
        elif _HEADER_RE.match(line):
            self._warn("output sharding block not closed by #OUTPUT_SHARDING_END")
            self._start_entry()
        elif stripped and self.pending is not None:
            self.pending.sharding.append(decode(stripped))

    # -- entry header -------------------------------------------------------------------------------------------

    def _head_line(self, line: bytes, it: Iterator[bytes]) -> bytes | None:
        entry = self.entry
        assert entry is not None
        if self.pos - entry.head_start > self.limits.header_bytes:
            raise limit_error(self.path, self.lineno, f"the header of graph {entry.index} never ends",
                              self.limits.header_bytes, LIMIT_VARIABLES["header_bytes"])
        text = decode(line).rstrip("\r\n")
        if entry.in_frames and text.startswith("  "):
            self._frame_line(entry, text)
            return None
        entry.in_frames = False
        stripped = text.strip()
        if stripped == "## BEGIN_GRAPH":
            return self._read_body(entry, it)
        if not stripped:
            pass
        elif stripped == "TensorsGraphInfo:":
            entry.in_frames = True
        elif stripped.startswith("Graph Name:"):
            entry.graph_name = stripped[len("Graph Name:"):].strip() or None
        elif (m := _HASHES_RE.match(stripped)) is not None:
            entry.root_hashes = self.shared(tuple(h.strip() for h in m.group(1).split(",") if h.strip()))
        elif _HEADER_RE.match(line):
            self._warn(f"graph {entry.index} has no '## BEGIN_GRAPH' line; skipped", entry.line)
            self._start_entry()
        else:
            self._warn(f"unexpected line in the header of graph {entry.index}; ignored")
        return None

    def _frame_line(self, entry: _Entry, text: str) -> None:
        frame = self.frames_seen.get(text, UNSEEN)
        if frame is UNSEEN:
            if len(self.frames_seen) >= SharedValues.SIZE:
                self.frames_seen.clear()
            frame = self.frames_seen[text] = parse_frame(text)
        if frame is None:
            self._warn(f"unreadable Python frame in graph {entry.index}; ignored")
        else:
            entry.frames.append(frame)

    # -- entry body (the hot loop) ------------------------------------------------------------------------------

    def _read_body(self, entry: _Entry, it: Iterator[bytes]) -> bytes | None:
        """Consume the HLO lines after ``## BEGIN_GRAPH``; return the line that ends them (unconsumed), if any."""
        entry.text_start = pos = self.pos
        entry.text_line = lineno = self.lineno + 1
        lineno -= 1
        packer = Packer() if self.gz else None
        end: bytes | None = None
        first = True
        limit = pos + self.limits.graph_bytes
        for line in it:
            if type(line) is OverlongLine:  # the graph is skipped when it ends; the lines after it still count
                entry.overlong = entry.overlong or line
                lineno += 1
                pos += line.size
                first = False
                continue
            if line[:1] in _BODY_SPECIAL:
                if line.startswith(b"ENTRY"):
                    entry.saw_entry = True
                elif _ends_body(line):
                    end = line
                    break
            lineno += 1
            if first:
                self._check_format(line, lineno, entry)
                first = False
            if packer is not None:
                packer.append(line)
            pos += len(line)
            if pos > limit:
                raise limit_error(self.path, lineno, f"graph {entry.index} is too big (its HLO text never ends?)",
                                  self.limits.graph_bytes, LIMIT_VARIABLES["graph_bytes"])
        entry.text_end = pos
        if packer is not None:
            entry.packed, entry.tail = packer.finish()
        self.pos, self.lineno = pos, lineno
        if end is None:
            self._missing_trailer(entry)  # end of file inside the HLO text: a killed run
        else:
            self.state = _TAIL
        return end

    def _check_format(self, line: bytes, lineno: int, entry: _Entry) -> None:
        m = _MODULE_NAME_RE.match(line)
        if m is not None:
            entry.module_name = decode(m.group(1))
            return
        for prefix, what in _OTHER_FORMATS:
            if line.startswith(prefix):
                raise HlodiffError(f"graph {entry.index} is {what}, not HLO text: rerun with XLA_SAVE_TENSORS_FMT=hlo",
                                   path=self.path, line=lineno)

    # -- entry trailer ------------------------------------------------------------------------------------------

    def _tail_line(self, line: bytes) -> None:
        entry = self.entry
        assert entry is not None
        stripped = line.strip()
        if not stripped:
            return
        if stripped.startswith(b"Graph Hash:"):
            self._graph_hash_line(entry, line)
        elif stripped == b"## END_GRAPH":
            self._finish_entry(entry)
        elif _HEADER_RE.match(line):
            self._finish_without_end(entry)
            self._start_entry()
        elif stripped == b"#OUTPUT_SHARDING_BEGIN":
            self._finish_without_end(entry)
            self._start_sharding()
        else:
            self._warn(f"unexpected line after the HLO of graph {entry.index}; ignored")

    def _graph_hash_line(self, entry: _Entry, line: bytes) -> None:
        value = decode(line.strip()[len(b"Graph Hash:"):]).strip()
        if line.endswith(b"\n") and value:
            entry.graph_hash = value
        # else: the hash itself was cut off; _finish_file treats the entry as having no hash

    def _finish_without_end(self, entry: _Entry) -> None:
        if entry.graph_hash is not None:
            self._finish_entry(entry)
        else:
            self._missing_trailer(entry)

    # -- completing entries -------------------------------------------------------------------------------------

    def _finish_entry(self, entry: _Entry, complete: bool = True) -> None:
        self.flush_pending()
        if entry.overlong is not None:
            self._skip_overlong(entry)
            return
        entry.complete = complete
        self.pending = entry
        self.entry = None
        self.state = _OUT

    def _missing_trailer(self, entry: _Entry) -> None:
        """The HLO ended but neither ``Graph Hash`` nor ``## END_GRAPH`` followed (the run stopped in between).

        A whole module is still worth diffing, so it is kept, marked incomplete; a cut one is skipped.
        """
        if self._hlo_is_whole(entry):
            self._warn(f"graph {entry.index} has no Graph Hash (the run stopped before writing it); "
                       "kept as incomplete", entry.line)
            self._finish_entry(entry, complete=False)
        else:
            self._cut(entry)

    def _skip_overlong(self, entry: _Entry) -> None:
        line = entry.overlong
        self.overlong_error = self.overlong_error or line.error
        self._warn(f"{line.error.message}: graph {entry.index} is skipped (the graphs after it are read)", line.lineno)
        self.entry = None
        self.state = _OUT

    def _cut(self, entry: _Entry) -> None:
        if entry.overlong is not None:
            self._skip_overlong(entry)
            return
        self._warn(f"graph {entry.index} cut off mid-write (it begins at line {entry.line}; the file ends here); "
                   "skipped", self.lineno, cut=entry.index)
        self.entry = None
        self.state = _OUT

    def _hlo_is_whole(self, entry: _Entry) -> bool:
        """The entry computation is printed last, so the text is whole when an ``ENTRY`` line is followed by a
        closing ``}`` as the last non-blank line."""
        return entry.saw_entry and (b"\n" + self._entry_tail(entry).rstrip()).endswith(b"\n}")

    def _entry_tail(self, entry: _Entry) -> bytes:
        if entry.packed is not None:
            return entry.tail
        start = max(entry.text_start, entry.text_end - Packer.TAIL)
        with open(self.path, "rb") as f:
            f.seek(start)
            return f.read(entry.text_end - start)

    def flush_pending(self) -> None:
        entry = self.pending
        if entry is None:
            return
        self.pending = None
        self.recorded += 1
        self.ready.append(self._record(entry))

    def _record(self, entry: _Entry) -> GraphRecord:
        packed, entry.packed = entry.packed, None
        return GraphRecord(
            path=self.path, index=entry.index, kind="save_tensors", start_line=entry.text_line, source=self.source,
            graph_name=self.shared(entry.graph_name), frames=self.shared(tuple(entry.frames)),
            root_hashes=entry.root_hashes, graph_hash=self.shared(entry.graph_hash),
            output_sharding=self.shared(tuple(entry.sharding)), module_name=self.shared(entry.module_name),
            complete=entry.complete, byte_offset=entry.text_start, byte_length=entry.text_end - entry.text_start,
            packed_text=packed,
        )

    def _finish_file(self) -> None:
        entry = self.entry
        if entry is not None:
            if self.state is _HEAD:
                self._cut(entry)
            elif self.state is _TAIL:
                self._finish_without_end(entry)
        if self.state is _SHARD and self.pending is not None:
            self._warn("output sharding block cut off at end of file")
        self.flush_pending()
        if self.count == 0:
            raise HlodiffError("no graphs found in this save-tensors file", path=self.path)
        if self.recorded == 0 and self.overlong_error is not None:
            raise self.overlong_error  # no graph read at all: the over-long line is the whole story

    def _warn(self, message: str, line: int | None = None, cut: int | None = None) -> None:
        if cut is not None and self.warnings is not None:  # evidence as well as a warning: never dropped
            self.warnings.append(GraphCutOff(message, self.path, line if line is not None else self.lineno,
                                             source=self.source, index=cut))
            return
        self.warned += 1
        if self.warned > MAX_WARNINGS:
            if self.warned == MAX_WARNINGS + 1 and self.warnings is not None:
                self.warnings.append(InputWarning(f"more than {MAX_WARNINGS} warnings; the rest are not shown",
                                                  self.path, line if line is not None else self.lineno))
            return
        if self.warnings is not None:
            self.warnings.append(InputWarning(message, self.path, line if line is not None else self.lineno))


def _ends_body(line: bytes) -> bool:
    """Whether a line starting with G, # or [ ends an HLO body (HLO lines never start with these words)."""
    return line.startswith((b"Graph Hash:", b"## END_GRAPH")) or _HEADER_RE.match(line) is not None
