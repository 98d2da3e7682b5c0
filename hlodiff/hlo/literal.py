"""The text inside ``constant(...)``, parsed into values with a canonical text form.

A recompile is often caused by a constant that changed (a Python scalar baked into the graph, a new step count), so
the differ must tell "same value, printed differently" from "different value". Each literal therefore carries a
canonical ``text`` and compares by it alone: integers in decimal (``0x1F`` is ``31``), integral floats without a
fraction (``1.0`` is ``1``), other floats as the shortest round-trip ``repr``, ``nan``/``-nan``/``nan(0x..)`` and
``inf``/``-inf`` spelled one way, no spaces. Elided constants (``{...}``) keep ``...`` in their text: two elided
constants compare equal as *text* because nothing more is known about them, and ``elided`` says so: whoever
asks whether two graphs are equal must treat an elided constant as unknown (see ``hlodiff.diff.hidden``).

The same reader gives value analysis its numbers: :func:`number` turns one printed scalar (``1.2``, ``-3.5e-05``,
``nan``, ``-inf``, ``-0``, a 40-digit integer, ``true``, ``(1, -2)``) into a typed Python value, and
:func:`real` / :func:`size` narrow it to what ordering and arithmetic need. Every place that reads a printed value
as a number (growth, buckets, schedules, value lists, plans, loop bounds) goes through them, so a value the
literal reader accepts never crashes the analysis, and one it rejects is ``None`` there, not an exception.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hlodiff.errors import HloParseError
from hlodiff.hlo.scan import TokenStream

MAX_DEPTH = 64
"""Deepest brace nesting accepted; deeper text is corrupt (no array has that many dimensions)."""

_TOKEN_RE = re.compile(
    r"\s+|/\*.*?\*/"
    r"|[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"  # a shape before a value (older printers, tuple elements): ignored
    r"|(\.\.\.|[{}(),])"
    r"|([-+]?[A-Za-z0-9_.]+(?:(?<=[eE])[-+]\d+)?(?:\(0x[0-9a-fA-F]+\))?)"
    r"|(.)",
    re.S,
)
_SCALAR_RE = re.compile(
    r"([-+]?)(?:0[xX]([0-9a-fA-F]+)|(nan)(?:\(0x([0-9a-fA-F]+)\))?|(inf)|(true|false)"
    r"|((?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))"
)
_EXACT_FLOAT_LIMIT = 2.0 ** 53
_MAX_SCALAR_TEXT = 10_000
"""Longer text is no scalar (the longest integer Python reads, 4,300 digits, fits twice)."""


@dataclass(frozen=True, slots=True)
class Literal:
    """A parsed constant. Equality is on ``text`` only (see the module docstring).

    ``dims`` is the brace nesting of an array (``()`` for a scalar, ``(2, 2)`` for ``{{1,2},{3,4}}``, unknown and
    ``()`` when elided); ``values`` are the Python values row-major (``int``, ``float``, ``bool``, ``complex``);
    ``elements`` is set for tuple literals, whose ``values`` are empty.
    """

    text: str
    dims: tuple[int, ...] = field(default=(), compare=False)
    values: tuple[Any, ...] = field(default=(), compare=False)
    elided: bool = field(default=False, compare=False)
    elements: tuple["Literal", ...] | None = field(default=None, compare=False)

    @property
    def is_tuple(self) -> bool:
        return self.elements is not None

    @property
    def is_scalar(self) -> bool:
        return self.elements is None and not self.dims and not self.elided

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class _Scalar:
    value: Any
    text: str


_ELIDED = _Scalar(None, "...")


Number = int | float | bool | complex
"""What a printed scalar is: ``bool`` for ``true``/``false``, ``int`` for integers of any size, ``float`` for
every float type (f64 down to f8: XLA prints them all in decimal), ``complex`` for ``(re, im)``."""


@lru_cache(maxsize=8192)
def number(text: str) -> Number | None:
    """The typed value of one printed scalar (a constant's text, a value in a cause's details), or ``None`` when
    the text is not a single number: an array, an elided ``{...}``, a tuple, or not a literal at all. Cached:
    a run of thousands of recompilations prints the same few values again and again."""
    if len(text) > _MAX_SCALAR_TEXT or text.lstrip().startswith("{"):
        return None  # an array (or no number at all): not parsed in full only to be dropped
    try:
        lit = parse_literal(text)
    except HloParseError:
        return None
    return lit.values[0] if lit.is_scalar and len(lit.values) == 1 else None


def real(text: str) -> int | float | None:
    """:func:`number` when it is an ordered, finite-or-infinite real: ``None`` for booleans, complex numbers and
    nan (none of them has an order a growth or a ratio can use)."""
    value = number(text)
    if isinstance(value, bool) or isinstance(value, complex) or value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def integer(text: str) -> int | None:
    """:func:`number` when it is an integer (``8``, ``-3``, a huge ``u64``); floats, even integral ones, are not:
    a loop bound or an index printed as ``2.0`` is not an integer constant."""
    value = number(text)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def size(text: str) -> int | None:
    """A dimension as printed in a shape (``8``, ``<=8`` for a bounded dynamic size), or ``None`` (``?``)."""
    value = integer(text.strip().removeprefix("<="))
    return value if value is not None and value >= 0 else None


def ratio(a: int | float, b: int | float) -> float | None:
    """``a / b`` when it is a finite float; ``None`` for ``b == 0``, a quotient that overflows a float (two huge
    integers) or an infinite or nan one."""
    try:
        r = a / b
    except (ZeroDivisionError, OverflowError):
        return None
    return r if math.isfinite(r) else None


def elided(text: str | None) -> bool:
    """Whether a constant's text leaves values out (``{...}``): nothing can be said about them from the text."""
    return bool(text) and "..." in text


