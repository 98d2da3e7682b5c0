"""Typed views of HLO attribute values, parsed on demand from the raw text the module parser keeps.

The parser stores every ``key=value`` as the exact value text (see :mod:`hlodiff.hlo.model`), because most values
are only ever compared as text. The normalizer, differ and reports need a few of them as data: which computations
an instruction calls, where it came from (``metadata``), how it is laid out over devices (``sharding``,
``replica_groups``), and the numbers in ``slice``/``window``/``dimensions``. Each parser here turns one value form
into frozen data, and each raises :class:`~hlodiff.errors.HloParseError` (message ``"bad <what>: <reason>"``, no
location; the caller knows the file and line) on malformed input, never anything else.

Device assignments are always expanded: an iota form such as ``[4,2]<=[2,4]T(1,0)`` becomes the explicit device ids,
so two spellings of the same assignment compare equal. Provenance (sharding metadata, raw text) never takes part in
equality.

The grammar follows XLA's own parser (``xla/hlo/parser/hlo_parser.cc``); see the reference notes in
``/work/shared/reference/hlo-text-format.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from math import prod
from typing import Any, Callable, Iterator, TypeVar

from hlodiff.errors import HloParseError
from hlodiff.hlo import scan
from hlodiff.hlo.scan import group_end

T = TypeVar("T")

MAX_DEVICES = 1 << 20
"""Largest device count an iota form may expand to; protects against absurd sizes in corrupt input."""

def _fail(what: str, reason: str) -> HloParseError:
    """The one error shape every parser raises: ``bad <what>: <reason>``."""
    return HloParseError(f"bad {what}: {reason}")


def _short(text: str, limit: int = 40) -> str:
    """A value quoted for an error message, cut so huge attributes do not flood the terminal."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


# -- strings ----------------------------------------------------------------------------------------------------

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'  # unrolled: far faster in Python's re than an alternation per char
_STRING_RE = re.compile(_STRING, re.S)
_ESCAPE_RE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]+)|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
                   "\\": "\\", "'": "'", '"': '"', "?": "?"}


def unescape(body: str, *, strict: bool = True) -> str:
    """Undo C escaping (what XLA's printer applies to every string), e.g. ``\\'`` in JAX op names.

    Octal and ``\\x`` escapes are bytes (non-ASCII paths arrive as UTF-8 byte escapes), so when present the text
    is rebuilt as bytes and decoded as UTF-8; bytes that are not valid UTF-8 stay visible as ``\\xNN``.
    ``strict=False`` keeps an unknown escape as written (``\\e``) instead of failing: for metadata, where one damaged
    string must not cost the instruction its source line (the commands warn, :mod:`hlodiff.hlo.escapes`).
    """
    if "\\" not in body:
        return body
    raw = False
    parts: list[str | bytes] = []
    last = 0
    for m in _ESCAPE_RE.finditer(body):
        parts.append(body[last:m.start()])
        last = m.end()
        octal, hexa, u4, u8, char = m.groups()
        if octal is not None or hexa is not None:
            digits = octal if octal is not None else (hexa.lstrip("0") or "0")
            value = int(octal, 8) if octal is not None else (int(digits, 16) if len(digits) <= 2 else 0x100)
            if value > 0xFF:
                raise _fail("string", f"escape {m.group(0)!r} is larger than a byte")
            parts.append(bytes([value]))
            raw = True
        elif u4 is not None or u8 is not None:
            code = int(u4 or u8, 16)
            if code > 0x10FFFF:
                raise _fail("string", f"escape {m.group(0)!r} is not a code point")
            parts.append(chr(code))
        elif char in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[char])
        elif not strict:
            parts.append(m.group(0))
        else:
            raise _fail("string", f"unknown escape {m.group(0)!r}")
    parts.append(body[last:])
    if not raw:
        return "".join(parts)  # type: ignore[arg-type]
    data = b"".join(p if isinstance(p, bytes) else p.encode("utf-8", "surrogatepass") for p in parts)
    return data.decode("utf-8", "backslashreplace")


def parse_string(raw: str) -> str:
    """A quoted attribute such as ``custom_call_target="lapack_dtrsm_ffi"``, unescaped."""
    text = raw.strip()
    if not _STRING_RE.fullmatch(text):
        raise _fail("string", f"expected a quoted string, got {_short(text)}")
    return unescape(text[1:-1])


# -- scalars and lists ----------------------------------------------------------------------------------------

_INT_RE = re.compile(r"[-+]?\d+")
_INT_LIST_RE = re.compile(r"\{\s*(?:[-+]?\d+\s*(?:,\s*[-+]?\d+\s*)*)?\}")
_NAME = r"%?[A-Za-z0-9_.\-]+"
_NAME_RE = re.compile(_NAME)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)


def _to_int(text: str, what: str) -> int:
    """``int()`` that reports absurdly long digit strings (Python refuses > 4300 digits) as bad input."""
    try:
        return int(text)
    except ValueError:
        raise _fail(what, f"{_short(text)} is not an integer") from None


