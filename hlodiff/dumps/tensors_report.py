"""Live-tensor reports: ``torch_xla._XLAC._xla_tensors_report(nodes_threshold, device)``, wherever they sit.

Printed just before a sync, a report lists every live tensor whose pending IR has at least ``nodes_threshold``
nodes, i.e. what the coming graph will be built from, and where in the user's code each piece was made. torch_xla
2.9 prints, per tensor (entries end with two blank lines)::

    Tensor: id=7, shape=f32[], device=CPU:0, ir_nodes=22
    Frames:                                          only with XLA_IR_DEBUG=1 / XLA_HLO_DEBUG=1
      step (/home/user/project/train.py:8)
      <module> (/home/user/project/train.py:12)
    IR {
      %0 = s64[] xla::device_data(), location=<module>@train.py:5, xla_shape=s64[]
      %11 = f32[3]{0} aten::mul(%10.0, %2), location=step@train.py:8, xla_shape=f32[3]{0}, ROOT=0
    }

Users print it to stdout, between their own lines (loss, progress bars, warnings): the maintainers' advice is
``print(torch_xla._XLAC._xla_tensors_report(0, str(device)))`` before ``mark_step``. So a file is read as a stream
of reports and foreign text, and report boundaries are found without help:

* a line ``## SYNC <n> [key=value ...]`` (what ``hlodiff record`` and hlodiff's fixtures write) starts report *n*;
* otherwise a report ends at the first foreign (non-report) line after a tensor, at three or more blank lines after
  a tensor (``print`` adds one newline to the report's two), or when a tensor id does not grow: torch_xla lists a
  report's tensors in increasing id order, so an id at or below the previous one belongs to the next report.

Foreign lines are never warnings. A tensor cut off (the run was killed mid-print) is skipped with a warning.
Logs grow by hundreds of MB per step with threshold 0, so the reader streams (plain or gzip) and, with
``ir="roots"``, keeps of each tensor's IR only its root nodes: memory follows the number of live tensors, not the
size of the log. Frames are interned: every tensor of a step repeats the same few frames.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from hlodiff.dumps._io import check_readable, decode, open_binary, raw_lines, up_to_damage
from hlodiff.dumps.line_buffer import LineBuffer
from hlodiff.dumps.frames import parse_frame
from hlodiff.dumps.lazy_ir import IrNode, IrOperand, parse_ir_node
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.model import SourceFrame

__all__ = ["IrNode", "IrOperand", "LiveTensor", "SyncReport", "iter_reports", "parse_ir_node", "parse_reports",
           "read_reports"]

_ID_RE = re.compile(r"-?[0-9]{1,19}")  # a torch_xla tensor id (int64); ASCII digits only
_SYNC_RE = re.compile(r"^## SYNC (\d+)\s*(.*)$")
_TENSOR_RE = re.compile(r"^Tensor: id=(\d+), shape=(.*), device=([^,]*), ir_nodes=(\d+)\s*$")
_END_BLANKS = 3
"""Blank lines after a tensor that end a printed report (torch_xla ends each tensor with two, ``print`` adds one)."""


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

    @property
    def is_device_data(self) -> bool:
        """Computed data with nothing pending: its IR is one bare ``xla::device_data`` (or not printed). A tensor
        whose one node is a ``prim::Constant`` (cross_entropy's total weight) is pending: torch_xla makes it an
        output of the coming graph like any other."""
        return self.ir_nodes <= 1 and all(n.op == "xla::device_data" for n in self.ir)


@dataclass(frozen=True, slots=True)
class SyncReport:
    """The report printed before one sync. ``sync`` is the number of a ``## SYNC <n>`` header, None for a report
    found without one (then :mod:`hlodiff.dumps.report_alignment` decides which graph it describes)."""

    sync: int | None
    tensors: tuple[LiveTensor, ...]
    info: tuple[tuple[str, str], ...] = ()
    """``key=value`` words after ``## SYNC <n>`` (the fixtures write ``step`` and ``trigger``)."""
    line: int = field(default=0, compare=False)
    ordinal: int = field(default=0, compare=False)
    """0-based position of the report in its file."""

    def pending(self) -> tuple[LiveTensor, ...]:
        """The tensors that become graph outputs: those with pending IR (anything but a bare ``device_data``), in
        id order, which is the order torch_xla gives the graph's outputs."""
        return tuple(sorted((t for t in self.tensors if not t.is_device_data), key=lambda t: t.id))

    def get(self, key: str) -> str | None:
        for k, v in self.info:
            if k == key:
                return v
        return None

    def reads(self) -> frozenset[int] | None:
        """Ids of the computed tensors whose device data the coming graph reads, from the header's ``reads=``
        (``hlodiff record`` asks torch_xla for them, :mod:`hlodiff.capture.reads`); None when the header has
        none or it is not a list of ids (a report printed by the user never has it)."""
        value = self.get("reads")
        if value is None:
            return None
        words = [w for w in value.split(",") if w]
        if not all(_ID_RE.fullmatch(w) for w in words):
            return None
        return frozenset(int(w) for w in words if not w.startswith("-"))  # -1: data of no tensor (scalars)


def iter_reports(path: str | os.PathLike[str], warnings: list[InputWarning] | None = None, *,
                 ir: str = "all", data_files: frozenset[str] = frozenset()) -> Iterator[SyncReport]:
    """Yield the reports of a file (plain or gzip) in order, streaming. ``ir="roots"`` keeps only each tensor's
    root IR nodes (bounded memory on multi-GB logs); ``"roots+data"`` those and the ``xla::device_data`` leaves (the
    data a pending tensor reads, with the line that made it; with ``data_files``, only the leaves made in those files
    (basenames): a big model's tensors each read every parameter, and only the user's uploads are wanted);
    ``"all"`` keeps every node."""
    p = os.fspath(path)
    reader = _Reader(p, warnings, ir, data_files)
    if ir == "all":
        yield from reader.run(raw_lines(p, warnings))
        return
    check_readable(p)
    with open_binary(p) as f:
        yield from reader.run(up_to_damage(reader.skipping(LineBuffer(f, p, warnings)), p, warnings))


def read_reports(path: str | os.PathLike[str], warnings: list[InputWarning] | None = None) -> list[SyncReport]:
    return list(iter_reports(path, warnings))


def parse_reports(text: str, *, path: str = "<string>", warnings: list[InputWarning] | None = None) -> list[SyncReport]:
    """Parse report text already in memory (e.g. the return value of ``_xla_tensors_report``)."""
    if text and not text.endswith("\n"):
        text += "\n"  # text in memory is whole: its last line is not a cut-off one
    return list(_Reader(path, warnings, "all").run(text.splitlines(keepends=True)))


class _Reader:
    """State machine over lines: between tensors, in a tensor header, inside ``IR { }``."""

    def __init__(self, path: str, warnings: list[InputWarning] | None, ir: str = "all",
                 data_files: frozenset[str] = frozenset()):
        if ir not in ("all", "roots", "roots+data"):
            raise ValueError(ir)
        self.path = path
        self.warnings = warnings
        self.roots_only = ir in ("roots", "roots+data")
        self.data_too = ir == "roots+data"
        self.data_marks = tuple(f"@{f}:" for f in sorted(data_files))  # a leaf's ``location=fn@file.py:N``
        self.byte_marks = (b"ROOT=", *(m.encode() for m in self.data_marks)) if self.data_marks else \
            (b"ROOT=", b"xla::device_data(")
        self.lineno = 0
        self.report: _OpenReport | None = None
        self.tensor: _OpenTensor | None = None
        self.seen_any = False
        self.ordinal = 0
        self.blanks = 0  # blank lines since the last tensor closed
        self.foreign = False  # foreign text since the last tensor closed
        self.frames: dict = {}  # frame line -> SourceFrame, and each SourceFrame to itself (interned)

    def run(self, lines: Iterable[str] | Iterable[bytes]) -> Iterator[SyncReport]:
        """Lines of text, or raw bytes from a file: then an IR node line that is not a root is only counted,
        never decoded or parsed, when reading roots only (nearly all of a threshold-0 log)."""
        for raw in lines:
            self.lineno += 1
            if type(raw) is bytes:
                tensor = self.tensor
                if (self.roots_only and tensor is not None and tensor.in_ir and raw.startswith(b"  %")
                        and raw.endswith(b"\n") and b"ROOT=" not in raw
                        and not (self.data_too and b"xla::device_data(" in raw)):  # a leaf: _ir_line decides
                    tensor.node_count += 1
                    continue
                raw = decode(raw)
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

    def skipping(self, buf: LineBuffer) -> Iterator[bytes]:
        """The lines of ``buf`` for :meth:`run`, except that inside a tensor's IR (roots only) the run of node
        lines is jumped over in one go: counted, and only its root lines parsed."""
        while True:
            tensor = self.tensor
            if tensor is not None and tensor.in_ir:
                count, roots = buf.skip_ir_nodes(self.byte_marks if self.data_too else (b"ROOT=",))
                tensor.node_count += count - len(roots)
                self.lineno += count
                for root in roots:
                    self._ir_line(decode(root).rstrip("\r\n"))
            line = buf.readline()
            if not line:
                return
            yield line

    def _partial_line(self, text: str) -> None:
        """Half a line says nothing reliable; a half ``Tensor:`` line is still a tensor that was cut off."""
        if self.tensor is None and text.startswith("Tensor:"):
            self.seen_any = True
            self._warn("tensor cut off at end of file; skipped")

    def _line(self, text: str) -> SyncReport | None:
        if self.tensor is not None and self.tensor.in_ir:
            if self._ir_line(text):
                return None
        if text.startswith("## SYNC") and (m := _SYNC_RE.match(text)) is not None:
            return self._start_report(int(m.group(1)), m.group(2))
        if text.startswith("Tensor:"):
            return self._start_tensor(text)
        if self.tensor is not None:
            self._tensor_head_line(text)
        elif not text.strip():
            self.blanks += 1
        else:
            self.foreign = True  # the program's own output: a report boundary, never a warning
        return None

    def _start_report(self, sync: int, rest: str) -> SyncReport | None:
        if self.tensor is not None:
            self._drop_tensor("cut off by the next '## SYNC'")
        done = self._close_report()
        self.report = _OpenReport(sync, _info(rest), self.lineno, self._next_ordinal())
        self.seen_any = True
        self.blanks, self.foreign = 0, False
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
        tensor_id = int(m.group(1))
        done = None
        if self.report is not None and self.report.sync is None and self._ends_report(tensor_id):
            done = self._close_report()
        if self.report is None:
            self.report = _OpenReport(None, (), self.lineno, self._next_ordinal())
        self.report.last_id = tensor_id
        self.tensor = _OpenTensor(tensor_id, m.group(2), m.group(3), int(m.group(4)), self.lineno)
        self.blanks, self.foreign = 0, False
        return done

    def _ends_report(self, tensor_id: int) -> bool:
        """Whether a tensor header starts a new headerless report (see the module docstring)."""
        report = self.report
        assert report is not None
        if report.last_id is None:
            return False
        return self.foreign or self.blanks >= _END_BLANKS or tensor_id <= report.last_id

    def _close_report(self) -> SyncReport | None:
        report, self.report = self.report, None
        return report.close() if report is not None else None

    def _next_ordinal(self) -> int:
        self.ordinal += 1
        return self.ordinal - 1

    def _tensor_head_line(self, text: str) -> None:
        tensor = self.tensor
        assert tensor is not None
        stripped = text.strip()
        if stripped == "Frames:":
            tensor.in_frames = True
        elif stripped == "IR {":
            tensor.in_frames, tensor.in_ir = False, True
        elif tensor.in_frames and text.startswith("  "):
            frame = self.frames.get(text)
            if frame is None:
                frame = parse_frame(text)
                if frame is not None:
                    frame = self.frames.setdefault(text, self.frames.setdefault(frame, frame))
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
        tensor.node_count += 1
        if self.roots_only and "ROOT=" not in text and not self._wanted_leaf(text):
            return True
        try:
            tensor.nodes.append(parse_ir_node(text))
        except ValueError as exc:
            if not tensor.bad:
                self._warn(f"unreadable IR node in tensor id={tensor.id} ({exc}); tensor skipped")
            tensor.bad = True
        return True

    def _wanted_leaf(self, text: str) -> bool:
        """A device-data leaf kept beside the roots (``roots+data``), made in one of ``data_files`` when given."""
        return self.data_too and "xla::device_data(" in text and (
            not self.data_marks or any(m in text for m in self.data_marks))

    def _close_tensor(self) -> None:
        tensor = self.tensor
        self.tensor = None
        if tensor is None or tensor.bad or self.report is None:
            return
        if tensor.node_count != tensor.ir_nodes:
            self._warn(f"tensor id={tensor.id} says ir_nodes={tensor.ir_nodes} but lists {tensor.node_count}",
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
    __slots__ = ("sync", "info", "line", "ordinal", "tensors", "last_id")

    def __init__(self, sync: int | None, info: tuple[tuple[str, str], ...], line: int, ordinal: int):
        self.sync, self.info, self.line, self.ordinal = sync, info, line, ordinal
        self.tensors: list[LiveTensor] = []
        self.last_id: int | None = None

    def close(self) -> SyncReport:
        return SyncReport(self.sync, tuple(self.tensors), self.info, self.line, self.ordinal)


class _OpenTensor:
    __slots__ = ("id", "shape_text", "device", "ir_nodes", "line", "frames", "nodes", "node_count", "in_frames",
                 "in_ir", "bad")

    def __init__(self, id: int, shape_text: str, device: str, ir_nodes: int, line: int):
        self.id, self.shape_text, self.device, self.ir_nodes, self.line = id, shape_text, device, ir_nodes, line
        self.frames: list[SourceFrame] = []
        self.nodes: list[IrNode] = []
        self.node_count = 0
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