def value_text(value: Number) -> str:
    """One value as the canonical literal text prints it (the inverse of :func:`number`, for values read from an
    HLO proto): ``1.0`` -> ``1``, ``True`` -> ``true``, ``(1+2j)`` -> ``(1,2)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"({value_text(value.real)},{value_text(value.imag)})"
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return _float_text(value)


def parse_literal(raw: str, element_type: str | None = None) -> Literal:
    """Parse the text between ``constant(`` and ``)``.

    ``element_type`` is the constant's shape element type when known (``"c64"``, ``"tuple"``, ...). It settles
    the one ambiguity of the format, a top-level ``(a, b)``: complex for ``c64``/``c128``, a tuple for ``tuple``;
    without it, two plain numbers in parentheses are read as a complex number.
    """
    parser = _Parser(raw, element_type)
    literal = parser.value(0)
    if parser.peek():
        raise parser.error(f"unexpected {parser.peek()!r} after the literal")
    return literal


class _Parser(TokenStream):
    __slots__ = ("element_type",)
    END = "literal"

    def __init__(self, raw: str, element_type: str | None):
        self.element_type = element_type
        self.pos = 0
        self.toks: list[str] = []
        for m in _TOKEN_RE.finditer(raw):
            if m.lastindex == 3:
                raise self.error(f"unexpected character {m.group(3)!r}")
            if m.lastindex:
                self.toks.append(m.group(m.lastindex))
        if not self.toks:
            raise self.error("empty literal")

    def error(self, reason: str) -> HloParseError:
        return HloParseError(f"bad literal: {reason}")

    def value(self, depth: int) -> Literal:
        if depth > MAX_DEPTH:
            raise self.error("nested too deeply")
        tok = self.peek()
        if tok == "{":
            return self.array()
        if tok == "(":
            if self.is_complex():
                c = self.complex()
                return Literal(c.text, values=(c.value,))
            return self.tuple(depth)
        s = _scalar(self.next())
        return Literal(s.text, values=(s.value,))

    def is_complex(self) -> bool:
        """Whether a ``(`` at the cursor starts a complex number rather than a tuple (see :func:`parse_literal`)."""
        et = self.element_type
        if et in ("c64", "c128"):
            return True
        if et == "tuple":
            return False
        return (self.peek(4) == ")" and self.peek(2) == "," and _SCALAR_RE.fullmatch(self.peek(1)) is not None
                and _SCALAR_RE.fullmatch(self.peek(3)) is not None)

    def complex(self) -> _Scalar:
        """``(re, im)``."""
        self.expect("(")
        re_ = _scalar(self.next())
        self.expect(",")
        im = _scalar(self.next())
        self.expect(")")
        if isinstance(re_.value, bool) or isinstance(im.value, bool):
            raise self.error("complex parts must be numbers")
        return _Scalar(complex(float(re_.value), float(im.value)), f"({re_.text},{im.text})")

    def tuple(self, depth: int) -> Literal:
        self.expect("(")
        elements: list[Literal] = []
        self.element_type = None  # the elements' types are unknown
        while self.peek() != ")":
            if elements:
                self.expect(",")
            elements.append(self.value(depth + 1))
        self.next()
        text = "(" + ", ".join(e.text for e in elements) + ")"
        return Literal(text, elided=any(e.elided for e in elements), elements=tuple(elements))

    def expect(self, tok: str) -> None:
        got = self.next()
        if got != tok:
            raise self.error(f"expected {tok!r}, got {got!r}")

    def array(self) -> Literal:
        """A nested ``{...}`` array, read with an explicit stack so deep nesting cannot exhaust recursion."""
        root: list[Any] = []
        stack = [root]
        self.expect("{")
        expect_item, just_opened, elided = True, True, False
        while stack:
            tok = self.next()
            if tok == "}":
                if expect_item and not just_opened:
                    raise self.error("',' before '}'")
                stack.pop()
                expect_item, just_opened = False, False
                continue
            if tok == ",":
                if expect_item:
                    raise self.error("unexpected ','")
                expect_item, just_opened = True, False
                continue
            if not expect_item:
                raise self.error(f"expected ',' before {tok!r}")
            expect_item, just_opened = False, False
            if tok == "{":
                if len(stack) > MAX_DEPTH:
                    raise self.error("nested too deeply")
                child: list[Any] = []
                stack[-1].append(child)
                stack.append(child)
                expect_item, just_opened = True, True
            elif tok == "...":
                elided = True
                stack[-1].append(_ELIDED)
            elif tok == "(":
                self.pos -= 1
                stack[-1].append(self.complex())
            else:
                stack[-1].append(_scalar(tok))
        return self.build_array(root, elided)

    def build_array(self, root: list[Any], elided: bool) -> Literal:
        values: list[Any] = []
        text = _array_text(root, values)
        dims = () if elided else self.dims_of(root)
        return Literal(text, dims, tuple(values), elided)

    def dims_of(self, node: list[Any]) -> tuple[int, ...]:
        """The array's dimensions; every row at one depth must have the same length and nesting."""
        if not node:
            return (0,)
        if all(isinstance(c, _Scalar) for c in node):
            return (len(node),)
        if not all(isinstance(c, list) for c in node):
            raise self.error("numbers and nested arrays mixed at one level")
        inner = {self.dims_of(c) for c in node}
        if len(inner) != 1:
            raise self.error("rows of different lengths")
        return (len(node),) + inner.pop()


def _array_text(node: list[Any], values: list[Any]) -> str:
    parts = []
    for c in node:
        if isinstance(c, list):
            parts.append(_array_text(c, values))
        else:
            if c is not _ELIDED:
                values.append(c.value)
            parts.append(c.text)
    return "{" + ",".join(parts) + "}"


def _scalar(tok: str) -> _Scalar:
    """One number or boolean, with its canonical text."""
    m = _SCALAR_RE.fullmatch(tok)
    if m is None:
        raise HloParseError(f"bad literal: {tok[:40]!r} is not a number")
    sign, hexa, nan, payload, inf, boolean, dec = m.groups()
    neg = sign == "-"
    if boolean:
        if sign:
            raise HloParseError(f"bad literal: signed boolean {tok!r}")
        return _Scalar(boolean == "true", boolean)
    if hexa:
        value = _int(hexa, 16)
        return _Scalar(-value if neg else value, str(-value if neg else value))
    if nan:
        text = ("-nan" if neg else "nan") + (f"(0x{_int(payload, 16):x})" if payload else "")
        return _Scalar(math.copysign(math.nan, -1.0 if neg else 1.0), text)
    if inf:
        return _Scalar(-math.inf if neg else math.inf, "-inf" if neg else "inf")
    if not any(c in dec for c in ".eE"):
        value = _int(sign + dec, 10)
        return _Scalar(value, str(value))
    number = float(sign + dec)
    return _Scalar(number, _float_text(number))


def _int(text: str, base: int) -> int:
    try:
        return int(text, base)
    except ValueError:
        raise HloParseError(f"bad literal: {text[:40]!r} is too long a number") from None


def _float_text(value: float) -> str:
    """Integral floats print as integers (``1.0`` -> ``1``, ``-0.0`` -> ``-0``); others as the shortest repr."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer() and abs(value) < _EXACT_FLOAT_LIMIT:
        if value == 0 and math.copysign(1.0, value) < 0:
            return "-0"
        return str(int(value))
    return repr(value)
