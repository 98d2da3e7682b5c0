"""Live, the graphs an early read cut short (the mask's count, an ``.item()``): as in the report at exit, such a
graph belongs to the family of the graph that ends its step (the sync's), known only when that graph comes. So a
cut graph is held until then, and the graph that ends its step keeps the one just before it, to be explained
beside it (review F1). :class:`hlodiff.explain.live.LiveExplainer` places what this releases.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.live_families import Held

HELD_CUTS = 4
"""Cut graphs held at most while waiting for the graph that ends their step: a step with more early reads, or a run
whose steps all end in a read (`print(loss.item())`, no sync) with a new graph each time, is told at most this
many graphs late (a run of such steps that repeats a graph is told one step late: the same graph held twice)."""


class HeldCuts:
    """The cut graphs waiting for the graph that ends their step, and which graph each step's cut preceded."""

    def __init__(self) -> None:
        self.before: dict[str, GraphRecord] = {}
        """A record's ref -> the graph an early read cut short just before it: explained beside it, so the live line
        sees the cut as the report at exit does (review F1). Kept while the record is in its family's windows
        (:meth:`forget`): bounded by the windows, not by the run's length."""
        self._last: GraphRecord | None = None
        self.waiting: list[Held] = []
        """Cut graphs waiting for the graph that ends their step, whose family they join (as in the report)."""
        self.ending: GraphRecord | None = None
        """While held cuts are placed in the family of a cache hit that ended their step: that graph. The window
        that explains a cut then holds the step it cut short, as the report at exit does; without it a cut whose
        step's graph was already compiled (a read every 4th step, the rest of the step the usual graph) was read as
        the first graph of a family of its own, and never told (crossings round 11). Only for a family none of whose
        graphs followed a cut yet: where every step is cut (best_loss_min), the cuts are compared with each other
        as before, and a later cut's small difference (f64 -> f32 of the value compared) is not told on its own."""

    def read(self, record: GraphRecord, cut: bool, bridge: bool = False) -> None:
        """A graph was read, cut short or not: one not cut is the graph the cut just before it preceded. A graph of
        torch_xla's Dynamo bridge between the cut and the step's sync (a read inside a compiled call's forward, then
        the bridge's backward: save_on_cpu's pack hook, Dynamo round 24) ends nothing: the sync after it is the
        graph the cut preceded, as in the report at exit."""
        if bridge and not cut:
            return
        if self._last is not None and not cut:
            self.before[record.ref] = self._last
        self._last = record if cut else None

    def forget(self, record: GraphRecord) -> None:
        """The record left its family's windows: the cut before it is never explained beside it again."""
        self.before.pop(record.ref, None)

    def hold(self, held: Held) -> list[Held]:
        """Hold a cut graph; returned, the held ones to place in families of their own first. The same graph already
        held (or more than :data:`HELD_CUTS` of them) means no sync ended their step: the earlier ones keep families
        of their own, as the report gives them when no graph that ends a step follows."""
        again = held.key is not None and any(h.key == held.key for h in self.waiting)
        out = self.release(held.key if again else None) if again or len(self.waiting) >= HELD_CUTS else []
        self.waiting.append(held)
        return out

    def release(self, upto: str | None = None, every: bool = False) -> list[Held]:
        """The held graphs no graph that ends their step came for, oldest first: ``every`` one (at the end), those
        up to and including the first of cache key ``upto``, or else the oldest ones past :data:`HELD_CUTS`."""
        out: list[Held] = []
        while self.waiting:
            waiting = self.waiting.pop(0)
            out.append(waiting)
            if not every and (waiting.key == upto if upto is not None else len(self.waiting) < HELD_CUTS):
                break
        return out

    def ended(self) -> list[Held]:
        """The graph that ends their step came: every held graph, to join its family."""
        out, self.waiting = self.waiting, []
        return out
