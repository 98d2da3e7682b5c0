"""Shape text -> :class:`Shape`, interned.

A 35,000-instruction dump has only a few hundred distinct shape strings, so every shape is parsed once and then
looked up by its exact text. That cache is what makes eager shape parsing affordable.
"""

from __future__ import annotations

import re

from hlodiff.hlo.literal import size
from hlodiff.hlo.model import ELEMENT_BITS, UNBOUNDED, Layout, Shape

ARRAY_SHAPE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^{}]*\})?")
_LAYOUT_ITEM = re.compile(r"T((?:\([^()]*\))+)|E\((\d+)\)|S\((\d+)\)|([A-Z#*]+(?:\([^()]*\))*)")
_TILE = re.compile(r"\(([^()]*)\)")

_cache: dict[str, Shape] = {}
CACHED_TUPLE_TEXT = 256
"""Tuple shapes are found by their text up to this length (a get-tuple-element's operand, an rng's result); a root
tuple of a thousand outputs is long and differs from module to module, so caching it would only grow the cache."""


def remember(text: str, shape: Shape) -> Shape:
    """``shape``, read from ``text``, found by that text from now on when it is short enough
    (:data:`CACHED_TUPLE_TEXT`); the shape already cached for the text, if any."""
    if len(text) > CACHED_TUPLE_TEXT:
        return shape
    return _cache.setdefault(text, shape)


