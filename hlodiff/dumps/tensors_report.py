"""Live-tensor reports: ``torch_xla._XLAC._xla_tensors_report(nodes_threshold, device)``.

Printed just before a sync, a report lists every live tensor whose pending IR is bigger than the threshold, i.e.
what the coming graph will be built from, and where in the user's code each piece was made. torch_xla 2.9
prints, per tensor (entries end with two blank lines)::

    Tensor: id=7, shape=f32[], device=CPU:0, ir_nodes=22
    Frames:                                          only with XLA_IR_DEBUG=1 / XLA_HLO_DEBUG=1
      step (/home/user/project/train.py:8)
      <module> (/home/user/project/train.py:12)
    IR {
      %0 = s64[] xla::device_data(), location=<module>@train.py:5, xla_shape=s64[]
      %10 = (f32[3]{0}, s64[3]{0}) aten::max(%9), num_outputs=2, location=<module>@t.py:4, xla_shape=(f32[3]{0}, ...
      %11 = f32[3]{0} aten::mul(%10.0, %2), location=step@train.py:8, xla_shape=f32[3]{0}, ROOT=0
    }

``location=`` appears only with XLA_IR_DEBUG too; an operand of a multi-output node names the output
(``%10.0``); tuple shapes contain ", ". A file may hold one report per sync, each introduced by a line
``## SYNC <n> [key=value ...]`` (what hlodiff's fixtures write, e.g. ``## SYNC 3 step=3 trigger=item``); a file
holding a single bare report is read as one report without a sync number.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from hlodiff.dumps._io import text_lines
from hlodiff.dumps.frames import parse_frame, parse_location
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.model import SourceFrame

_SYNC_RE = re.compile(r"^## SYNC (\d+)\s*(.*)$")
_TENSOR_RE = re.compile(r"^Tensor: id=(\d+), shape=(.*), device=([^,]*), ir_nodes=(\d+)\s*$")
_NODE_HEAD_RE = re.compile(r"\s*%(\d+) = ")
_OPERAND_RE = re.compile(r"%(\d+)(?:\.(\d+))?$")
_TAG_START_RE = re.compile(r", ([A-Za-z0-9_]+)=")


@dataclass(frozen=True, slots=True)
class IrOperand:
    """``%9`` or, for one output of a multi-output node, ``%10.1``."""

    node: int
    output: int | None = None

    def __str__(self) -> str:
        return f"%{self.node}" if self.output is None else f"%{self.node}.{self.output}"


@dataclass(frozen=True, slots=True)
class IrNode:
    """One lazy-IR node, in post order (operands always come first)."""

    index: int
    shape_text: str
    op: str
    operands: tuple[IrOperand, ...]
    location: SourceFrame | None
    is_root: bool
    root_index: int | None
    attrs: tuple[tuple[str, str], ...] = ()
    """The other ``name=value`` tags, verbatim and in order (``num_outputs``, ``xla_shape``, op attributes)."""

    def attr(self, name: str) -> str | None:
        for key, value in self.attrs:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class LiveTensor:
    """A live tensor with pending IR, and the Python frames where it was last written."""

    id: int
    shape_text: str
    device: str
    ir_nodes: int
    frames: tuple[SourceFrame, ...]
    ir: tuple[IrNode, ...]
    line: int = field(default=0, compare=False)

    def roots(self) -> tuple[IrNode, ...]:
        return tuple(n for n in self.ir if n.is_root)


@dataclass(frozen=True, slots=True)
class SyncReport:
    """The report printed before one sync. ``sync`` is None for a file holding a single bare report."""

    sync: int | None
    tensors: tuple[LiveTensor, ...]
    info: tuple[tuple[str, str], ...] = ()
    """``key=value`` words after ``## SYNC <n>`` (the fixtures write ``step`` and ``trigger``)."""
    line: int = field(default=0, compare=False)

    def get(self, key: str) -> str | None:
        for k, v in self.info:
            if k == key:
                return v
        return None


def iter_reports(path: str | os.PathLike[str], warnings: list[InputWarning] | None = None) -> Iterator[SyncReport]:
    """Yield the reports of a file (plain or gzip) in order, streaming."""
    p = os.fspath(path)
    yield from _Reader(p, warnings).run(text_lines(p, warnings))


def read_reports(path: str | os.PathLike[str], warnings: list[InputWarning] | None = None) -> list[SyncReport]:
    return list(iter_reports(path, warnings))


