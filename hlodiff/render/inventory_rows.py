"""Rows of the ``hlodiff inspect`` table when a run has too many graphs to list one per line.

A run of a million steps is a few compilations and long runs of cache hits. Past :data:`TABLE_ROWS` graphs the
table shows every compilation and folds each run of consecutive cache hits of the same graph into one row
(``#12-#99,999``, ``99,988 hits of #9``); if that is still too long, the first and last rows are kept around one
line saying how many were left out. ``--json`` always lists every graph.
"""

from __future__ import annotations

from dataclasses import dataclass

TABLE_ROWS = 2000
"""Graphs listed one per row before the table is summarised."""


@dataclass(slots=True)
class Row:
    """One table row: a graph, or a run of cache hits (``first`` to ``last``, ``count`` graphs)."""

    first: object
    last: object
    count: int = 1


@dataclass(slots=True)
class Elided:
    """Rows left out of the middle of a table that is still too long after folding."""

    rows: int
    graphs: int


def table_rows(summaries, limit: int = TABLE_ROWS) -> tuple[list[Row | Elided], bool]:
    """The rows to print and whether the table was summarised."""
    if len(summaries) <= limit:
        return [Row(s, s) for s in summaries], False
    rows: list[Row | Elided] = []
    for s in summaries:
        last = rows[-1] if rows else None
        if (not s.compiled and isinstance(last, Row) and not last.first.compiled
                and last.first.first_ref == s.first_ref and last.last.record.index + 1 == s.record.index
                and last.first.record.source == s.record.source):
            last.last = s
            last.count += 1
        else:
            rows.append(Row(s, s))
    if len(rows) > limit:
        half = limit // 2
        hidden = rows[half:len(rows) - half]
        graphs = sum(r.count for r in hidden if isinstance(r, Row))
        rows = rows[:half] + [Elided(len(hidden), graphs)] + rows[len(rows) - half:]
    return rows, True
