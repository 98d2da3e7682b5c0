"""The progress bar of long commands: rich, on stderr, only on a terminal.

Never on stdout (where reports and ``--json`` documents go), never when stderr is piped or redirected, never
with ``-q``. Work that finishes within :data:`DELAY` seconds draws nothing at all, so small inputs stay as quiet
as before; the bar is transient and leaves no trace in the scrollback.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from hlodiff.progress import listening

if TYPE_CHECKING:  # rich is imported when a bar is drawn: piped and --json runs never load it
    from rich.console import Console
    from rich.progress import Progress

DELAY = 0.4
"""Seconds a command runs before a bar appears (``HLODIFF_PROGRESS_DELAY`` overrides it)."""


def _delay() -> float:
    try:
        return float(os.environ.get("HLODIFF_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY


class TerminalProgress:
    """A :class:`hlodiff.progress.Listener` drawing rich bars; the live display starts on the first update
    after :data:`DELAY`."""

    def __init__(self, console: Console, delay: float | None = None) -> None:
        self.console = console
        self.delay = _delay() if delay is None else delay
        self.began = time.monotonic()
        self.progress: Progress | None = None
        self.tasks: dict[int, tuple[str, float | None, str, float]] = {}
        self.rich_ids: dict[int, object] = {}
        self.next_id = 0

    def start(self, label: str, total: float | None, unit: str) -> int:
        self.next_id += 1
        self.tasks[self.next_id] = (label, total, unit, 0.0)
        self._refresh(self.next_id)
        return self.next_id

    def update(self, task_id: int, completed: float) -> None:
        if task_id not in self.tasks:
            return
        label, total, unit, _ = self.tasks[task_id]
        self.tasks[task_id] = (label, total, unit, completed)
        self._refresh(task_id)

    def finish(self, task_id: int) -> None:
        self.tasks.pop(task_id, None)
        rich_id = self.rich_ids.pop(task_id, None)
        if rich_id is not None and self.progress is not None:
            self.progress.remove_task(rich_id)

    def _refresh(self, task_id: int) -> None:
        if self.progress is None:
            if time.monotonic() - self.began < self.delay:
                return
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                     TextColumn("{task.fields[amount]}"), TimeElapsedColumn(),
                                     console=self.console, transient=True)
            self.progress.start()
        label, total, unit, completed = self.tasks[task_id]
        amount = _amount(completed, total, unit)
        if task_id not in self.rich_ids:
            self.rich_ids[task_id] = self.progress.add_task(label, total=total, completed=completed, amount=amount)
        else:
            self.progress.update(self.rich_ids[task_id], completed=completed, amount=amount)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _amount(completed: float, total: float | None, unit: str) -> str:
    if unit == "bytes":
        done = f"{completed / 1e6:,.0f} MB"
        return f"{done} of {total / 1e6:,.0f} MB" if total else done
    suffix = f" {unit}" if unit else ""
    return f"{int(completed):,}/{int(total):,}{suffix}" if total else f"{int(completed):,}{suffix}"


def wanted(quiet: bool, stream=None) -> bool:
    """A bar only when stderr is an interactive terminal and the user did not ask for quiet."""
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def progress_on_terminal(quiet: bool = False, console: Console | None = None) -> Iterator[None]:
    """Show progress of the work inside the block on stderr when :func:`wanted`; ``console`` forces one (tests)."""
    if console is None:
        if not wanted(quiet):
            yield
            return
        from hlodiff.render.terminal import SafeConsole  # labels name files: escaped like every other text

        console = SafeConsole(file=sys.stderr)
    elif quiet:
        yield
        return
    bars = TerminalProgress(console)
    try:
        with listening(bars):
            yield
    finally:
        bars.close()
