"""``PT_XLA_DEBUG_LEVEL`` output: why torch_xla compiled (level 1) and executed (level 2) each graph.

torch_xla 2.9 writes to stderr, or appends to ``PT_XLA_DEBUG_FILE``, blocks whose every line carries a prefix, so
they survive being interleaved with unrelated output (prints, XLA warnings)::

    Compilation Analysis: ================================================================================
    Compilation Analysis: Compilation Cause
    Compilation Analysis:   user torch_xla.sync
    Compilation Analysis: Graph Info:
    Compilation Analysis:   Graph Name: train_step                 only under torch_xla.compile(name=...)
    Compilation Analysis:   Graph Hash: c94ab09d2cce1a7b2ff8f9ec2755830a
    Compilation Analysis:   Number of Graph Inputs: 1
    Compilation Analysis:   Number of Graph Outputs: 2
    Compilation Analysis: Python Frame Triggered Execution:
    Compilation Analysis:   sync (/site-packages/torch_xla/torch_xla.py:87)
    Compilation Analysis:   ..........                             after PT_XLA_DEBUG_MAX_FRAME frames
    Compilation Analysis: --------------------------------------------------------------------------------
    Compilation Analysis: ================================================================================

    Computation hash: 96505a58c7c420eb7a6363672335cc11

    Post Compilation Analysis: ================================================================================
    Post Compilation Analysis: Graph input size: 0.000000 GB
    ...
    Post Compilation Analysis: --------------------------------------------------------------------------------
    Post Compilation Analysis: ================================================================================

Level 2 adds ``Execution Analysis:`` blocks (``Execution Cause``) for every execution, cache hits included;
``Unexpected Execution Analysis:`` marks an execution inside ``torch_xla.compile(full_graph=True)``. The
``Graph Hash`` is the key of the compilation cache and of the save-tensors entry of the same graph.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from hlodiff.dumps._io import text_lines
from hlodiff.dumps.frames import parse_frame
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.model import SourceFrame

_COMPILATION = "Compilation Analysis: "
_EXECUTION = "Execution Analysis: "
_UNEXPECTED = "Unexpected Execution Analysis: "
_POST = "Post Compilation Analysis: "
_COMPUTATION_HASH = "Computation hash: "
# Longest first: "Post Compilation Analysis: " contains "Compilation Analysis: ".
_PREFIXES = (_UNEXPECTED, _POST, _COMPILATION, _EXECUTION)


@dataclass(slots=True)
class CompilationEvent:
    """One compilation, with the cause torch_xla guessed and the Python frames of the sync that triggered it."""

    cause: str
    graph_hash: str | None
    num_inputs: int | None
    num_outputs: int | None
    frames: tuple[SourceFrame, ...]
    post_compilation: dict[str, str] = field(default_factory=dict)
    """``Post Compilation Analysis`` lines, verbatim values: ``{"Graph input size": "0.000000 GB", ...}``."""
    graph_name: str | None = None
    computation_hash: str | None = None
    frames_truncated: bool = False
    line: int = field(default=0, compare=False)
    announced: bool = True
    """False for a ``Post Compilation Analysis`` block with no ``Compilation Analysis`` before it: torch_xla compiled a
    graph inside an op (EmbeddingBag on torch_xla 2.9, review 8) without announcing it, nor its executions. It is
    still the next module of the XLA dump, so the pairing of compilations with modules counts it (no hash, no
    frames, no cause)."""

    def size_gb(self, key: str) -> float | None:
        """A ``Post Compilation Analysis`` size in GB (``size_gb("Graph output size")``)."""
        value = self.post_compilation.get(key, "")
        number, _, unit = value.partition(" ")
        try:
            return float(number) if unit == "GB" else None
        except ValueError:
            return None


@dataclass(slots=True)
class ExecutionEvent:
    """One execution (``PT_XLA_DEBUG_LEVEL=2``); cache hits show up here but not as compilations."""

    cause: str
    graph_hash: str | None
    num_inputs: int | None
    num_outputs: int | None
    frames: tuple[SourceFrame, ...]
    graph_name: str | None = None
    frames_truncated: bool = False
    unexpected: bool = False
    line: int = field(default=0, compare=False)


DebugEvent = CompilationEvent | ExecutionEvent


def iter_debug_events(path: str | os.PathLike[str], warnings: list[InputWarning] | None = None) -> Iterator[DebugEvent]:
    """Yield compilation and execution events in log order, streaming; a compilation is yielded once its
    ``Computation hash`` and ``Post Compilation Analysis`` (which follow it) have been read."""
    p = os.fspath(path)
    yield from _Reader(p, warnings).run(text_lines(p, warnings))


def read_compilations(path: str | os.PathLike[str],
                      warnings: list[InputWarning] | None = None) -> list[CompilationEvent]:
    """Only the compilations the log announces (a graph hash, frames, a cause): each one is a graph that was not in
    the cache. The unannounced ones (:attr:`CompilationEvent.announced`) are left to the readers that pair
    compilations with dump modules by position (:mod:`hlodiff.dumps.executions`)."""
    return [e for e in iter_debug_events(path, warnings) if isinstance(e, CompilationEvent) and e.announced]


def parse_debug_log(text: str, *, path: str = "<string>",
                    warnings: list[InputWarning] | None = None) -> list[DebugEvent]:
    """Parse log text already in memory (e.g. captured stderr); its last line is taken as whole."""
    if text and not text.endswith("\n"):
        text += "\n"
    return list(_Reader(path, warnings).run(text.splitlines(keepends=True)))


class _Block:
    """An analysis block being read (one prefix, between its ``====`` lines)."""

    __slots__ = ("prefix", "line", "section", "cause", "info", "frames", "truncated", "closing", "values")

    def __init__(self, prefix: str, line: int):
        self.prefix, self.line = prefix, line
        self.section = ""
        self.cause: list[str] = []
        self.info: dict[str, str] = {}
        self.frames: list[SourceFrame] = []
        self.truncated = False
        self.closing = False
        self.values: dict[str, str] = {}


class _Reader:
    def __init__(self, path: str, warnings: list[InputWarning] | None):
        self.path = path
        self.warnings = warnings
        self.lineno = 0
        self.open: dict[str, _Block] = {}
        self.pending: CompilationEvent | None = None
        self.seen_any = False

    def run(self, lines: Iterable[str]) -> Iterator[DebugEvent]:
        for raw in lines:
            self.lineno += 1
            if not raw.endswith("\n"):
                break  # the last line of a file cut off mid-write: half a hash is worse than none
            yield from self._line(raw.rstrip("\r\n"))
        for block in self.open.values():
            self._warn(f"{block.prefix.strip()} block cut off at end of file; skipped", block.line)
        if self.pending is not None:
            yield self.pending
        if not self.seen_any:
            raise HlodiffError("no PT_XLA_DEBUG analysis found (was PT_XLA_DEBUG_LEVEL=1 set for this run?)",
                               path=self.path, line=1)

    def _line(self, text: str) -> Iterator[DebugEvent]:
        if text.startswith(_COMPUTATION_HASH):
            if self.pending is not None:
                self.pending.computation_hash = text[len(_COMPUTATION_HASH):].strip() or None
            return
        for prefix in _PREFIXES:
            if text.startswith(prefix):
                yield from self._block_line(prefix, text[len(prefix):])
                return

    def _block_line(self, prefix: str, body: str) -> Iterator[DebugEvent]:
        block = self.open.get(prefix)
        rule = body.strip()
        if block is None:
            if rule.startswith("=") and set(rule) == {"="}:
                if prefix != _POST:
                    yield from self._flush()
                self.open[prefix] = _Block(prefix, self.lineno)
                self.seen_any = True
            else:
                self._warn(f"'{prefix.strip()}' line outside a block; ignored")
            return
        if rule and set(rule) == {"-"}:
            block.closing = True
        elif rule and set(rule) == {"="}:
            del self.open[prefix]
            if not block.closing:
                self._warn(f"{prefix.strip()} block ended without its '----' line", block.line)
            yield from self._close(block)
        else:
            self._content(block, body)

    def _content(self, block: _Block, body: str) -> None:
        if block.prefix == _POST:
            key, colon, value = body.partition(":")
            if colon:
                block.values[key.strip()] = value.strip()
            return
        stripped = body.strip()
        if not body.startswith("  "):
            block.section = stripped.rstrip(":").strip()
            return
        if block.section.endswith("Cause"):
            block.cause.append(stripped)
        elif block.section == "Graph Info":
            key, _, value = stripped.partition(":")
            block.info[key.strip()] = value.strip()
        elif block.section == "Python Frame Triggered Execution":
            self._frame(block, stripped)

    def _frame(self, block: _Block, text: str) -> None:
        if set(text) == {"."}:
            block.truncated = True
            return
        frame = parse_frame(text)
        if frame is None:
            self._warn("unreadable Python frame; ignored")
        else:
            block.frames.append(frame)

    def _close(self, block: _Block) -> Iterator[DebugEvent]:
        if block.prefix == _POST:
            if self.pending is None:  # a compilation torch_xla did not announce: it still took a dump module
                yield CompilationEvent(cause="", graph_hash=None, num_inputs=None, num_outputs=None, frames=(),
                                       post_compilation=dict(block.values), line=block.line, announced=False)
            else:
                self.pending.post_compilation.update(block.values)
            return
        inputs, outputs = self._count(block, "Number of Graph Inputs"), self._count(block, "Number of Graph Outputs")
        common = dict(cause=" ".join(block.cause), graph_hash=block.info.get("Graph Hash") or None,
                      num_inputs=inputs, num_outputs=outputs, frames=tuple(block.frames),
                      graph_name=block.info.get("Graph Name") or None, frames_truncated=block.truncated,
                      line=block.line)
        if block.prefix == _COMPILATION:
            self.pending = CompilationEvent(**common)
        else:
            yield ExecutionEvent(**common, unexpected=block.prefix == _UNEXPECTED)

    def _count(self, block: _Block, key: str) -> int | None:
        value = block.info.get(key)
        if value is None:
            return None
        if not value.isdigit():
            self._warn(f"{key} is {value!r}, not a number; ignored", block.line)
            return None
        return int(value)

    def _flush(self) -> Iterator[DebugEvent]:
        if self.pending is not None:
            event, self.pending = self.pending, None
            yield event

    def _warn(self, message: str, line: int | None = None) -> None:
        if self.warnings is not None:
            self.warnings.append(InputWarning(message, self.path, line if line is not None else self.lineno))
