"""Tables that fit the terminal without splitting a path, ``file:line``, hash or header word.

rich folds a cell that does not fit at any character: ``item_part`` / ``ial.py:36``, ``output`` / ``s``. A user
reading that cannot copy the location, and a header split mid-word reads as two columns. Here a cell is never cut
mid-token: when the table is too wide its least important columns are left out first (one dim line says which;
``--json`` has everything), and only if the rest still does not fit are the long tokens of a column shortened from
the left (``…tial.py:36`` keeps the part that tells files and lines apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

ELLIPSIS = "…"
SEPARATOR = 3
"""Cells between two columns of a table drawn with ``show_edge=False, pad_edge=False``: pad, rule, pad."""


@dataclass(frozen=True)
class Column:
    """``shrink_to``: how narrow shortening from the left may make the column's tokens (0: never shortened).
    ``drop``: the order in which columns are left out when shortening is not enough (0: never; 1 first).
    ``wrap``: cells may wrap between words (never inside one)."""

    header: str
    justify: str = "left"
    shrink_to: int = 0
    drop: int = 0
    wrap: bool = False


@dataclass
class FitTable:
    """Collect rows of markup strings (or :class:`Text`), then :meth:`print` them fitted to the console width."""

    columns: list[Column]
    title: str | None = None
    rows: list[list[Text]] = field(default_factory=list)

    def add_row(self, *cells: str | Text) -> None:
        self.rows.append([c if isinstance(c, Text) else Text.from_markup(c) for c in cells])

    def print(self, console: Console) -> None:
        kept, widths = layout(self.columns, self.rows, console.width)
        table = Table(show_edge=False, pad_edge=False, header_style="bold", title=self.title, title_justify="left")
        for i in kept:
            col = self.columns[i]
            table.add_column(col.header, justify=col.justify, no_wrap=not col.wrap, overflow="fold", width=widths[i])
        for row in self.rows:
            table.add_row(*(_fit_cell(row[i], widths[i], self.columns[i]) for i in kept))
        console.print(table)
        dropped = [c.header for i, c in enumerate(self.columns) if i not in kept]
        if dropped:
            console.print(Text(f"(left out at {console.width} columns: {', '.join(dropped)}; --json has them)",
                               style="dim"), highlight=False)


def _words(text: str) -> list[str]:
    return text.split() or [""]


def natural_width(column: Column, cells: list[Text]) -> int:
    """The width the column takes when nothing is shortened."""
    return max([len(column.header)] + [c.cell_len for c in cells])


def floor_width(column: Column, cells: list[Text]) -> int:
    """The narrowest the column may become: its longest header word, and its tokens shortened no further than
    ``shrink_to`` (a column that may wrap wraps between words, so its floor is a word, not a cell)."""
    header = max(len(w) for w in _words(column.header)) if column.wrap else len(column.header)
    longest = max([0] + [max(len(w) for w in _words(c.plain)) if column.wrap else c.cell_len for c in cells])
    if column.shrink_to:
        longest = min(longest, column.shrink_to)
    return max(header, longest)


def layout(columns: list[Column], rows: list[list[Text]], width: int) -> tuple[list[int], list[int]]:
    """Which columns to keep (indices, in order) and each column's width so that the table fits ``width``."""
    cells = [[row[i] for row in rows] for i in range(len(columns))]
    natural = [natural_width(c, cells[i]) for i, c in enumerate(columns)]
    floor = [min(floor_width(c, cells[i]), natural[i]) for i, c in enumerate(columns)]
    kept = list(range(len(columns)))

    def total(ws: list[int]) -> int:
        return sum(ws[i] for i in kept) + SEPARATOR * (len(kept) - 1)

    droppable = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop)
    while total(natural) > width and droppable:  # a count left out reads better than a location cut short
        kept.remove(droppable.pop(0)[1])
    widths = list(natural)
    excess = total(widths) - width
    while excess > 0:  # narrow the column with the most room above its floor, one cell at a time
        room = max(kept, key=lambda i: widths[i] - floor[i])
        if widths[room] <= floor[room]:
            break
        step = min(excess, widths[room] - floor[room], max(1, (widths[room] - floor[room]) // 4))
        widths[room] -= step
        excess -= step
    return kept, widths


def shorten_left(text: Text, width: int) -> Text:
    """``text`` cut from the left to ``width`` cells, an ellipsis marking the cut: the end of a path or
    ``file:line`` is what tells two apart."""
    if text.cell_len <= width or width < 2:
        return text
    return Text(ELLIPSIS) + text[len(text) - (width - 1):]


def _fit_cell(cell: Text, width: int, column: Column) -> Text:
    if not column.wrap:
        return shorten_left(cell, width)
    if all(len(w) <= width for w in _words(cell.plain)):
        return cell
    return Text(" ").join(shorten_left(Text(w), width) for w in cell.plain.split(" "))
