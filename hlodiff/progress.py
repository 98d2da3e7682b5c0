"""Reporting progress of long work: the tasks work opens and the listener that may draw them.

This is the layer-neutral side of progress. The layers that read and compare (``hlo/``, ``dumps/``, ``graph/``,
``diff/``, ``explain/``, ``cost/``) may not import ``render/``; they call :func:`task` or :func:`stage` here, which
cost nothing when no listener is installed (the library default, tests, pipes). Drawing is someone else's job: the
CLI installs the terminal bar from :mod:`hlodiff.render.progress_bar` only when stderr is a terminal and ``-q`` was
not given.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Protocol


class Listener(Protocol):
    def start(self, label: str, total: float | None, unit: str) -> int: ...

    def update(self, task_id: int, completed: float) -> None: ...

    def finish(self, task_id: int) -> None: ...


_listener: Listener | None = None


class Task:
    """A unit of long work: ``update(completed)`` or ``advance(n)``, then ``close()`` (or use ``with``)."""

    __slots__ = ("_id", "completed")

    def __init__(self, task_id: int | None) -> None:
        self._id = task_id
        self.completed = 0.0

    @property
    def active(self) -> bool:
        """Whether anyone draws this task (callers skip bookkeeping that would only feed a silent task)."""
        return self._id is not None

    def update(self, completed: float) -> None:
        self.completed = completed
        if self._id is not None and _listener is not None:
            _listener.update(self._id, completed)

    def advance(self, n: float = 1) -> None:
        self.update(self.completed + n)

    def close(self) -> None:
        if self._id is not None and _listener is not None:
            _listener.finish(self._id)
        self._id = None

    def __enter__(self) -> "Task":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def task(label: str, total: float | None = None, unit: str = "") -> Task:
    """Start reporting a unit of work (``unit`` "bytes" draws sizes); a silent task when nobody listens."""
    if _listener is None:
        return Task(None)
    return Task(_listener.start(label, total, unit))


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Install ``listener`` for the duration of a command (``None``: stay silent)."""
    global _listener
    previous, _listener = _listener, listener
    try:
        yield
    finally:
        _listener = previous


BYTES_STEP = 1 << 22
"""Bytes between two updates of a reading bar."""


def counted_lines(lines: Iterator[bytes], bar: Task) -> Iterator[bytes]:
    """``lines`` unchanged, reporting the bytes read to ``bar`` every :data:`BYTES_STEP` bytes."""
    pos = shown = 0
    for line in lines:
        pos += len(line)
        if pos - shown >= BYTES_STEP:
            bar.update(pos)
            shown = pos
        yield line


BIG_GRAPH = 5_000
"""Lines or instructions from which one graph's stages (parsing, normalizing, matching, costing) get bars of their
own: a 30K-instruction pair takes seconds in each, while the many small graphs of a run stay under one bar."""


def stage(label: str, size: int, total: float | None = None, unit: str = "") -> Task:
    """A task for one stage of work on a single graph of ``size`` lines or instructions; silent below
    :data:`BIG_GRAPH` (a run's hundreds of small graphs would only flicker)."""
    return task(label, total, unit) if size >= BIG_GRAPH else Task(None)
