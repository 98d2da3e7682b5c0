"""Lines of a multi-GB log, with a fast way past the lines nobody needs.

A threshold-0 live-tensor report repeats each tensor's whole lazy IR: nearly every byte of a stdout log is an IR
node line (``  %12 = f32[4] aten::mul(%10, %11), ...``), and of those a reader keeping roots only needs the few
with ``ROOT=``. Handing every line to Python costs microseconds each (minutes on a 2 GB log); this buffer reads
big chunks and lets the reader jump over a run of IR node lines with one regular-expression match in C, keeping
only the count and the root lines.

The same limits as :func:`hlodiff.dumps._io.lines` hold (a line past ``HLODIFF_MAX_LINE_BYTES``, a run of blank
lines past its limit, gzip data expanding past its ratio: one located error), and a gzip stream that ends early
stops the reading with a warning: what was read is good. Inside a skipped run of IR lines the line limit is
checked when a line outgrows the buffer (nothing longer than a chunk plus the limit is ever held), not line by
line.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from typing import BinaryIO

from hlodiff.dumps._io import is_nul_tail, nul_tail_warning
from hlodiff.dumps.limits import GZIP_FLOOR, LIMIT_VARIABLES, Limits, limit_error
from hlodiff.errors import InputWarning

CHUNK = 4 << 20
_IR_RUN = re.compile(rb"(?:  %[^\n]*\n)*")


def _root_lines(buf: bytes, start: int, end: int, marks: tuple[bytes, ...] = (b"ROOT=",)) -> list[bytes]:
    """The lines between ``start`` and ``end`` (whole lines) holding ``ROOT=`` (or any of ``marks``), in order: a
    find per mark, not a regex per line."""
    spans = set()
    for mark in marks:
        at = buf.find(mark, start, end)
        while at >= 0:
            begin = buf.rfind(b"\n", start, at) + 1 or start
            stop = buf.find(b"\n", at, end) + 1
            spans.add((max(begin, start), stop))
            at = buf.find(mark, stop, end)
    return [buf[b:e] for b, e in sorted(spans)]


class LineBuffer:
    """``readline()`` like a file, plus :meth:`skip_ir_nodes`; ``lineno`` counts the lines consumed."""

    def __init__(self, f: BinaryIO, path: str, warnings: list[InputWarning] | None, limits: Limits | None = None):
        self.f, self.path, self.warnings = f, path, warnings
        self.limits = limits or Limits.from_env()
        self.buf = b""
        self.pos = 0
        self.eof = False
        self.lineno = 0
        self.blanks = 0
        self.total = 0
        self.budget = None
        if isinstance(f, gzip.GzipFile):
            try:
                compressed = os.fstat(f.fileobj.fileno()).st_size  # type: ignore[union-attr]
            except (OSError, AttributeError, ValueError):
                compressed = 0
            self.budget = max(GZIP_FLOOR, compressed * self.limits.gzip_ratio)

    def readline(self) -> bytes:
        """The next line with its newline; the last line of a file cut mid-write without it; b"" at the end."""
        while True:
            i = self.buf.find(b"\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i + 1]
                self.pos = i + 1
                self._count(line)
                return line
            if not self._fill():
                line = self.buf[self.pos:]
                self.pos = len(self.buf)
                if (nul := line.find(b"\0")) >= 0 and is_nul_tail(line[nul:]):
                    if self.warnings is not None:
                        self.warnings.append(nul_tail_warning(self.path, self.lineno + 1))
                    line = line[:nul]  # the line a crash cut, if any, without the padding after it
                if line:
                    self._count(line)
                return line

    def skip_ir_nodes(self, marks: tuple[bytes, ...] = (b"ROOT=",)) -> tuple[int, list[bytes]]:
        """Consume the run of complete IR node lines (``  %...``) that starts here; return how many there were and
        the ones holding a mark (``ROOT=``). Stops before the first other line (``}``, a new tensor, foreign text)."""
        count = 0
        roots: list[bytes] = []
        while True:
            end = _IR_RUN.match(self.buf, self.pos).end()
            if end > self.pos:
                count += self.buf.count(b"\n", self.pos, end)
                roots.extend(_root_lines(self.buf, self.pos, end, marks))
                self.pos = end
            if self.buf.find(b"\n", self.pos) >= 0:
                break  # the next line is complete, and not an IR node line
            rest = self.buf[self.pos:self.pos + 3]
            if rest and not (rest.startswith(b"  %") or b"  %".startswith(rest)):
                break  # a partial line that cannot become one
            if not self._fill():
                break
        self.lineno += count
        self.blanks = 0
        return count, roots

    def _fill(self) -> bool:
        if self.eof:
            return False
        if len(self.buf) - self.pos > self.limits.line_bytes:
            raise limit_error(self.path, self.lineno + 1, "line too long", self.limits.line_bytes,
                              LIMIT_VARIABLES["line_bytes"])
        try:
            chunk = self.f.read(CHUNK)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            if self.warnings is not None:
                self.warnings.append(InputWarning(f"gzip data cut off or corrupt ({exc}); read up to here",
                                                  self.path, self.lineno))
            chunk = b""
        if not chunk:
            self.eof = True
            return False
        self.total += len(chunk)
        if self.budget is not None and self.total > self.budget:
            raise limit_error(self.path, self.lineno, f"gzip data expands to more than {self.limits.gzip_ratio}x "
                              "its size (a gzip bomb?)", self.budget, LIMIT_VARIABLES["gzip_ratio"])
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def _count(self, line: bytes) -> None:
        self.lineno += 1
        if line == b"\n" or line == b"\r\n":
            self.blanks += 1
            if self.blanks > self.limits.blank_lines:
                raise limit_error(self.path, self.lineno, f"more than {self.limits.blank_lines:,} blank lines in a "
                                  "row", self.limits.blank_lines, LIMIT_VARIABLES["blank_lines"])
        else:
            self.blanks = 0
            if len(line) > self.limits.line_bytes:
                raise limit_error(self.path, self.lineno, "line too long", self.limits.line_bytes,
                                  LIMIT_VARIABLES["line_bytes"])
