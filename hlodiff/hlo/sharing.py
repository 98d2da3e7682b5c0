"""One object for each value the modules of a comparison hold equal: names, operand tuples, line numbers, attributes.

Two graphs compared are mostly one program, so most of the right module's names, operand tuples and line numbers
equal the left's (at 300K instructions a side: 16 MB, 12 MB and 8 MB of objects), and instructions whose
attributes are written alike, on either side, can share one ``attrs`` (:class:`SharedAttributes`). Parsed inside
:func:`shared_values`, each new instruction gets the object an earlier parse made for an equal value (the
accelerator's ``shared.c``; :func:`share` here for the pure-Python parser). The values are equal, so nothing a
reader sees changes; the tables go when the block ends, and the modules keep only their own objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hlodiff.accel import native
from hlodiff.hlo.model import SharedAttributes

_table: dict | None = None  # the pure-Python parser's tables while sharing is on: values, and attrs by their text
_attrs: dict[str, SharedAttributes] | None = None


@contextmanager
def shared_values() -> Iterator[None]:
    """Parse the modules of one comparison inside this block (nested blocks share the outermost's tables)."""
    global _table, _attrs
    outer = _table, _attrs
    if _table is None:
        _table, _attrs = {}, {}
    if native is not None:
        native.share_values(True)
    try:
        yield
    finally:
        if native is not None:
            native.share_values(False)
        _table, _attrs = outer


def share(value):
    """The object equal to ``value`` an earlier parse of this block made (``value`` itself when sharing is off)."""
    if native is not None:  # the table the accelerator's parser fills
        return native.share(value)
    table = _table
    return value if table is None else table.setdefault(value, value)


def share_attributes(line: str, end: int, attrs: dict[str, str]) -> dict[str, str]:
    """The attrs an earlier instruction written with the same text after its operands (``line[end:]``) got, as a
    :class:`SharedAttributes`; ``attrs`` itself when sharing is off."""
    if native is not None:  # the table the accelerator's parser fills
        return native.share_attributes(line[end:], attrs)
    table = _attrs
    if table is None:
        return attrs
    text = line[end:]
    kept = table.get(text)
    if kept is None:
        kept = table[text] = SharedAttributes(attrs)
    return kept
