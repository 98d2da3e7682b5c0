"""Plain HLO text files: one module, several ``HloModule`` blocks, or a bare list of computations.

Files from XLA's test suite carry FileCheck lines (``// CHECK: ...``, ``// RUN: ...``); they are comments to the
parser, so a block simply runs from its ``HloModule`` line to the next one. Lines before the first ``HloModule``
(a RUN line, a licence) are not part of any module.
"""

from __future__ import annotations

import os
import re
from typing import Iterator

from hlodiff import progress
from hlodiff.dumps._io import BOM, SNIFF_BYTES, Packer, decode, is_gzip, lines, meaningful_lines, open_binary
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.limits import LIMIT_VARIABLES, Limits, limit_error
from hlodiff.errors import InputWarning
from hlodiff.hlo.instruction_reader import _NAME as _HLO_NAME

# The name as the parser reads it (XLA accepts ``HloModule name:``; the colon is not part of the name).
_MODULE_RE = re.compile(rb"^HloModule\s+(" + _HLO_NAME.encode() + rb")")
_COMPUTATION_RE = re.compile(rb"^(ENTRY\s+)?%?[\w.\-]+\s*(\(.*\)\s*->\s*.*)?\{$")
_INSTRUCTION_RE = re.compile(rb"^(ROOT\s+)?%?[\w.\-]+\s*=\s*\S")
_TAIL_BYTES = 4096


def looks_like_hlo(head: bytes) -> bool:
    """The first meaningful line is ``HloModule``, or the file is a bare list of computations (XLA's fusion
    tests): a computation header followed by an instruction."""
    first = meaningful_lines(head, limit=4)
    if not first:
        return False
    if _MODULE_RE.match(first[0]):
        return True
    return _COMPUTATION_RE.match(first[0]) is not None and any(_INSTRUCTION_RE.match(x) for x in first[1:])


class _Block:
    __slots__ = ("index", "name", "start", "line", "end", "last_line", "packer", "packed", "tail")

    def __init__(self, index: int, name: str | None, start: int, line: int, gz: bool):
        self.index, self.name, self.start, self.line = index, name, start, line
        self.end = start
        self.last_line = line
        self.packer: Packer | None = Packer() if gz else None
        self.packed: bytes | None = None
        self.tail = b""

    def finish(self) -> "_Block":
        if self.packer is not None:
            self.packed, self.tail = self.packer.finish()
            self.packer = None
        return self


def scan_hlo_file(path: str, source: str | None = None,
                  warnings: list[InputWarning] | None = None) -> Iterator[GraphRecord]:
    """Yield one record per ``HloModule`` block (or one for a bare computation list), in file order, each as
    soon as the next block begins."""
    proto = _proto_beside(path)  # one module of an XLA dump named on its own: its proto holds what the text elides
    for block in _blocks(path, is_gzip(path), warnings):
        complete = _looks_whole(_tail(path, block))
        if not complete and warnings is not None:
            warnings.append(InputWarning(f"module {block.index} does not end with '}}' (file cut off? it begins at "
                                         f"line {block.line}, its text ends here)", path, block.last_line))
        packed, block.packed = block.packed, None
        yield GraphRecord(path=path, index=block.index, kind="hlo_file", start_line=block.line,
                          source=source or path, module_name=block.name, complete=complete,
                          byte_offset=block.start, byte_length=block.end - block.start, packed_text=packed,
                          proto_path=proto if block.index == 0 else None)


def _proto_beside(path: str) -> str | None:
    """:func:`hlodiff.dumps.hlo_proto.proto_beside`, its module imported only for a ``.txt`` file of an XLA dump
    (the proto reader and its record types are not needed to read other HLO text)."""
    if not path.endswith(".txt"):
        return None
    from hlodiff.dumps.hlo_proto import proto_beside

    return proto_beside(path)


