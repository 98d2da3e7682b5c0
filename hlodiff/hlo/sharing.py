"""One object for each value the modules of a comparison hold equal: line numbers, and attributes written alike.

Two graphs compared are mostly one program, so the right module's line numbers equal the left's (258K ints, 8 MB
at 300K instructions a side), and instructions whose attributes are written alike, on either side, can share one
read-only ``attrs`` (:class:`SharedAttributes`: ``dimensions={0}`` on 40,800 broadcasts a side, 180 bytes each).
Parsed inside :func:`shared_values`, each new instruction gets the object an earlier line made for an equal value
(the accelerator's ``shared.c``, whose tables the pure-Python parser fills too, or this module's without it). The
values are equal, so nothing a reader sees changes; the tables go when the block ends, and the modules keep only
their own objects. Names and operand tuples are not shared: a probe of a table as large as the module for each cost
more CPU than the parse saved.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hlodiff.accel import native
from hlodiff.hlo.model import SharedAttributes

_lines: dict[int, int] | None = None  # the pure-Python parser's tables while sharing is on
_attrs: dict[str, SharedAttributes] | None = None


@contextmanager
def shared_values() -> Iterator[None]:
    """Parse the modules of one comparison inside this block (nested blocks share the outermost's tables)."""
    global _lines, _attrs
    outer = _lines, _attrs
    if _lines is None:
        _lines, _attrs = {}, {}
    if native is not None:
        native.share_values(True)
    try:
        yield
    finally:
        if native is not None:
            native.share_values(False)
        _lines, _attrs = outer


def share_line(line: int) -> int:
    """The int an earlier line of this block got for ``line`` (``line`` itself when sharing is off)."""
    if native is not None:  # the table the accelerator's parser fills
        return native.share_line(line)
    table = _lines
    return line if table is None else table.setdefault(line, line)


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