def parse_int(raw: str) -> int:
    """``index=3``, ``channel_id=1``, ``iota_dimension=0``."""
    text = raw.strip()
    if not _INT_RE.fullmatch(text):
        raise _fail("integer", f"expected an integer, got {_short(text)}")
    return _to_int(text, "integer")


def parse_bool(raw: str) -> bool:
    """``is_stable=true``; XLA accepts exactly ``true`` and ``false``."""
    text = raw.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    raise _fail("boolean", f"expected true or false, got {_short(text)}")


def parse_bool_list(raw: str) -> tuple[bool, ...]:
    """``allow_spmd_sharding_propagation_to_output={true,false}`` or a single ``true``."""
    text = _COMMENT_RE.sub(" ", raw).strip()
    if not text.startswith("{"):
        return (parse_bool(text),)
    if not text.endswith("}"):
        raise _fail("boolean list", "expected '}' at the end")
    inner = text[1:-1].strip()
    return tuple(parse_bool(item) for item in inner.split(",")) if inner else ()


def parse_int_list(raw: str) -> tuple[int, ...]:
    """``dimensions={0,1}``, ``lhs_contracting_dims={1}``, ``dynamic_slice_sizes={}``."""
    text = _COMMENT_RE.sub(" ", raw).strip() if "/*" in raw else raw.strip()
    if not _INT_LIST_RE.fullmatch(text):
        raise _fail("integer list", f"expected {{int, ...}}, got {_short(text)}")
    inner = text[1:-1]
    return tuple(_to_int(x, "integer list") for x in inner.split(",")) if inner.strip() else ()


def parse_name_list(raw: str) -> tuple[str, ...]:
    """``{%a, %b}`` (control-predecessors, branch_computations) or ``{highest,highest}``; ``%`` removed."""
    text = _COMMENT_RE.sub(" ", raw).strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise _fail("name list", f"expected {{name, ...}}, got {_short(text)}")
    inner = text[1:-1].strip()
    if not inner:
        return ()
    return tuple(_name(item, "name list") for item in inner.split(","))


def _name(text: str, what: str) -> str:
    name = text.strip()
    if not _NAME_RE.fullmatch(name):
        raise _fail(what, f"{_short(name)} is not a name")
    return name.removeprefix("%")


def parse_enum(raw: str) -> str:
    """An identifier value such as ``kind=kLoop``, ``type=TOTALORDER`` or ``api_version=API_VERSION_TYPED_FFI``."""
    text = raw.strip()
    if not _IDENT_RE.fullmatch(text):
        raise _fail("identifier", f"expected a name, got {_short(text)}")
    return text


_DIRECTIONS = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE"})


def parse_direction(raw: str) -> str:
    """``direction=LT``: the six comparison directions XLA knows."""
    text = raw.strip()
    if text not in _DIRECTIONS:
        raise _fail("direction", f"expected one of EQ NE LT LE GT GE, got {_short(text)}")
    return text


# -- called computations --------------------------------------------------------------------------------------

CALL_KEYS = ("calls", "to_apply", "condition", "body", "true_computation", "false_computation",
             "branch_computations", "select", "scatter", "comparator", "called_computations")
"""Attributes whose values name computations, in the order :func:`called_computations` reports them."""


def called_computations(attrs: dict[str, str]) -> list[str]:
    """Names (without ``%``) of the computations an instruction's attributes reference.

    Ordered by :data:`CALL_KEYS` (not by the order in the text) so two printings of one instruction agree, and
    within a list attribute in written order (branch index order for ``conditional``). Each name appears once.
    """
    names: list[str] = []
    for key in CALL_KEYS:
        raw = attrs.get(key)
        if raw is None:
            continue
        text = raw.strip()
        found = parse_name_list(text) if text.startswith("{") else (_name(text, key),)
        for name in found:
            if name not in names:
                names.append(name)
    return names


# -- tokens for the nested forms ------------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"\s+|/\*.*?\*/"
    r'|("[^"\\]*(?:\\.[^"\\]*)*")'
    r"|(<=|->|[{}()\[\],:=?])"
    r"|(-?[A-Za-z0-9_.%]+(?:[-+][A-Za-z0-9_.]+)*)"
    r"|(.)",
    re.S,
)