def _blocks(path: str, gz: bool, warnings: list[InputWarning] | None) -> Iterator[_Block]:
    """Split the file at ``HloModule`` lines; a file without any is one block from the first byte."""
    limits = Limits.from_env()
    if not gz and (whole := _whole_file_blocks(path, limits)) is not None:
        yield from whole
        return
    current = _Block(0, None, 0, 1, gz)  # the lines before the first HloModule: a bare module if nothing follows
    count = 0
    total = None if gz else os.path.getsize(path)
    with open_binary(path) as f, progress.task(f"reading {os.path.basename(path)}", total, "bytes") as bar:
        it = lines(f, path, warnings, limits)
        for lineno, line in enumerate(progress.counted_lines(it, bar) if bar.active else it, 1):
            if line[:1] in b"H\xef" and (m := _MODULE_RE.match(line.removeprefix(BOM))) is not None:
                if count:
                    yield current.finish()
                current = _Block(count, decode(m.group(1)), current.end, lineno, gz)
                count += 1
            current.end += len(line)
            current.last_line = lineno
            if current.packer is not None:
                current.packer.append(line)
            if current.end - current.start > limits.graph_bytes:
                raise limit_error(path, lineno, f"module {current.index} is too big (its text never ends?)",
                                  limits.graph_bytes, LIMIT_VARIABLES["graph_bytes"])
    yield current.finish()


# A module line in a file read whole: what _MODULE_RE finds at the start of a line (the BOM dropped), its white
# space kept on that line.
_MODULE_AT_RE = re.compile(rb"HloModule[ \t\r\f\v]+(" + _HLO_NAME.encode() + rb")")
_WHOLE_FILE_BYTES = 64 * 1024 * 1024


def _whole_file_blocks(path: str, limits: Limits) -> list[_Block] | None:
    """The blocks of a plain file small enough to read at once and clean enough that no line-by-line check could
    fire (no NUL byte, fewer lines than the blank-line limit, smaller than a line or a graph may be, not bare-CR
    lines): one read and a regular expression instead of a Python step per line, the same blocks as
    :func:`_blocks` reads. ``None``: read it line by line."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    if size > min(_WHOLE_FILE_BYTES, limits.line_bytes, limits.graph_bytes):
        return None
    with open_binary(path) as f:
        data = f.read(size + 1)
    newlines = data.count(b"\n")
    head = data[:SNIFF_BYTES]
    if len(data) != size or b"\0" in data or (b"\r" in head and b"\n" not in head):
        return None
    if newlines >= limits.blank_lines and _blank_run(data, limits.blank_lines):
        return None
    with progress.task(f"reading {os.path.basename(path)}", size, "bytes") as bar:
        bar.update(size)
    blocks: list[_Block] = []
    current = _Block(0, None, 0, 1, False)  # lines before the first module belong to none (a bare module if none)
    for count, (start, m) in enumerate(_module_lines(data)):
        lineno = data.count(b"\n", 0, start) + 1
        if count:
            current.end, current.last_line = start, lineno - 1
            blocks.append(current)
        current = _Block(count, decode(m.group(1)), start, lineno, False)
    current.end = size
    current.last_line = max(current.line, newlines + (bool(data) and not data.endswith(b"\n")))
    blocks.append(current)
    return blocks


def _module_lines(data: bytes) -> Iterator[tuple[int, re.Match]]:
    """Each module line's start offset and its match: a find for the word, then the match where it starts a line
    (a regular expression anchored at every line start walks every byte of a 7 MB module)."""
    at = data.find(b"HloModule")
    while at >= 0:
        start = at - len(BOM) if at >= len(BOM) and data[at - len(BOM):at] == BOM else at
        if start == 0 or data[start - 1] == 0x0A:
            m = _MODULE_AT_RE.match(data, at)
            if m is not None:
                yield start, m
        at = data.find(b"HloModule", at + 9)


def _blank_run(data: bytes, limit: int) -> bool:
    """Whether ``data`` may hold ``limit`` blank lines in a row (the line-by-line scan's limit error, which only
    it reports with its line). ``limit`` line ends in a row is a superset of that: a false alarm only costs the
    slower scan. A file of more lines than the limit (an unrolled 300K-instruction step) is still read at once."""
    if b"\r" not in data:
        return b"\n" * limit in data
    return re.search(rb"(?:\r?\n){%d}" % limit, data) is not None


def _tail(path: str, block: _Block) -> bytes:
    if block.packed is not None:
        return block.tail
    with open(path, "rb") as f:
        start = max(block.start, block.end - _TAIL_BYTES)
        f.seek(start)
        return f.read(block.end - start)


def _looks_whole(tail: bytes) -> bool:
    """The last line that is neither blank nor a ``//`` comment closes a computation."""
    for line in reversed(tail.splitlines()):
        stripped = line.split(b"//", 1)[0].strip()  # "} // main.731"
        if stripped:
            return stripped == b"}"
    return False
