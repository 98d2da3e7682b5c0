"""Dynamo's ``WON'T CONVERT fn FILE line N`` record when it is logged outside the graph-break channel (at INFO
level, what ``TORCH_LOGS=+dynamo`` shows): Dynamo gave a frame up and runs it without compiling. A generator
expression passed to a compiled function is the case this was read for (d32_genexpr_arg: ``WON'T CONVERT
<genexpr> train.py line 36`` with ``Attempt to trace generator``; the function iterating it is skipped with it).

Only a record about the user's own code is kept: torch's own generators (``<genexpr>`` in typing.py, logged
while Dynamo traced something else: d30_saliency_autograd_grad) are not the user's to change. A record is read
once the next record of another source starts, so a log still being written keeps it for later."""

from __future__ import annotations

import re
from typing import Callable, Generic, TypeVar

_LOOSE = re.compile(r"^WON'T CONVERT \S+ (?P<file>.+) line \d+\s*$")
_CID = re.compile(r"\[(?P<cid>\d+/\d+)(?:_\d+)?\]")

B = TypeVar("B")


class LooseGaveUp(Generic[B]):
    """Collects the lines of out-of-channel ``WON'T CONVERT`` records; ``read(cid, lineno, bodies)`` is the
    module that knows the record's layout (dynamo_log's reader of the channel's records, told it is closed)."""

    def __init__(self, read: Callable[[str, int, list[str]], B | None], is_library: Callable[[str], bool]):
        self._read, self._is_library = read, is_library
        self._cid = "0/0"
        self._open: tuple[str, int, str, list[str]] | None = None  # (compile id, line, source, bodies)
        self.found: list[B] = []

    def line(self, text: str, prefix: re.Match | None, lineno: int) -> None:
        """Every line of the log that is not a recompile or graph-break channel line."""
        if prefix is not None and (c := _CID.match(text, prefix.end())) is not None:
            self._cid = c.group("cid")
        body = text[prefix.end():] if prefix is not None else text
        src = prefix.group("src") if prefix is not None else None
        if self._open is not None and src == self._open[2]:
            self._open[3].append(body)
            return
        self.close()
        m = _LOOSE.match(body)
        if src is not None and m is not None and not self._is_library(m.group("file")):
            self._open = (self._cid, lineno, src, [body])

    def close(self) -> None:
        """Another record started (a channel line counts too): the open record is whole."""
        if self._open is None:
            return
        cid, lineno, _src, bodies = self._open
        self._open = None
        brk = self._read(cid, lineno, bodies)
        if brk is not None:
            self.found.append(brk)
