"""What the live story keeps of each family while the run goes on: its bounded windows (the last
:data:`~hlodiff.explain.candidates.POOL` compilations, the last :data:`RECENT` executions), its newest
recompilation and what was told of it, the recompilations whose fix waits, and the stories told so far.

:class:`hlodiff.explain.live.LiveExplainer` decides when to place, tell and look again; these records are its
memory, kept apart so the bounds (what a window holds, how long a fix is put off) read in one place.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.candidates import POOL
from hlodiff.explain.live_events import Told

RECENT = 32
"""Executions of a family kept for its patterns (alternation, buckets that recur, a batch that stayed short)."""

SETTLED = 8
"""Cache hits after a family's newest recompilation that settle a fix waiting for the next steps: it did not come
back, and the fallback is what the steps show (told then, not only at the end of a long run)."""

DEFERRED = 4
"""Recompilations of a family whose waiting fix is put off at most while it compiles again (the oldest is then told
with what is known)."""

@dataclass(slots=True)
class LiveFamily:
    """One family as the live story knows it: its bounded windows, its newest recompilation and what was told."""

    key: str
    label: str
    compiled: deque = field(default_factory=lambda: deque(maxlen=POOL))
    """The records of its last POOL compilations (first occurrences of their keys)."""
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT))
    hits_since: int = 0
    next_look: int = 1
    latest: GraphRecord | None = None
    """The newest recompilation's record, looked at again as hits come in."""
    latest_step: int = 0
    told: Told | None = None
    story: int | None = None
    expected: bool = False
    follows: bool = False
    """Its newest recompilation follows from what Dynamo did (counted; Dynamo's line tells why)."""
    pending: bool = False
    steps: int = 0
    full: int = 0
    """Its graphs that end a step (a cut graph is part of the step the next of them ends)."""
    deferred: list = field(default_factory=list)
    """Earlier recompilations whose fix waits (:class:`Latest`), put off while the family compiles again."""
    counted: bool = False
    """Its newest recompilation was counted with the JAX ops run outside jit, never told: a later word that still
    calls it expected is not told either (review 12 F8b: eager ops are counted, not told one by one)."""

    def keep(self, window: deque, record: GraphRecord) -> GraphRecord | None:
        """``record`` appended to one of its windows (``recent`` or ``compiled``); returned, the record that fell out
        of it if it is in neither window now: nothing of this family's is explained beside it any more."""
        gone = window[0] if window.maxlen is not None and len(window) == window.maxlen else None
        window.append(record)
        if gone is None or any(r is gone for r in self.recent) or any(r is gone for r in self.compiled):
            return None
        return gone


@dataclass(slots=True)
class Latest:
    """What a family says of its newest recompilation (its state while another one is looked at)."""

    record: GraphRecord | None
    step: int
    told: Told | None
    story: int | None
    expected: bool
    follows: bool
    pending: bool

    @classmethod
    def of(cls, f: LiveFamily) -> "Latest":
        return cls(f.latest, f.latest_step, f.told, f.story, f.expected, f.follows, f.pending)

    def put(self, f: LiveFamily) -> None:
        f.latest, f.latest_step, f.told, f.story = self.record, self.step, self.told, self.story
        f.expected, f.follows, f.pending = self.expected, self.follows, self.pending


@dataclass(slots=True)
class Held:
    """A graph read and summarized, placed in its family now or, cut short by an early read, once the graph that
    ends its step comes (:meth:`hlodiff.explain.live.LiveExplainer._one`)."""

    record: GraphRecord
    summary: object
    hit: bool
    cut: bool
    step: int
    graphs: int
    key: str | None = None
    """Its cache key (a graph held twice: a new step began without a sync)."""


@dataclass(slots=True)
class Story:
    """A story told in full once (its number, first step, words) and counted each time it comes again."""

    number: int
    first_step: int
    count: int = 1
    told: Told | None = None
    kinds: dict[str, str] = field(default_factory=dict)
    """Each member's root kind (graph ref -> kind), in the order told: the most common kind leads, as at exit."""
    firsts: dict[str, tuple[str, Told]] = field(default_factory=dict)
    """Per kind, its first member (ref) and that member's newest own words: the lead when its kind is the most
    common one (:func:`hlodiff.explain.stories._story`: the first seen on a tie)."""
