"""One node of torch_xla's lazy IR as a live-tensor report prints it.

``%11 = f32[3]{0} aten::mul(%10.0, %2), location=step@train.py:8, xla_shape=f32[3]{0}, ROOT=0``: index, shape
(tuple shapes contain ", "), op, operands (``%10.0`` names one output of a multi-output node) and ``name=value``
tags. Kept apart from the report reader: the reader decides where reports and tensors begin and end, this module
only reads one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.dumps.frames import parse_location
from hlodiff.hlo.model import SourceFrame

_NODE_HEAD_RE = re.compile(r"\s*%(\d+) = ")
_OPERAND_RE = re.compile(r"%(\d+)(?:\.(\d+))?$")
_TAG_START_RE = re.compile(r", ([A-Za-z0-9_]+)=")
_TAG_TOKEN_RE = re.compile(r"[()\[\]{}]|, ([A-Za-z0-9_]+)=")


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
    for token in _TAG_TOKEN_RE.finditer(text):  # brackets and tag starts only, not every character
        c = token.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            cuts.append(token)
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