class _Cursor(scan.TokenStream):
    """A token stream over one attribute value; the nested forms (shardings, groups, aliasing) read from it."""

    __slots__ = ("what",)
    END = "value"

    def __init__(self, raw: str, what: str):
        self.what = what
        self.toks: list[str] = []
        self.pos = 0
        for m in _TOKEN_RE.finditer(raw):
            if m.lastindex is None:
                continue
            if m.lastindex == 4:
                raise _fail(what, f"unexpected character {m.group(4)!r}")
            self.toks.append(m.group(m.lastindex))

    def eat(self, tok: str) -> bool:
        if self.peek() == tok:
            self.pos += 1
            return True
        return False

    def expect(self, tok: str) -> None:
        got = self.peek()
        if got != tok:
            raise self.error(f"expected {tok!r}, got {got!r}" if got else f"expected {tok!r} before the end")
        self.pos += 1

    def int(self) -> int:
        tok = self.next()
        if not _INT_RE.fullmatch(tok):
            raise self.error(f"expected an integer, got {_short(tok)}")
        return _to_int(tok, self.what)

    def ints(self, open_: str, close: str, sep: str = ",") -> list[int]:
        """``open_ int (sep int)* close`` or an empty ``open_ close``."""
        self.expect(open_)
        out: list[int] = []
        if self.eat(close):
            return out
        out.append(self.int())
        while self.eat(sep):
            out.append(self.int())
        self.expect(close)
        return out

    def int_lists(self) -> list[list[int]]:
        """``{{0,1},{2,3}}`` or ``{}``."""
        self.expect("{")
        out: list[list[int]] = []
        if self.eat("}"):
            return out
        out.append(self.ints("{", "}"))
        while self.eat(","):
            out.append(self.ints("{", "}"))
        self.expect("}")
        return out

    def skip_balanced(self) -> list[str]:
        """Consume one bracketed group (the cursor is on its opener) and return its tokens."""
        start = self.pos
        depth = 0
        while True:
            tok = self.next()
            if tok in ("{", "(", "["):
                depth += 1
            elif tok in ("}", ")", "]"):
                depth -= 1
                if depth == 0:
                    return self.toks[start:self.pos]

    def end(self) -> None:
        if self.pos != len(self.toks):
            raise self.error(f"unexpected {_short(self.peek())} after the value")

    def error(self, reason: str) -> HloParseError:
        return _fail(self.what, reason)


# -- metadata -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Metadata:
    """``metadata={op_type=".." op_name=".." source_file=".." source_line=12 stack_frame_id=3 ...}``.

    The fields the explainer uses are typed; every other key (``source_end_line``, ``deduplicated_name``,
    ``scheduling_name``, ``profile_type``, future ones) is kept in ``extra`` as ``(key, raw value)`` in text order,
    so nothing a newer XLA prints is lost.
    """

    op_type: str | None = None
    op_name: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    stack_frame_id: int | None = None
    extra: tuple[tuple[str, str], ...] = ()

    def get(self, key: str) -> str | None:
        """The raw text of an ``extra`` key, or ``None``."""
        for k, v in self.extra:
            if k == key:
                return v
        return None


_META_RE = re.compile(
    r'\s*(?:([A-Za-z_]\w*)=("[^"\\]*(?:\\.[^"\\]*)*"|\{[^{}"]*\}|[^\s,{}"=]+)(?:[\s,]+|$)|(.))', re.S
)
_EMPTY_METADATA = Metadata()


@lru_cache(maxsize=1 << 16)
def parse_metadata(raw: str) -> Metadata:
    """Parse a ``metadata={...}`` value.

    This runs for every instruction of dumps with tens of thousands of them, so the body is read by one compiled
    ``findall`` whose last alternative captures any character that is not part of a ``key=value`` item; the
    Python side only checks that capture is empty and types a handful of keys. Results are cached because fused
    and rematerialized code repeats the same metadata text (two thirds of the values in a MaxText step).
    """
    text = raw.strip()
    if text[:1] != "{" or text[-1:] != "}" or len(text) < 2:
        raise _fail("metadata", f"expected {{key=value ...}}, got {_short(text)}")
    pairs = []
    for key, value, junk in _META_RE.findall(text, 1, len(text) - 1):
        if junk:
            raise _fail("metadata", f"unexpected {_short(text[text.find(junk, 1):])}")
        pairs.append((key, value))
    return _metadata_from_pairs(pairs)


def _metadata_from_pairs(pairs: list[tuple[str, str]]) -> Metadata:
    if not pairs:
        return _EMPTY_METADATA
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise _fail("metadata", "duplicate key")
    op_type = fields.pop("op_type", None)
    op_name = fields.pop("op_name", None)
    source_file = fields.pop("source_file", None)
    source_line = fields.pop("source_line", None)
    frame = fields.pop("stack_frame_id", None)
    return Metadata(
        None if op_type is None else _metadata_str("op_type", op_type),
        None if op_name is None else _metadata_str("op_name", op_name),
        None if source_file is None else _metadata_str("source_file", source_file),
        None if source_line is None else _metadata_int("source_line", source_line),
        None if frame is None else _metadata_int("stack_frame_id", frame),
        tuple(fields.items()) if fields else (),
    )


def _metadata_str(key: str, value: str) -> str:
    if value[:1] != '"':
        raise _fail("metadata", f"{key} must be a quoted string")
    return unescape(value[1:-1], strict=False)


def _metadata_int(key: str, value: str) -> int:
    if not _INT_RE.fullmatch(value):
        raise _fail("metadata", f"{key} must be an integer, got {_short(value)}")
    return _to_int(value, "metadata")


def _metadata_at(cur: _Cursor) -> Metadata:
    """One ``{key=value ...}`` metadata block read from a token stream (metadata inside a sharding)."""
    cur.expect("{")
    pairs: list[tuple[str, str]] = []
    while not cur.eat("}"):
        if cur.eat(","):
            continue
        key = cur.next()
        cur.expect("=")
        value = "".join(cur.skip_balanced()) if cur.peek() == "{" else cur.next()
        if not _IDENT_RE.fullmatch(key) or value[0] in "=,:<-)]}([":
            raise cur.error(f"bad metadata entry {key!r}")
        pairs.append((key, value))
    return _metadata_from_pairs(pairs)