def parse_reports(text: str, *, path: str = "<string>", warnings: list[InputWarning] | None = None) -> list[SyncReport]:
    """Parse report text already in memory (e.g. the return value of ``_xla_tensors_report``)."""
    if text and not text.endswith("\n"):
        text += "\n"  # text in memory is whole: its last line is not a cut-off one
    return list(_Reader(path, warnings).run(text.splitlines(keepends=True)))


class _Reader:
    """State machine over lines: between tensors, in a tensor header, inside ``IR { }``."""

    def __init__(self, path: str, warnings: list[InputWarning] | None):
        self.path = path
        self.warnings = warnings
        self.lineno = 0
        self.report: _OpenReport | None = None
        self.tensor: _OpenTensor | None = None
        self.seen_any = False
        self.junk_reported = False

    def run(self, lines: Iterable[str]) -> Iterator[SyncReport]:
        for raw in lines:
            self.lineno += 1
            if not raw.endswith("\n"):  # the last line of a file cut off mid-write
                self._partial_line(raw)
                break
            done = self._line(raw.rstrip("\r\n"))
            if done is not None:
                yield done
        if self.tensor is not None:
            self._drop_tensor("cut off at end of file")
        if self.report is not None:
            yield self.report.close()
        if not self.seen_any:
            raise HlodiffError("not a live-tensor report: no '## SYNC' or 'Tensor:' line", path=self.path, line=1)

    def _partial_line(self, text: str) -> None:
        """Half a line says nothing reliable; a half ``Tensor:`` line is still a tensor that was cut off."""
        if self.tensor is None and text.startswith("Tensor:"):
            self.seen_any = True
            self._warn("tensor cut off at end of file; skipped")

    def _line(self, text: str) -> SyncReport | None:
        if self.tensor is not None and self.tensor.in_ir:
            if self._ir_line(text):
                return None
        m = _SYNC_RE.match(text)
        if m is not None:
            return self._start_report(int(m.group(1)), m.group(2))
        if text.startswith("Tensor:"):
            return self._start_tensor(text)
        if self.tensor is not None:
            self._tensor_head_line(text)
        elif text.strip() and not self.junk_reported:
            self.junk_reported = True
            self._warn("unexpected text between tensors; skipped")
        return None

    def _start_report(self, sync: int, rest: str) -> SyncReport | None:
        if self.tensor is not None:
            self._drop_tensor("cut off by the next '## SYNC'")
        done = self.report.close() if self.report is not None else None
        self.report = _OpenReport(sync, _info(rest), self.lineno)
        self.seen_any = True
        self.junk_reported = False
        return done

    def _start_tensor(self, text: str) -> SyncReport | None:
        if self.tensor is not None:
            self._drop_tensor("cut off by the next 'Tensor:'")
        m = _TENSOR_RE.match(text)
        self.seen_any = True
        if m is None:
            self._warn("unreadable 'Tensor:' line; tensor skipped")
            self.tensor = _OpenTensor(-1, "", "", 0, self.lineno)
            self.tensor.bad = True
            return None
        if self.report is None:
            self.report = _OpenReport(None, (), self.lineno)
        self.tensor = _OpenTensor(int(m.group(1)), m.group(2), m.group(3), int(m.group(4)), self.lineno)
        self.junk_reported = False
        return None

    def _tensor_head_line(self, text: str) -> None:
        tensor = self.tensor
        assert tensor is not None
        stripped = text.strip()
        if stripped == "Frames:":
            tensor.in_frames = True
        elif stripped == "IR {":
            tensor.in_frames, tensor.in_ir = False, True
        elif tensor.in_frames and text.startswith("  "):
            frame = parse_frame(text)
            if frame is None:
                self._warn(f"unreadable frame of tensor id={tensor.id}; ignored")
            else:
                tensor.frames.append(frame)
        elif stripped:
            self._warn(f"unexpected line in tensor id={tensor.id}; ignored")

    def _ir_line(self, text: str) -> bool:
        """Handle a line inside ``IR { }``; False hands it back (a new tensor or report started)."""
        tensor = self.tensor
        assert tensor is not None
        stripped = text.strip()
        if stripped == "}":
            self._close_tensor()
            return True
        if text.startswith(("Tensor:", "## SYNC")):
            return False
        if not stripped:
            return True
        try:
            tensor.nodes.append(parse_ir_node(text))
        except ValueError as exc:
            if not tensor.bad:
                self._warn(f"unreadable IR node in tensor id={tensor.id} ({exc}); tensor skipped")
            tensor.bad = True
        return True

    def _close_tensor(self) -> None:
        tensor = self.tensor
        self.tensor = None
        if tensor is None or tensor.bad or self.report is None:
            return
        if len(tensor.nodes) != tensor.ir_nodes:
            self._warn(f"tensor id={tensor.id} says ir_nodes={tensor.ir_nodes} but lists {len(tensor.nodes)}",
                       tensor.line)
        self.report.tensors.append(tensor.close())

    def _drop_tensor(self, why: str) -> None:
        tensor = self.tensor
        self.tensor = None
        if tensor is not None and not tensor.bad:
            self._warn(f"tensor id={tensor.id} {why}; skipped", tensor.line)

    def _warn(self, message: str, line: int | None = None) -> None:
        if self.warnings is not None:
            self.warnings.append(InputWarning(message, self.path, line if line is not None else self.lineno))


