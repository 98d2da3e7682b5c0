"""The units every cost record is told in: a count of buffers and their bytes (:class:`Tally`), a figure the
capture cannot give and why (:class:`Unknown`, reported as ``null``, never a guess), and a source frame's JSON.

Beneath both :mod:`hlodiff.cost.model` (one graph's cost, the run's) and :mod:`hlodiff.cost.crossings` (what
crosses between graphs), which use them alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.hlo.model import SourceFrame


def frame_json(frame: SourceFrame | None) -> dict | None:
    return None if frame is None else frame.to_json()

@dataclass(frozen=True, slots=True)
class Tally:
    """A count of buffers and their bytes."""

    count: int
    bytes: int

    def to_json(self) -> dict:
        return {"count": self.count, "bytes": self.bytes}


@dataclass(frozen=True, slots=True)
class Unknown:
    """A figure that what was captured cannot give (reported as ``None``, never as a smaller number), why, and the
    capture that would give it."""

    figure: str
    reason: str
    capture: str

    def to_json(self) -> dict:
        return {"figure": self.figure, "reason": self.reason, "capture": self.capture}
