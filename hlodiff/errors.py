"""User-facing errors and warnings.

Every problem a user can cause with their input becomes an :class:`HlodiffError`, which the CLI prints as one
``file:line:col: message`` line with exit status 2. Anything else escaping is a bug in hlodiff.
"""

from __future__ import annotations

from dataclasses import dataclass


class HlodiffError(Exception):
    """An input problem reported to the user as one line, located where possible."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, col: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col

    def location(self) -> str:
        """``path:line:col`` with the parts that are known."""
        parts = [self.path or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        return ":".join(parts)

    def __str__(self) -> str:
        return f"{self.location()}: {self.message}"


class HloParseError(HlodiffError):
    """The HLO text does not follow the grammar."""


@dataclass(frozen=True)
class InputWarning:
    """Data that could not be read but did not stop the run (e.g. a graph cut off mid-write)."""

    message: str
    path: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: warning: {self.message}"