class ShapeSyntaxError(ValueError):
    """Raised with an offset relative to the start of the shape text."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def parse_shape(text: str) -> Shape:
    """Parse a complete shape text, e.g. ``f32[2,3]{1,0}`` or ``(f32[], (s32[2], token[]))``."""
    shape = _cache.get(text)
    if shape is not None:
        return shape
    shape, end = parse_shape_at(text, 0)
    if text[end:].strip():
        raise ShapeSyntaxError(f"unexpected {text[end:].strip()[:20]!r} after shape", end)
    _cache[text] = shape
    return shape


def without_layout_text(text: str) -> str:
    """``f32[100]{0}`` -> ``f32[100]``: shapes of one value printed by different producers (a report, an output, the
    parameter it becomes) may carry other layouts. Text that is not a shape is returned as given."""
    try:
        return str(parse_shape(text).without_layout())
    except ShapeSyntaxError:
        return text


PRINTED_DIMS = re.compile(r"\[([0-9,]*)\]")
"""The first bracket of known sizes in a printed shape (``f32[4,16]{1,0}``: ``4,16``; a dynamic ``<=8`` or ``?``
is not matched)."""


def printed_dims(shape: str) -> list[int] | None:
    """The dimensions of a printed shape (``f32[4,16]{1,0}`` -> ``[4, 16]``), or None when it has none."""
    m = PRINTED_DIMS.search(shape)
    if not m:
        return None
    dims = [size(x) for x in m.group(1).split(",") if x]
    return None if None in dims else dims


def byte_size_of(text: str) -> int:
    """Bytes of the shape a text spells; 0 when it is not a shape."""
    try:
        return parse_shape(text).byte_size()
    except ShapeSyntaxError:
        return 0


def parse_shape_at(text: str, pos: int) -> tuple[Shape, int]:
    """Parse one shape starting at ``pos`` (after optional white space); return it and the offset after it."""
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if pos < len(text) and text[pos] == "(":
        return _parse_tuple_at(text, pos)
    if text.startswith("b(", pos):
        return _parse_buffer_at(text, pos)
    m = ARRAY_SHAPE.match(text, pos)
    if m is None:
        raise ShapeSyntaxError("expected a shape such as f32[2,3] or (f32[], s32[])", pos)
    if m.group(1) not in ELEMENT_BITS:
        raise ShapeSyntaxError(f"unknown element type {m.group(1)!r}", pos)
    key = m.group(0)
    shape = _cache.get(key)
    if shape is None:
        shape = _array_shape(m)
        _cache[key] = shape
    return shape, m.end()


def _parse_tuple_at(text: str, pos: int) -> tuple[Shape, int]:
    pos += 1  # '('
    elements: list[Shape] = []
    while True:
        pos = _skip_space_and_comments(text, pos)
        if pos < len(text) and text[pos] == ")":
            return Shape("tuple", tuple_shapes=tuple(elements)), pos + 1
        if elements:
            if pos >= len(text) or text[pos] != ",":
                raise ShapeSyntaxError("expected ',' or ')' in tuple shape", pos)
            pos = _skip_space_and_comments(text, pos + 1)
        element, pos = parse_shape_at(text, pos)
        elements.append(element)


def _parse_buffer_at(text: str, pos: int) -> tuple[Shape, int]:
    """``b(f32[2,4])``: a buffer that custom-calls pin or create; it holds one array."""
    if text.startswith(("(", "b("), _skip_space_and_comments(text, pos + 2)):
        raise ShapeSyntaxError("a buffer shape holds one array shape", pos + 2)
    inner, end = parse_shape_at(text, pos + 2)
    if inner.is_tuple or inner.element_type == "buffer":
        raise ShapeSyntaxError("a buffer shape holds one array shape", pos + 2)
    end = _skip_space_and_comments(text, end)
    if end >= len(text) or text[end] != ")":
        raise ShapeSyntaxError("expected ')' to close the buffer shape", end)
    return Shape("buffer", tuple_shapes=(inner,)), end + 1


def _skip_space_and_comments(text: str, pos: int) -> int:
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in " \t\r\n":
            pos += 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            if end < 0:
                raise ShapeSyntaxError("unterminated /* comment", pos)
            pos = end + 2
        else:
            break
    return pos


def _array_shape(m: re.Match[str]) -> Shape:
    element_type, dims_text, layout_text = m.group(1), m.group(2), m.group(3)
    dims: list[int] = []
    dynamic: list[bool] = []
    if dims_text.strip():
        offset = m.start(2)
        for piece in dims_text.split(","):
            at = offset + len(piece) - len(piece.lstrip())
            offset += len(piece) + 1
            piece = piece.strip()
            if piece == "?":
                dims.append(UNBOUNDED)
                dynamic.append(True)
            elif piece.startswith("<="):
                dims.append(_dim(piece[2:], at))
                dynamic.append(True)
            else:
                dims.append(_dim(piece, at))
                dynamic.append(False)
    if layout_text == "{}":
        raise ShapeSyntaxError("an empty layout '{}' (XLA prints none for a scalar without tiles)", m.start(3))
    layout = parse_layout(layout_text, m.start(3)) if layout_text else None
    return Shape(element_type, tuple(dims), tuple(dynamic), layout)


def _dim(text: str, offset: int) -> int:
    """A dimension size: decimal digits only (XLA rejects ``-4``; ``int`` would also take ``+4`` and ``1_0``)."""
    if not text.isascii() or not text.isdigit():
        raise ShapeSyntaxError(f"bad dimension {text!r}: expected a size >= 0, '<=N' or '?'", offset)
    return int(text)


def _int(text: str, offset: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise ShapeSyntaxError(f"bad dimension {text!r}", offset) from None


def parse_layout(text: str, offset: int = 0) -> Layout:
    """``{1,0:T(8,128)(2,1)E(4)S(1)}`` -> :class:`Layout`; unknown ``:``-items are kept verbatim."""
    body = text[1:-1]
    order_text, _, items = body.partition(":")
    order = tuple(_int(x.strip(), offset) for x in order_text.split(",") if x.strip())
    tiles: list[tuple[str, ...]] = []
    element_bits = memory_space = None
    extra: list[str] = []
    pos = 0
    items = items.strip()
    while pos < len(items):
        m = _LAYOUT_ITEM.match(items, pos)
        if m is None:
            raise ShapeSyntaxError(f"bad layout item {items[pos:pos + 20]!r}", offset)
        if m.group(1):
            tiles.extend(tuple(x.strip() for x in t.split(",")) for t in _TILE.findall(m.group(1)))
        elif m.group(2):
            element_bits = int(m.group(2))
        elif m.group(3):
            memory_space = int(m.group(3))
        else:
            extra.append(m.group(4))
        pos = m.end()
    if extra:
        _check_sparse_items(extra, offset)
    return Layout(order, tuple(tiles), element_bits, memory_space, tuple(extra))


_DIM_LEVEL = re.compile(r"[DCSH][+~]*")


def _check_sparse_items(extra: list[str], offset: int) -> None:
    """``D(D,C)`` names each dimension's level type; ``P(shape)``, a physical shape, only makes sense for a sparse
    array (a level other than D)."""
    sparse = False
    for item in extra:
        if item.startswith("D("):
            levels = [x.strip() for x in item[2:-1].split(",")]
            if not all(_DIM_LEVEL.fullmatch(x) for x in levels):
                raise ShapeSyntaxError(f"expected a DimLevelType abbreviation (D, C, S or H) in {item!r}", offset)
            sparse = sparse or any(x[0] != "D" for x in levels)
    if any(item.startswith("P(") for item in extra) and not sparse:
        raise ShapeSyntaxError("Layout has physical shape, but is not for a sparse array", offset)
