"""Whether a run under the sync hook repeats itself: the period with which the graphs of its latest syncs repeat.

``boundaries`` (:mod:`hlodiff.capture.sync_reports`' policy under ``hlodiff record``) takes a live-tensor report at
every sync until the run is steady, then none until something compiles: what crosses between its graphs repeats.
Kept apart from the reports so that the one question, "steady yet, and with which period", is answered in one place
(the general path after a sync and the steady fast path both ask it).

Standard library only, like the hook that loads it (by path, in an interpreter where hlodiff is not installed).
"""

from __future__ import annotations

PERIOD_MAX = 64
"""``boundaries`` stops reporting once the graphs of the last P syncs (P <= this) ran, in the same order, the P
syncs before them and nothing compiled meanwhile: the run is steady and what crosses between its graphs repeats.
A compilation starts it again. Until then every graph's inputs and outputs are named (issue 32)."""
STEADY_MIN_SYNCS = 24
"""... and at least this many syncs repeat (a microbatch loop of up to 11 forward/backward pairs inside a step is
not taken for the step's period); a run whose every sync runs the same graph (one graph per step) is steady after
four."""


class SyncPeriod:
    """The latest syncs' (graph hash, compiled) and the period they repeat with: ``steady`` once they do."""

    __slots__ = ("recent", "keep", "period", "steady")

    def __init__(self) -> None:
        self.recent: list[tuple[str | None, bool]] = []  # (graph hash, compiled) of the latest syncs
        self.keep = max(2 * PERIOD_MAX, STEADY_MIN_SYNCS)  # syncs kept in ``recent``
        self.period: int | None = None  # the period the latest syncs repeat with (steady), else None
        self.steady = False

    def note(self, graph_hash: str | None, compiled: bool, ran: bool = True) -> None:
        """One sync done (its graph's hash, whether it compiled, whether it executed anything): is the run now
        repeating itself? A sync with nothing to run is no graph of the period. (Until 2026-11-26 such a sync was
        told by its hash equal to the previous one's, which also dropped a graph run twice in a row: a period
        like forward+backward, forward+backward, optimizer never looked steady for long, and was reported.)"""
        if not ran and not compiled:
            return
        recent = self.recent
        recent.append((graph_hash, compiled))
        if len(recent) > self.keep:
            del recent[0]
        period = self.period
        if period and not compiled and graph_hash is not None and len(recent) > period \
                and recent[-1 - period][0] == graph_hash:
            return  # still the period found: one comparison per steady sync, not a search over every period
        self.period = _period(recent)
        self.steady = self.period is not None


def _period(recent: list[tuple[str | None, bool]]) -> int | None:
    """The smallest period P with which the latest syncs repeat, or None: the last ``max(2P, STEADY_MIN_SYNCS)``
    syncs ran graphs that repeat with a period P, none compiled, and their hashes are known. The floor keeps a
    microbatch loop inside one step (forward, backward, forward, backward...) from passing for a steady run before
    its step's optimizer graph has been seen. Once found, each later sync only has to equal the one P syncs before
    it (:meth:`SyncPeriod.note`)."""
    for period in range(1, PERIOD_MAX + 1):
        size = 4 if period == 1 else max(2 * period, STEADY_MIN_SYNCS)  # one graph per step: nothing in between
        if len(recent) < size:
            return None
        window = recent[-size:]
        if any(compiled or h is None for h, compiled in window):
            return None  # inside every longer window too
        if all(window[i][0] == window[i + period][0] for i in range(size - period)):
            return period
    return None
