"""A line found at one recompilation of a family lends itself to its siblings told by the same row.

Some rows tell a family's every recompilation as one repeated change: a Python loop unrolled once more per stage
(``ops_loop_unrolled``: the same block of ops added each time, inner_loop_count). The first added block can carry
only library frames (its lead change a dot in torch's linear), while the next names the user's loop body (:16): the
line is the same change's, so the recompilation without one takes it.
"""

from __future__ import annotations

SAME_CHANGE_ROWS = frozenset({"ops_loop_unrolled"})
"""Rows whose recompilations in one family are the same change repeated (a test per row:
tests/test_leftovers13.py)."""


def place_from_siblings(recompilations) -> None:
    """A cause of a ``SAME_CHANGE_ROWS`` row with no line takes the user lines of the first cause of the same row in
    another recompilation of its family that has them."""
    for r in recompilations:
        for cause in r.causes:
            if cause.fix_rule not in SAME_CHANGE_ROWS or cause.locations:
                continue
            sibling = next((c for x in recompilations if x.family is r.family and x is not r for c in x.causes
                            if c.fix_rule == cause.fix_rule and c.locations
                            and not any(f.is_library for f in c.locations)), None)
            if sibling is not None:
                cause.locations = list(sibling.locations)
                cause.hint = None
