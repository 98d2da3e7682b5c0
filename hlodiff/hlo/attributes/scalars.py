"""What every attribute family shares: the one error shape (``bad <what>: <reason>``), strings with C escapes,
integers, booleans, names and lists of them."""

from __future__ import annotations

import re
from typing import TypeVar

from hlodiff.errors import HloParseError

T = TypeVar("T")

MAX_DEVICES = 1 << 20
"""Largest device count an iota form may expand to; protects against absurd sizes in corrupt input."""


def fail(what: str, reason: str) -> HloParseError:
    """The one error shape every parser raises: ``bad <what>: <reason>``."""
    return HloParseError(f"bad {what}: {reason}")


def short(text: str, limit: int = 40) -> str:
    """A value quoted for an error message, cut so huge attributes do not flood the terminal."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'  # unrolled: far faster in Python's re than an alternation per char
STRING_RE = re.compile(_STRING, re.S)
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
                raise fail("string", f"escape {m.group(0)!r} is larger than a byte")
            parts.append(bytes([value]))
            raw = True
        elif u4 is not None or u8 is not None:
            code = int(u4 or u8, 16)
            if code > 0x10FFFF:
                raise fail("string", f"escape {m.group(0)!r} is not a code point")
            parts.append(chr(code))
        elif char in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[char])
        elif not strict:
            parts.append(m.group(0))
        else:
            raise fail("string", f"unknown escape {m.group(0)!r}")
    parts.append(body[last:])
    if not raw:
        return "".join(parts)  # type: ignore[arg-type]
    data = b"".join(p if isinstance(p, bytes) else p.encode("utf-8", "surrogatepass") for p in parts)
    return data.decode("utf-8", "backslashreplace")


def parse_string(raw: str) -> str:
    """A quoted attribute such as ``custom_call_target="lapack_dtrsm_ffi"``, unescaped."""
    text = raw.strip()
    if not STRING_RE.fullmatch(text):
        raise fail("string", f"expected a quoted string, got {short(text)}")
    return unescape(text[1:-1])


# -- scalars and lists ----------------------------------------------------------------------------------------

INT_RE = re.compile(r"[-+]?\d+")
_INT_LIST_RE = re.compile(r"\{\s*(?:[-+]?\d+\s*(?:,\s*[-+]?\d+\s*)*)?\}")
_NAME = r"%?[A-Za-z0-9_.\-]+"
_NAME_RE = re.compile(_NAME)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)


def to_int(text: str, what: str) -> int:
    """``int()`` that reports absurdly long digit strings (Python refuses > 4300 digits) as bad input."""
    try:
        return int(text)
    except ValueError:
        raise fail(what, f"{short(text)} is not an integer") from None


def parse_int(raw: str) -> int:
    """``index=3``, ``channel_id=1``, ``iota_dimension=0``."""
    text = raw.strip()
    if not INT_RE.fullmatch(text):
        raise fail("integer", f"expected an integer, got {short(text)}")
    return to_int(text, "integer")


def parse_bool(raw: str) -> bool:
    """``is_stable=true``; XLA accepts exactly ``true`` and ``false``."""
    text = raw.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    raise fail("boolean", f"expected true or false, got {short(text)}")


def parse_bool_list(raw: str) -> tuple[bool, ...]:
    """``allow_spmd_sharding_propagation_to_output={true,false}`` or a single ``true``."""
    text = COMMENT_RE.sub(" ", raw).strip()
    if not text.startswith("{"):
        return (parse_bool(text),)
    if not text.endswith("}"):
        raise fail("boolean list", "expected '}' at the end")
    inner = text[1:-1].strip()
    return tuple(parse_bool(item) for item in inner.split(",")) if inner else ()


def parse_int_list(raw: str) -> tuple[int, ...]:
    """``dimensions={0,1}``, ``lhs_contracting_dims={1}``, ``dynamic_slice_sizes={}``."""
    text = COMMENT_RE.sub(" ", raw).strip() if "/*" in raw else raw.strip()
    if not _INT_LIST_RE.fullmatch(text):
        raise fail("integer list", f"expected {{int, ...}}, got {short(text)}")
    inner = text[1:-1]
    return tuple(to_int(x, "integer list") for x in inner.split(",")) if inner.strip() else ()


def parse_name_list(raw: str) -> tuple[str, ...]:
    """``{%a, %b}`` (control-predecessors, branch_computations) or ``{highest,highest}``; ``%`` removed."""
    text = COMMENT_RE.sub(" ", raw).strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise fail("name list", f"expected {{name, ...}}, got {short(text)}")
    inner = text[1:-1].strip()
    if not inner:
        return ()
    return tuple(plain_name(item, "name list") for item in inner.split(","))


def plain_name(text: str, what: str) -> str:
    name = text.strip()
    if not _NAME_RE.fullmatch(name):
        raise fail(what, f"{short(name)} is not a name")
    return name.removeprefix("%")


def parse_enum(raw: str) -> str:
    """An identifier value such as ``kind=kLoop``, ``type=TOTALORDER`` or ``api_version=API_VERSION_TYPED_FFI``."""
    text = raw.strip()
    if not IDENT_RE.fullmatch(text):
        raise fail("identifier", f"expected a name, got {short(text)}")
    return text


_DIRECTIONS = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE"})


def parse_direction(raw: str) -> str:
    """``direction=LT``: the six comparison directions XLA knows."""
    text = raw.strip()
    if text not in _DIRECTIONS:
        raise fail("direction", f"expected one of EQ NE LT LE GT GE, got {short(text)}")
    return text
