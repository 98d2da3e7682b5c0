"""``metadata={...}``: where an instruction came from in the user's program."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hlodiff.hlo.attributes.cursor import Cursor
from hlodiff.hlo.attributes.scalars import IDENT_RE, INT_RE, fail, short, to_int, unescape


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
        raise fail("metadata", f"expected {{key=value ...}}, got {short(text)}")
    pairs = []
    for key, value, junk in _META_RE.findall(text, 1, len(text) - 1):
        if junk:
            raise fail("metadata", f"unexpected {short(text[text.find(junk, 1):])}")
        pairs.append((key, value))
    return _metadata_from_pairs(pairs)


def _metadata_from_pairs(pairs: list[tuple[str, str]]) -> Metadata:
    if not pairs:
        return _EMPTY_METADATA
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise fail("metadata", "duplicate key")
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
        raise fail("metadata", f"{key} must be a quoted string")
    return unescape(value[1:-1], strict=False)


def _metadata_int(key: str, value: str) -> int:
    if not INT_RE.fullmatch(value):
        raise fail("metadata", f"{key} must be an integer, got {short(value)}")
    return to_int(value, "metadata")


def _metadata_at(cur: Cursor) -> Metadata:
    """One ``{key=value ...}`` metadata block read from a token stream (metadata inside a sharding)."""
    cur.expect("{")
    pairs: list[tuple[str, str]] = []
    while not cur.eat("}"):
        if cur.eat(","):
            continue
        key = cur.next()
        cur.expect("=")
        value = "".join(cur.skip_balanced()) if cur.peek() == "{" else cur.next()
        if not IDENT_RE.fullmatch(key) or value[0] in "=,:<-)]}([":
            raise cur.error(f"bad metadata entry {key!r}")
        pairs.append((key, value))
    return _metadata_from_pairs(pairs)


def metadata_list_at(cur: Cursor) -> tuple[Metadata, ...]:
    """``metadata={...}`` or ``metadata={{...}, {...}}`` inside a sharding."""
    if cur.peek() == "{" and cur.peek(1) == "{":
        cur.expect("{")
        out = [_metadata_at(cur)]
        while cur.eat(","):
            out.append(_metadata_at(cur))
        cur.expect("}")
        return tuple(out)
    return (_metadata_at(cur),)
