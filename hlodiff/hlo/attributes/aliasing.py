"""The module header: ``input_output_alias``, ``buffer_donor``, ``output_to_operand_aliasing``,
``entry_computation_layout`` and shape lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from hlodiff.hlo import scan
from hlodiff.hlo.scan import group_end
from hlodiff.hlo.attributes.cursor import Cursor
from hlodiff.hlo.attributes.scalars import COMMENT_RE, T, fail, short


@dataclass(frozen=True, slots=True)
class Alias:
    """One ``input_output_alias`` entry: output ``{0}`` may reuse parameter ``0`` at ``{}``.

    ``kind`` is ``may-alias`` or ``must-alias``; an entry printed without a kind is ``may-alias`` (XLA's default).
    """

    output_index: tuple[int, ...]
    parameter: int
    parameter_index: tuple[int, ...]
    kind: str = "may-alias"


@dataclass(frozen=True, slots=True)
class BufferDonor:
    """One ``buffer_donor`` entry ``(parameter, {index})``."""

    parameter: int
    parameter_index: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OperandAlias:
    """One ``output_to_operand_aliasing`` entry of a custom-call: ``{out}: (operand, {index})``."""

    output_index: tuple[int, ...]
    operand: int
    operand_index: tuple[int, ...]


def parse_input_output_alias(raw: str) -> tuple[Alias, ...]:
    """``input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}) }``."""
    return tuple(_index_map(raw, "input_output_alias", True, Alias))


def parse_output_operand_aliasing(raw: str) -> tuple[OperandAlias, ...]:
    """``output_to_operand_aliasing={{0}: (0, {})}``."""
    return tuple(_index_map(raw, "output_to_operand_aliasing", False, OperandAlias))


def _index_map(raw: str, what: str, with_kind: bool, build: Callable[..., T]) -> Iterator[T]:
    """The shared ``{ {out}: (n, {index}[, kind]), ... }`` grammar of the two aliasing attributes."""
    cur = Cursor(raw, what)
    cur.expect("{")
    first = True
    while not cur.eat("}"):
        if not first:
            cur.expect(",")
        first = False
        out = tuple(cur.ints("{", "}"))
        cur.expect(":")
        cur.expect("(")
        number = cur.int()
        cur.expect(",")
        index = tuple(cur.ints("{", "}"))
        kind = "may-alias"
        if with_kind and cur.eat(","):
            kind = cur.next()
            if kind not in ("may-alias", "must-alias"):
                raise cur.error(f"unknown alias kind {short(kind)}")
        cur.expect(")")
        yield build(out, number, index, kind) if with_kind else build(out, number, index)
    cur.end()


def parse_buffer_donor(raw: str) -> tuple[BufferDonor, ...]:
    """``buffer_donor={ (0, {}), (1, {0}) }``."""
    cur = Cursor(raw, "buffer_donor")
    cur.expect("{")
    out: list[BufferDonor] = []
    while not cur.eat("}"):
        if out:
            cur.expect(",")
        cur.expect("(")
        number = cur.int()
        cur.expect(",")
        index = tuple(cur.ints("{", "}"))
        cur.expect(")")
        out.append(BufferDonor(number, index))
    cur.end()
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ComputationLayout:
    """``entry_computation_layout={(p0, p1, ...)->result}``: parameter and result shapes.

    Without a shape callback the items are the shape texts (``/*index=N*/`` comments removed, white space runs
    collapsed to one space).
    """

    parameters: tuple[Any, ...]
    result: Any


def parse_computation_layout(raw: str, parse_shape: Callable[[str], Any] | None = None) -> ComputationLayout:
    """Split ``{(...)->...}`` at the top level; ``parse_shape`` (e.g. :func:`hlodiff.hlo.shapes.parse_shape`)
    turns each shape text into a value, and may raise :class:`HloParseError` for a bad one."""
    text = COMMENT_RE.sub(" ", raw).strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise fail("entry_computation_layout", f"expected {{(params)->result}}, got {short(text)}")
    body = text[1:-1].strip()
    if not body.startswith("("):
        raise fail("entry_computation_layout", "expected '(' before the parameter shapes")
    close = group_end(body, 0)
    if close < 0:
        raise fail("entry_computation_layout", "unbalanced parameter list")
    rest = body[close:].lstrip()
    if not rest.startswith("->") or not rest[2:].strip():
        raise fail("entry_computation_layout", "expected '->' and a result shape")
    params = [_squeeze(p) for p in split_top_level(body[1:close - 1], "entry_computation_layout")]
    if params == [""]:
        params = []
    result = _squeeze(rest[2:])
    if any(not p for p in params) or split_top_level(result, "entry_computation_layout") != [result]:
        raise fail("entry_computation_layout", "empty or misplaced shape")
    convert = parse_shape or (lambda s: s)
    return ComputationLayout(tuple(convert(p) for p in params), convert(result))


def parse_shape_list(raw: str, parse_shape: Callable[[str], Any] | None = None) -> tuple[Any, ...]:
    """``operand_layout_constraints={f64[3,3]{0,1}, f64[3]{0}}``: shape texts (or callback results)."""
    text = COMMENT_RE.sub(" ", raw).strip()
    if not (text.startswith("{") and group_end(text, 0) == len(text)):
        raise fail("shape list", f"expected {{shape, ...}}, got {short(text)}")
    items = [_squeeze(s) for s in split_top_level(text[1:-1], "shape list")]
    if items == [""]:
        return ()
    if any(not s for s in items):
        raise fail("shape list", "empty shape")
    convert = parse_shape or (lambda s: s)
    return tuple(convert(s) for s in items)


def _squeeze(text: str) -> str:
    """Trim and collapse white space runs (comments the parser blanked out leave long runs inside shapes)."""
    return " ".join(text.split())


def split_top_level(text: str, what: str = "list") -> list[str]:
    """Split at commas outside brackets and strings; raises if the brackets do not balance."""
    try:
        return [piece for piece, _ in scan.split_top_level(text)]
    except scan.Unbalanced as err:
        raise fail(what, str(err)) from None