class _OpenReport:
    __slots__ = ("sync", "info", "line", "tensors")

    def __init__(self, sync: int | None, info: tuple[tuple[str, str], ...], line: int):
        self.sync, self.info, self.line = sync, info, line
        self.tensors: list[LiveTensor] = []

    def close(self) -> SyncReport:
        return SyncReport(self.sync, tuple(self.tensors), self.info, self.line)


class _OpenTensor:
    __slots__ = ("id", "shape_text", "device", "ir_nodes", "line", "frames", "nodes", "in_frames", "in_ir", "bad")

    def __init__(self, id: int, shape_text: str, device: str, ir_nodes: int, line: int):
        self.id, self.shape_text, self.device, self.ir_nodes, self.line = id, shape_text, device, ir_nodes, line
        self.frames: list[SourceFrame] = []
        self.nodes: list[IrNode] = []
        self.in_frames = self.in_ir = self.bad = False

    def close(self) -> LiveTensor:
        return LiveTensor(self.id, self.shape_text, self.device, self.ir_nodes, tuple(self.frames),
                          tuple(self.nodes), self.line)


def _info(rest: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for word in rest.split():
        key, eq, value = word.partition("=")
        if eq:
            pairs.append((key, value))
    return tuple(pairs)


# -- one IR node --------------------------------------------------------------------------------------------------

def parse_ir_node(text: str) -> IrNode:
    """Parse ``%N = SHAPE OP(OPERANDS)[, tag=value]...``; ValueError says what is wrong."""
    m = _NODE_HEAD_RE.match(text)
    if m is None:
        raise ValueError("expected '%N = '")
    pos = m.end()
    shape_end = _matching(text, pos) + 1 if text.startswith("(", pos) else text.find(" ", pos)
    if shape_end <= pos:
        raise ValueError("no shape")
    shape_text = text[pos:shape_end]
    open_paren = text.find("(", shape_end + 1)
    if open_paren < 0 or text[shape_end] != " ":
        raise ValueError("no operation")
    op = text[shape_end + 1:open_paren]
    close_paren = _matching(text, open_paren)
    operands = _operands(text[open_paren + 1:close_paren])
    tags = _tags(text[close_paren + 1:].rstrip())
    return _node(int(m.group(1)), shape_text, op, operands, tags)


def _node(index: int, shape_text: str, op: str, operands: tuple[IrOperand, ...],
          tags: list[tuple[str, str]]) -> IrNode:
    location = None
    root_index = None
    attrs = []
    for key, value in tags:
        if key == "location":
            location = parse_location(value)
        elif key == "ROOT" and value.isdigit():
            root_index = int(value)
        else:
            attrs.append((key, value))
    return IrNode(index, shape_text, op, operands, location, root_index is not None, root_index, tuple(attrs))


def _operands(text: str) -> tuple[IrOperand, ...]:
    if not text.strip():
        return ()
    out = []
    for item in text.split(","):
        m = _OPERAND_RE.match(item.strip())
        if m is None:
            raise ValueError(f"bad operand {item.strip()!r}")
        out.append(IrOperand(int(m.group(1)), int(m.group(2)) if m.group(2) else None))
    return tuple(out)


def _tags(text: str) -> list[tuple[str, str]]:
    """Split ``, a=1, b=(x, y)`` into pairs; a ``, name=`` inside brackets does not start a new tag."""
    if not text:
        return []
    if not text.startswith(", "):
        raise ValueError(f"unexpected text after operands: {text[:30]!r}")
    cuts = []
    depth = 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0 and (m := _TAG_START_RE.match(text, i)) is not None:
            cuts.append(m)
    tags = []
    for i, m in enumerate(cuts):
        end = cuts[i + 1].start() if i + 1 < len(cuts) else len(text)
        tags.append((m.group(1), text[m.end():end]))
    return tags


def _matching(text: str, pos: int) -> int:
    """Index of the bracket closing the one at ``pos``."""
    depth = 0
    for i in range(pos, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced brackets")
