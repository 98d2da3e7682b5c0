"""One copy of each value that repeats from graph to graph while a run is read: the same stacks, hashes and names
recur at every step, and a reader that kept each step's own copy would hold a million copies of a handful of values.
"""

from __future__ import annotations


UNSEEN = object()
"""A cache's miss where None is a value kept (a frame line that does not parse)."""


class SharedValues:
    """One copy of each value that repeats from entry to entry (stacks, hashes, names): a run of a million steps
    has a handful of distinct ones, and a million copies of each would cost kilobytes per graph."""

    SIZE = 65536
    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict = {}

    def __call__(self, value):
        if value is None:
            return None
        kept = self.values.get(value)
        if kept is None:
            if len(self.values) >= self.SIZE:
                self.values.clear()
            kept = self.values[value] = value
        return kept
