"""``slice``, ``window``, ``padding`` and convolution ``dim_labels``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from hlodiff.hlo.attributes.cursor import Cursor
from hlodiff.hlo.attributes.scalars import fail, short, to_int


def parse_slice(raw: str) -> tuple[tuple[int, int, int], ...]:
    """``slice={[0:4], [1:2:1]}`` as ``(start, limit, stride)`` per dimension; stride defaults to 1."""
    cur = Cursor(raw, "slice")
    cur.expect("{")
    out: list[tuple[int, int, int]] = []
    while not cur.eat("}"):
        if out:
            cur.expect(",")
        parts = cur.ints("[", "]", ":")
        if len(parts) not in (2, 3):
            raise cur.error(f"expected [start:limit] or [start:limit:stride], got {len(parts)} numbers")
        out.append((parts[0], parts[1], parts[2] if len(parts) == 3 else 1))
    cur.end()
    return tuple(out)


@dataclass(frozen=True, slots=True)
class WindowDim:
    """One dimension of a ``window``; absent fields take XLA's defaults."""

    size: int
    stride: int = 1
    pad_low: int = 0
    pad_high: int = 0
    lhs_dilate: int = 1
    rhs_dilate: int = 1
    rhs_reversal: bool = False


@dataclass(frozen=True, slots=True)
class Window:
    """``window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}``."""

    dims: tuple[WindowDim, ...]

    def __str__(self) -> str:
        if not self.dims:
            return "{}"
        parts = ["size=" + "x".join(str(d.size) for d in self.dims)]
        fields = (("stride", lambda d: str(d.stride), "1"),
                  ("pad", lambda d: f"{d.pad_low}_{d.pad_high}", "0_0"),
                  ("lhs_dilate", lambda d: str(d.lhs_dilate), "1"),
                  ("rhs_dilate", lambda d: str(d.rhs_dilate), "1"),
                  ("rhs_reversal", lambda d: str(int(d.rhs_reversal)), "0"))
        for name, fmt, default in fields:
            values = [fmt(d) for d in self.dims]
            if any(v != default for v in values):
                parts.append(f"{name}=" + "x".join(values))
        return "{" + " ".join(parts) + "}"


_DXD_RE = re.compile(r"\d+(?:x\d+)*")
_PAD_RE = re.compile(r"-?\d+_-?\d+(?:x-?\d+_-?\d+)*")
_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")


def parse_window(raw: str) -> Window:
    """Parse a ``window={...}`` value; sub-attributes in any order, ``size=`` required unless the window is ``{}``."""
    text = raw.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise fail("window", f"expected {{size=... ...}}, got {short(text)}")
    fields: dict[str, list[str]] = {}
    for item in text[1:-1].split():
        key, eq, value = item.partition("=")
        if not eq or key not in _WINDOW_KEYS:
            raise fail("window", f"unexpected {short(item)}")
        if key in fields:
            raise fail("window", f"duplicate {key}=")
        pattern = _PAD_RE if key == "pad" else _DXD_RE
        if not pattern.fullmatch(value):
            raise fail("window", f"bad {key}={short(value)}")
        fields[key] = value.split("x")
    if not fields:
        return Window(())
    if "size" not in fields:
        raise fail("window", "missing size=")
    return Window(tuple(_window_dims(fields)))


def _window_dims(fields: dict[str, list[str]]) -> Iterator[WindowDim]:
    """One :class:`WindowDim` per ``x``-separated position; absent fields take XLA's defaults."""
    n = len(fields["size"])
    for key, values in fields.items():
        if len(values) != n:
            raise fail("window", f"{key}= has {len(values)} dimensions but size= has {n}")

    def column(key: str, default: str) -> list[int]:
        return [to_int(v, "window") for v in fields.get(key, [default] * n)]

    pads = [p.split("_") for p in fields.get("pad", ["0_0"] * n)]
    lows = [to_int(p[0], "window") for p in pads]
    highs = [to_int(p[1], "window") for p in pads]
    for size, stride, low, high, lhs, rhs, rev in zip(
            column("size", "0"), column("stride", "1"), lows, highs, column("lhs_dilate", "1"),
            column("rhs_dilate", "1"), column("rhs_reversal", "0")):
        yield WindowDim(size, stride, low, high, lhs, rhs, rev == 1)


_PADDING_RE = re.compile(r"-?\d+_-?\d+(?:_-?\d+)?(?:x-?\d+_-?\d+(?:_-?\d+)?)*")


def parse_padding_config(raw: str) -> tuple[tuple[int, int, int], ...]:
    """``padding=0_0x1_1_2`` of ``pad``: ``(low, high, interior)`` per dimension; interior defaults to 0."""
    text = raw.strip()
    if not _PADDING_RE.fullmatch(text):
        raise fail("padding", f"expected low_high[_interior]x..., got {short(text)}")
    out = []
    for dim in text.split("x"):
        parts = [to_int(p, "padding") for p in dim.split("_")]
        out.append((parts[0], parts[1], parts[2] if len(parts) == 3 else 0))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DimLabels:
    """``dim_labels=b01f_01io->b01f``: which operand/result dimension plays which role in a convolution.

    ``*_spatial`` lists the dimension index of spatial dimension 0, 1, ...; ``?`` positions are unassigned.
    """

    lhs: str
    rhs: str
    out: str
    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.lhs}_{self.rhs}->{self.out}"


_DIM_LABELS_RE = re.compile(r"([0-9a-z?]+)_([0-9a-z?]+)->([0-9a-z?]+)")


def parse_dim_labels(raw: str) -> DimLabels:
    """Parse a convolution's ``dim_labels``; lhs uses ``b``/``f``, the kernel ``i``/``o``, digits are spatial."""
    m = _DIM_LABELS_RE.fullmatch(raw.strip())
    if m is None:
        raise fail("dim_labels", f"expected lhs_rhs->out such as b01f_01io->b01f, got {short(raw.strip())}")
    lhs, rhs, out = m.groups()
    (b, f), ls = _label_roles(lhs, "bf")
    (i, o), ks = _label_roles(rhs, "io")
    (ob, of), os_ = _label_roles(out, "bf")
    if not len(ls) == len(ks) == len(os_):
        raise fail("dim_labels", f"{len(ls)}, {len(ks)} and {len(os_)} spatial dimensions do not agree")
    return DimLabels(lhs, rhs, out, b, f, ls, i, o, ks, ob, of, os_)


def _label_roles(labels: str, letters: str) -> tuple[tuple[int, int], tuple[int, ...]]:
    """Positions of the two role letters and of spatial digits 0..n-1 in one side of ``dim_labels``."""
    known = [c for c in labels if c != "?"]
    if len(set(known)) != len(known):
        raise fail("dim_labels", f"repeated label in {labels!r}")
    digits = sorted(c for c in known if c.isdigit())
    if digits != [str(k) for k in range(len(digits))] or len(digits) > 10:
        raise fail("dim_labels", f"spatial labels of {labels!r} are not 0..n-1")
    if any(not c.isdigit() and c not in letters for c in known):
        raise fail("dim_labels", f"{labels!r} may only use {letters}, digits and ?")
    roles = tuple(labels.find(c) for c in letters)
    return (roles[0], roles[1]), tuple(labels.index(d) for d in digits)
