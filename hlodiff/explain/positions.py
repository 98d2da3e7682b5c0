"""A set of graph positions in one byte per graph of the run.

Runs of a million steps can have a million partial graphs (an ``.item()`` every step): a Python set of their
positions costs about 60 bytes each, a flag per position one byte.
"""

from __future__ import annotations

from typing import Iterable, Iterator


class Positions:
    """Set-like (``in``, iteration in order, ``len``) over positions ``0 .. size-1``."""

    __slots__ = ("_flags", "_count")

    def __init__(self, size: int, members: Iterable[int] = ()):
        self._flags = bytearray(size)
        self._count = 0
        for i in members:
            self.add(i)

    def add(self, position: int) -> None:
        if not self._flags[position]:
            self._flags[position] = 1
            self._count += 1

    def __contains__(self, position: object) -> bool:
        return isinstance(position, int) and 0 <= position < len(self._flags) and bool(self._flags[position])

    def __iter__(self) -> Iterator[int]:
        find, i = self._flags.find, 0
        while (i := find(1, i)) >= 0:
            yield i
            i += 1

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0
