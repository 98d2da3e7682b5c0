"""A report line that wraps under its own text, shared by every terminal renderer (:mod:`.terminal`, :mod:`.dynamo`,
:mod:`.cost`, :mod:`.ranks`): a module of its own so that none of them imports another for it."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text


class Hanging:
    """A report line whose continuation lines start ``hang`` columns in, under its own text (``fix: ...`` wrapped
    on a narrow terminal stays a block beside the cause, not text at column 0). Piped, the console does not wrap
    (``no_wrap``) and this is the plain line."""

    def __init__(self, text: Text, hang: int) -> None:
        self.text, self.hang = text, hang

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.no_wrap or cell_len(self.text.plain) <= options.max_width or options.max_width <= self.hang + 8:
            yield self.text
            return
        head, body = self.text.divide([self.hang])
        grid = Table.grid()
        grid.add_column(width=self.hang, no_wrap=True)
        grid.add_column()
        grid.add_row(head, body)
        yield grid