def _metadata_list_at(cur: _Cursor) -> tuple[Metadata, ...]:
    """``metadata={...}`` or ``metadata={{...}, {...}}`` inside a sharding."""
    if cur.peek() == "{" and cur.peek(1) == "{":
        cur.expect("{")
        out = [_metadata_at(cur)]
        while cur.eat(","):
            out.append(_metadata_at(cur))
        cur.expect("}")
        return tuple(out)
    return (_metadata_at(cur),)


# -- device assignments ---------------------------------------------------------------------------------------


def iota_devices(reshape: tuple[int, ...] | list[int], perm: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Device ids of ``<=[reshape]T(perm)``: ``range(prod(reshape))`` reshaped, transposed by ``perm``, flattened."""
    if len(perm) != len(reshape) or sorted(perm) != list(range(len(reshape))):
        raise _fail("iota", f"T{tuple(perm)} is not a permutation of {len(reshape)} dimensions")
    if any(d < 0 for d in reshape):
        raise _fail("iota", "negative dimension")
    if prod(reshape) > MAX_DEVICES:
        raise _fail("iota", f"more than {MAX_DEVICES} devices")
    strides = [prod(reshape[i + 1:]) for i in range(len(reshape))]
    out = [0]
    for p in perm:
        step = strides[p]
        out = [base + i * step for base in out for i in range(reshape[p])]
    return tuple(out)


def _iota_at(cur: _Cursor) -> tuple[int, ...]:
    """``[reshape]`` optionally followed by ``T(perm)``; the ``<=`` is already consumed."""
    reshape = cur.ints("[", "]")
    if not reshape:
        raise cur.error("empty iota reshape dimensions")
    perm = list(range(len(reshape)))
    if cur.peek() == "T":
        cur.next()
        perm = cur.ints("(", ")")
    return iota_devices(reshape, perm)


def _tile_assignment_at(cur: _Cursor) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``[dims]`` then explicit ids ``0,1,2,3`` or an iota ``<=[..]T(..)``; returns (dims, expanded ids)."""
    dims = tuple(cur.ints("[", "]"))
    if not dims or any(d < 0 for d in dims):
        raise cur.error("expected non-empty, non-negative tile dimensions")
    if prod(dims) > MAX_DEVICES:
        raise cur.error(f"more than {MAX_DEVICES} tiles")
    if cur.eat("<="):
        devices = _iota_at(cur)
    else:
        ids = [cur.int()]
        while cur.peek() == "," and _INT_RE.fullmatch(cur.peek(1)):
            cur.next()
            ids.append(cur.int())
        devices = tuple(ids)
    if len(devices) != prod(dims):
        raise cur.error(f"{len(devices)} devices do not fill tile dimensions {list(dims)}")
    return dims, devices


# -- sharding -------------------------------------------------------------------------------------------------

_SHARDING_FLAGS = frozenset({"replicated", "manual", "maximal", "unknown", "unreduced"})
_SUBGROUP_TYPES = frozenset({"replicated", "manual", "maximal", "unreduced"})


@dataclass(frozen=True, slots=True)
class Sharding:
    """An ``HloSharding``: how an array is split (or not) over devices.

    ``kind`` is ``replicated``, ``manual``, ``maximal`` (one device, in ``devices``), ``unknown``, ``unreduced``,
    ``tiled`` (``tile_shape`` tiles over the explicit ``devices``; trailing tile dimensions are subgroups whose
    types are ``last_tile_dims``, ``last_tile_dim_replicate`` being ``("replicated",)``), ``tuple`` (one sharding
    per leaf in ``elements``) or ``named`` (a newer mesh sharding, kept as canonical token text in ``named``).
    ``shard_group`` is ``("as", n)`` or ``("like", n)``. ``metadata`` and ``text`` are provenance only.
    """

    kind: str
    tile_shape: tuple[int, ...] = ()
    devices: tuple[int, ...] = ()
    last_tile_dims: tuple[str, ...] = ()
    shard_group: tuple[str, int] | None = None
    elements: tuple["Sharding", ...] = ()
    named: str = ""
    metadata: tuple[Metadata, ...] = field(default=(), compare=False)
    text: str = field(default="", compare=False)

    @property
    def is_tuple(self) -> bool:
        return self.kind == "tuple"

    def __str__(self) -> str:
        """Canonical text: explicit device ids (never the iota form), no metadata."""
        if self.kind == "tuple":
            return "{" + ", ".join(str(e) for e in self.elements) + "}"
        if self.kind == "named":
            return self.named
        if self.kind == "maximal":
            body = f"maximal device={self.devices[0]}"
        elif self.kind == "tiled":
            body = "devices=[" + ",".join(map(str, self.tile_shape)) + "]" + ",".join(map(str, self.devices))
            if self.last_tile_dims == ("replicated",):
                body += " last_tile_dim_replicate"
            elif self.last_tile_dims:
                body += " last_tile_dims={" + ", ".join(self.last_tile_dims) + "}"
        else:
            body = self.kind
        if self.shard_group:
            body += f" shard_{self.shard_group[0]} {self.shard_group[1]}"
        return "{" + body + "}"


def parse_sharding(raw: str) -> Sharding:
    """Parse ``sharding={...}``: single forms, tuple shardings ``{{...}, {...}}`` and ``{}`` (empty tuple)."""
    cur = _Cursor(raw, "sharding")
    cur.expect("{")
    if cur.peek() in ("{", "}"):
        elements: list[Sharding] = []
        if cur.peek() == "{":
            cur.next()
            elements.append(_single_sharding(cur))
            while cur.eat(","):
                cur.expect("{")
                elements.append(_single_sharding(cur))
        cur.expect("}")
        cur.end()
        return Sharding("tuple", elements=tuple(elements), text=raw.strip())
    sharding = _single_sharding(cur)
    cur.end()
    return replace(sharding, text=raw.strip())


def _single_sharding(cur: _Cursor) -> Sharding:
    """The body of one ``{...}`` sharding after its ``{``, through its ``}``."""
    if cur.peek() in ("mesh", "maximal_mesh"):
        return _named_sharding(cur)
    flags: set[str] = set()
    device: int | None = None
    tiles: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    subgroups: tuple[str, ...] = ()
    group: tuple[str, int] | None = None
    metadata: tuple[Metadata, ...] = ()
    while not cur.eat("}"):
        tok = cur.next()
        if tok in _SHARDING_FLAGS:
            flags.add(tok)
        elif tok == "last_tile_dim_replicate":
            subgroups = ("replicated",)
        elif tok in ("shard_as", "shard_like"):
            group = (tok[6:], cur.int())
        elif tok in ("device", "devices", "metadata", "last_tile_dims"):
            cur.expect("=")
            if tok == "device":
                device = cur.int()
            elif tok == "devices":
                tiles = _tile_assignment_at(cur)
            elif tok == "metadata":
                metadata = _metadata_list_at(cur)
            else:
                subgroups = _subgroup_types_at(cur)
        else:
            raise cur.error(f"unexpected {_short(tok)}")
    return _build_sharding(cur, flags, device, tiles, subgroups, group, metadata)


def _subgroup_types_at(cur: _Cursor) -> tuple[str, ...]:
    cur.expect("{")
    types: list[str] = []
    while not cur.eat("}"):
        if types:
            cur.expect(",")
        tok = cur.next()
        if tok not in _SUBGROUP_TYPES:
            raise cur.error(f"unknown subgroup type {_short(tok)}")
        types.append(tok)
    return tuple(types)


def _build_sharding(cur: _Cursor, flags: set[str], device: int | None,
                    tiles: tuple[tuple[int, ...], tuple[int, ...]] | None, subgroups: tuple[str, ...],
                    group: tuple[str, int] | None, metadata: tuple[Metadata, ...]) -> Sharding:
    """Check the combination the way XLA does and build the value."""
    if len(flags) > 1:
        raise cur.error(f"conflicting kinds {sorted(flags)}")
    kind = next(iter(flags)) if flags else "tiled"
    if kind == "maximal":
        if device is None or tiles is not None:
            raise cur.error("maximal shardings need exactly one device=")
        return Sharding("maximal", devices=(device,), shard_group=group, metadata=metadata)
    if kind != "tiled":
        if device is not None or tiles is not None:
            raise cur.error(f"{kind} shardings take no devices")
        return Sharding(kind, shard_group=group, metadata=metadata)
    if tiles is None or device is not None:
        raise cur.error("expected devices=[...] (or replicated, manual, maximal, unknown)")
    dims, devices = tiles
    if len(subgroups) > len(dims):
        raise cur.error(f"{len(subgroups)} subgroup dimensions but only {len(dims)} tile dimensions")
    if len(subgroups) == len(dims) and len(set(subgroups)) == 1 and subgroups[0] in ("replicated", "manual"):
        # Every tile dimension is a subgroup of one type: XLA reads this as plain replicated (or manual).
        return Sharding(subgroups[0], shard_group=group, metadata=metadata)
    return Sharding("tiled", dims, devices, subgroups, group, metadata=metadata)


def _named_sharding(cur: _Cursor) -> Sharding:
    """``{mesh[x=2,y=4], [{x}, {}], replicated={y}}`` and ``{maximal_mesh[device_id=0]}``: kept as tokens.

    These newer mesh shardings are rare in dumps; hlodiff only needs to tell two of them apart, so their
    whitespace-free token text is the value (checked for balanced brackets, not interpreted).
    """
    start = cur.pos - 1  # the '{' already consumed
    depth = 1
    metadata: tuple[Metadata, ...] = ()
    while depth:
        if cur.peek() == "metadata" and cur.peek(1) == "=" and depth == 1:
            cur.pos += 2
            metadata = _metadata_list_at(cur)
            continue
        tok = cur.next()
        depth += tok in ("{", "[", "(")
        depth -= tok in ("}", "]", ")")
    return Sharding("named", named=_join_tokens(cur.toks[start:cur.pos]), metadata=metadata)


def _join_tokens(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if out and out[-1] not in "{[(,=" and tok not in "}]),=":
            out += " "
        out += tok
    return out


# -- collectives ----------------------------------------------------------------------------------------------


def parse_replica_groups(raw: str) -> tuple[tuple[int, ...], ...]:
    """``{{0,1},{2,3}}``, ``{}`` (all devices in one group) or iota ``[2,4]<=[8]`` / ``[4,2]<=[2,4]T(1,0)``.

    The iota form ``[G,S]<=...`` is G groups of S devices taken row by row from the expanded device list, so it
    compares equal to the explicit list it abbreviates.
    """
    cur = _Cursor(raw, "replica_groups")
    if cur.peek() == "[":
        shape = cur.ints("[", "]")
        if len(shape) != 2 or min(shape) < 0:
            raise cur.error("iota replica groups need [groups,group_size]")
        if prod(shape) > MAX_DEVICES:
            raise cur.error(f"more than {MAX_DEVICES} devices")
        cur.expect("<=")
        devices = _iota_at(cur)
        cur.end()
        if len(devices) != prod(shape):
            raise cur.error(f"{len(devices)} devices do not fill {shape[0]} groups of {shape[1]}")
        size = shape[1]
        return tuple(devices[i * size:(i + 1) * size] for i in range(shape[0]))
    groups = cur.int_lists()
    cur.end()
    return tuple(tuple(g) for g in groups)


def parse_source_target_pairs(raw: str) -> tuple[tuple[int, int], ...]:
    """``source_target_pairs={{0,1},{1,2}}`` of collective-permute."""
    cur = _Cursor(raw, "source_target_pairs")
    pairs = cur.int_lists()
    cur.end()
    if any(len(p) != 2 for p in pairs):
        raise cur.error("every pair needs exactly a source and a target")
    return tuple((p[0], p[1]) for p in pairs)


# -- slices, windows, padding, convolution labels -------------------------------------------------------------


def parse_slice(raw: str) -> tuple[tuple[int, int, int], ...]:
    """``slice={[0:4], [1:2:1]}`` as ``(start, limit, stride)`` per dimension; stride defaults to 1."""
    cur = _Cursor(raw, "slice")
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
        raise _fail("window", f"expected {{size=... ...}}, got {_short(text)}")
    fields: dict[str, list[str]] = {}
    for item in text[1:-1].split():
        key, eq, value = item.partition("=")
        if not eq or key not in _WINDOW_KEYS:
            raise _fail("window", f"unexpected {_short(item)}")
        if key in fields:
            raise _fail("window", f"duplicate {key}=")
        pattern = _PAD_RE if key == "pad" else _DXD_RE
        if not pattern.fullmatch(value):
            raise _fail("window", f"bad {key}={_short(value)}")
        fields[key] = value.split("x")
    if not fields:
        return Window(())
    if "size" not in fields:
        raise _fail("window", "missing size=")
    return Window(tuple(_window_dims(fields)))


def _window_dims(fields: dict[str, list[str]]) -> Iterator[WindowDim]:
    """One :class:`WindowDim` per ``x``-separated position; absent fields take XLA's defaults."""
    n = len(fields["size"])
    for key, values in fields.items():
        if len(values) != n:
            raise _fail("window", f"{key}= has {len(values)} dimensions but size= has {n}")

    def column(key: str, default: str) -> list[int]:
        return [_to_int(v, "window") for v in fields.get(key, [default] * n)]

    pads = [p.split("_") for p in fields.get("pad", ["0_0"] * n)]
    lows = [_to_int(p[0], "window") for p in pads]
    highs = [_to_int(p[1], "window") for p in pads]
    for size, stride, low, high, lhs, rhs, rev in zip(
            column("size", "0"), column("stride", "1"), lows, highs, column("lhs_dilate", "1"),
            column("rhs_dilate", "1"), column("rhs_reversal", "0")):
        yield WindowDim(size, stride, low, high, lhs, rhs, rev == 1)


_PADDING_RE = re.compile(r"-?\d+_-?\d+(?:_-?\d+)?(?:x-?\d+_-?\d+(?:_-?\d+)?)*")


def parse_padding_config(raw: str) -> tuple[tuple[int, int, int], ...]:
    """``padding=0_0x1_1_2`` of ``pad``: ``(low, high, interior)`` per dimension; interior defaults to 0."""
    text = raw.strip()
    if not _PADDING_RE.fullmatch(text):
        raise _fail("padding", f"expected low_high[_interior]x..., got {_short(text)}")
    out = []
    for dim in text.split("x"):
        parts = [_to_int(p, "padding") for p in dim.split("_")]
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
        raise _fail("dim_labels", f"expected lhs_rhs->out such as b01f_01io->b01f, got {_short(raw.strip())}")
    lhs, rhs, out = m.groups()
    (b, f), ls = _label_roles(lhs, "bf")
    (i, o), ks = _label_roles(rhs, "io")
    (ob, of), os_ = _label_roles(out, "bf")
    if not len(ls) == len(ks) == len(os_):
        raise _fail("dim_labels", f"{len(ls)}, {len(ks)} and {len(os_)} spatial dimensions do not agree")
    return DimLabels(lhs, rhs, out, b, f, ls, i, o, ks, ob, of, os_)


def _label_roles(labels: str, letters: str) -> tuple[tuple[int, int], tuple[int, ...]]:
    """Positions of the two role letters and of spatial digits 0..n-1 in one side of ``dim_labels``."""
    known = [c for c in labels if c != "?"]
    if len(set(known)) != len(known):
        raise _fail("dim_labels", f"repeated label in {labels!r}")
    digits = sorted(c for c in known if c.isdigit())
    if digits != [str(k) for k in range(len(digits))] or len(digits) > 10:
        raise _fail("dim_labels", f"spatial labels of {labels!r} are not 0..n-1")
    if any(not c.isdigit() and c not in letters for c in known):
        raise _fail("dim_labels", f"{labels!r} may only use {letters}, digits and ?")
    roles = tuple(labels.find(c) for c in letters)
    return (roles[0], roles[1]), tuple(labels.index(d) for d in digits)


# -- free-form configuration ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackendConfig:
    """A ``backend_config``: a quoted string (older dumps) or a bare ``{...}`` (JSON or an MLIR-style dict).

    ``text`` is the unescaped content; ``value`` is the decoded JSON, or ``None`` when the text is not JSON (MLIR
    dicts like ``{diag = 78 : ui8}``, opaque strings). Equality uses ``canonical``: re-serialized JSON with sorted
    keys when it decoded, else the text, so key order and spacing never make two configs differ.
    """

    canonical: str
    text: str = field(compare=False)
    value: Any = field(default=None, compare=False)
    is_json: bool = field(default=False, compare=False)


def parse_backend_config(raw: str) -> BackendConfig:
    """Parse a ``backend_config=`` value (see :class:`BackendConfig`)."""
    text = raw.strip()
    quoted = text.startswith('"')
    if quoted:
        text = parse_string(text)
    elif not text.startswith("{"):
        raise _fail("backend_config", f"expected a quoted string or {{...}}, got {_short(text)}")
    if text.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            return BackendConfig(json.dumps(value, sort_keys=True, separators=(",", ":")), text, value, True)
    if not quoted and group_end(text, 0) != len(text):
        raise _fail("backend_config", "unbalanced brackets in {...}")
    return BackendConfig(text, text)


_FRONTEND_KEY_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*=\s*")
_SEP_RE = re.compile(r"\s*(,|\})")


def parse_frontend_attributes(raw: str) -> dict[str, str]:
    """``frontend_attributes={_xla_compute_type="host", key={json}}`` in text order; strings unescaped."""
    text = raw.strip()
    if not text.startswith("{"):
        raise _fail("frontend_attributes", f"expected {{key=value, ...}}, got {_short(text)}")
    out: dict[str, str] = {}
    pos = 1
    if re.match(r"\s*\}\s*$", text[pos:]):
        return out
    while True:
        m = _FRONTEND_KEY_RE.match(text, pos)
        if m is None:
            raise _fail("frontend_attributes", f"expected key=value at {_short(text[pos:])}")
        key, pos = m.group(1), m.end()
        value, pos = _frontend_value(text, pos)
        out[key] = value
        sep = _SEP_RE.match(text, pos)
        if sep is None:
            raise _fail("frontend_attributes", f"expected ',' or '}}' at {_short(text[pos:])}")
        pos = sep.end()
        if sep.group(1) == "}":
            if text[pos:].strip():
                raise _fail("frontend_attributes", f"unexpected {_short(text[pos:].strip())} after '}}'")
            return out


def _frontend_value(text: str, pos: int) -> tuple[str, int]:
    if text.startswith('"', pos):
        m = _STRING_RE.match(text, pos)
        if m is None:
            raise _fail("frontend_attributes", "unterminated string")
        return unescape(m.group(0)[1:-1]), m.end()
    if text.startswith("{", pos):
        end = group_end(text, pos)
        if end < 0:
            raise _fail("frontend_attributes", "unbalanced '{'")
        return text[pos:end], end
    raise _fail("frontend_attributes", f"expected a string or {{...}} at {_short(text[pos:])}")


# -- module header and aliasing -------------------------------------------------------------------------------


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
    cur = _Cursor(raw, what)
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
                raise cur.error(f"unknown alias kind {_short(kind)}")
        cur.expect(")")
        yield build(out, number, index, kind) if with_kind else build(out, number, index)
    cur.end()


def parse_buffer_donor(raw: str) -> tuple[BufferDonor, ...]:
    """``buffer_donor={ (0, {}), (1, {0}) }``."""
    cur = _Cursor(raw, "buffer_donor")
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
    text = _COMMENT_RE.sub(" ", raw).strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise _fail("entry_computation_layout", f"expected {{(params)->result}}, got {_short(text)}")
    body = text[1:-1].strip()
    if not body.startswith("("):
        raise _fail("entry_computation_layout", "expected '(' before the parameter shapes")
    close = group_end(body, 0)
    if close < 0:
        raise _fail("entry_computation_layout", "unbalanced parameter list")
    rest = body[close:].lstrip()
    if not rest.startswith("->") or not rest[2:].strip():
        raise _fail("entry_computation_layout", "expected '->' and a result shape")
    params = [_squeeze(p) for p in split_top_level(body[1:close - 1], "entry_computation_layout")]
    if params == [""]:
        params = []
    result = _squeeze(rest[2:])
    if any(not p for p in params) or split_top_level(result, "entry_computation_layout") != [result]:
        raise _fail("entry_computation_layout", "empty or misplaced shape")
    convert = parse_shape or (lambda s: s)
    return ComputationLayout(tuple(convert(p) for p in params), convert(result))


def parse_shape_list(raw: str, parse_shape: Callable[[str], Any] | None = None) -> tuple[Any, ...]:
    """``operand_layout_constraints={f64[3,3]{0,1}, f64[3]{0}}``: shape texts (or callback results)."""
    text = _COMMENT_RE.sub(" ", raw).strip()
    if not (text.startswith("{") and group_end(text, 0) == len(text)):
        raise _fail("shape list", f"expected {{shape, ...}}, got {_short(text)}")
    items = [_squeeze(s) for s in split_top_level(text[1:-1], "shape list")]
    if items == [""]:
        return ()
    if any(not s for s in items):
        raise _fail("shape list", "empty shape")
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
        raise _fail(what, str(err)) from None


# -- dispatch -------------------------------------------------------------------------------------------------


def _computation_refs(raw: str) -> tuple[str, ...]:
    text = raw.strip()
    return parse_name_list(text) if text.startswith("{") else (_name(text, "computation name"),)


_INT_LIST_KEYS = (
    "dimensions", "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims",
    "lhs_ragged_dims", "rhs_group_dims", "dynamic_slice_sizes", "slice_sizes", "offset_dims",
    "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims",
    "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "fft_length",
)
_INT_KEYS = ("index", "channel_id", "iota_dimension", "index_vector_dim", "feature_group_count",
             "batch_group_count", "exponent_bits", "mantissa_bits", "cross_program_prefetch_index", "k",
             "replica_count", "num_partitions")
_BOOL_KEYS = ("is_stable", "indices_are_sorted", "unique_indices", "use_global_device_ids", "constrain_layout",
              "largest", "is_host_transfer", "is_scheduled", "alias_passthrough_params")
_STRING_KEYS = ("custom_call_target", "infeed_config", "outfeed_config", "execution_thread",
                "async_execution_thread")
_ENUM_KEYS = ("kind", "type", "fft_type", "api_version", "custom_call_schedule", "distribution", "padding_type",
              "algorithm", "rng_algorithm")

ATTRIBUTE_PARSERS: dict[str, Callable[[str], Any]] = {
    "metadata": parse_metadata,
    "sharding": parse_sharding,
    "replica_groups": parse_replica_groups,
    "source_target_pairs": parse_source_target_pairs,
    "slice": parse_slice,
    "window": parse_window,
    "padding": parse_padding_config,
    "dim_labels": parse_dim_labels,
    "backend_config": parse_backend_config,
    "frontend_attributes": parse_frontend_attributes,
    "direction": parse_direction,
    "operand_precision": parse_name_list,
    "control-predecessors": parse_name_list,
    "output_to_operand_aliasing": parse_output_operand_aliasing,
    "operand_layout_constraints": parse_shape_list,
    "input_output_alias": parse_input_output_alias,
    "buffer_donor": parse_buffer_donor,
    "entry_computation_layout": parse_computation_layout,
    "allow_spmd_sharding_propagation_to_parameters": parse_bool_list,
    "allow_spmd_sharding_propagation_to_output": parse_bool_list,
    **{key: _computation_refs for key in CALL_KEYS},
    **{key: parse_int_list for key in _INT_LIST_KEYS},
    **{key: parse_int for key in _INT_KEYS},
    **{key: parse_bool for key in _BOOL_KEYS},
    **{key: parse_string for key in _STRING_KEYS},
    **{key: parse_enum for key in _ENUM_KEYS},
}
"""Typed parser per attribute key (instruction and module header keys). Keys not listed stay plain text."""


def parse_attribute(key: str, raw: str) -> Any:
    """The typed value of ``key=raw`` when hlodiff knows the key, else ``raw`` unchanged."""
    parser = ATTRIBUTE_PARSERS.get(key)
    return raw if parser is None else parser(raw)


def validate_attributes(attrs: dict[str, str]) -> None:
    """Run the typed parser of every known key (instruction or module header attributes); unknown keys pass.

    Raises :class:`HloParseError` ``"attribute <key>: bad <what>: <reason>"`` for the first value that fails, so
    a strict parse proves every attribute form in a dump is understood.
    """
    for key, raw in attrs.items():
        parser = ATTRIBUTE_PARSERS.get(key)
        if parser is None:
            continue
        try:
            parser(raw)
        except HloParseError as e:
            raise HloParseError(f"attribute {key}: {e.message}") from None
