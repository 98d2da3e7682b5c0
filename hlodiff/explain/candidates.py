"""Which earlier graph a recompilation is explained against, chosen cheaply, so each is diffed in depth once.

Diffing a recompilation against every earlier graph of its family to keep the most alike costs one full match per
candidate: 19 recompilations of a 16.9K-instruction model against up to 8 candidates each took 99 s, five times
``inspect``. A graph's *signature* (the multiset of its instructions' own labels: opcode, shape, attributes, no
operands) already tells how alike two graphs are, because an edit changes the labels it touches and leaves the rest
alone; comparing two signatures is a dictionary walk, not a graph match. So candidates are ranked by signature
overlap (ties go to the most recent), and only the winner is diffed.
"""

from __future__ import annotations

from collections import Counter

POOL = 8
"""How many of the family's most recent earlier compilations are ranked (a bound, so a run of a million distinct
graphs stays linear)."""


class Candidates:
    """Signatures of a run's compiled graphs, computed once each."""

    def __init__(self) -> None:
        self._signatures: dict[int, tuple[Counter, int]] = {}

    def signature(self, summary) -> tuple[Counter, int]:
        """Label multiset of every computation of the canonical graph, and its size."""
        cm = summary._canonical
        key = id(cm)
        found = self._signatures.get(key)
        if found is None:
            counts: Counter = cm.label_counts() if cm is not None else Counter()
            found = self._signatures[key] = (counts, sum(counts.values()))
        return found

    def similarity(self, a, b) -> float:
        """Share of labels the two graphs have in common, over both sides (like the diff's ``similarity``)."""
        (ca, na), (cb, nb) = self.signature(a), self.signature(b)
        if not na and not nb:
            return 1.0
        small, large = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
        common = sum(min(n, large[label]) for label, n in small.items() if label in large)
        return 2 * common / (na + nb)

    def closest(self, graph, earlier: list) -> object:
        """The most alike of the last :data:`POOL` earlier graphs. Among equals, one run from the same line (the
        same sync or early read) first, then the nearest in size, then the most recent: two tiny graphs with every
        label changed by a new length (review 8, T1: EmbeddingBag's 4-instruction early graph at s64[2,8] and at
        s64[2,12]) share nothing, and the most recent graph of the step was another graph altogether."""
        trigger = getattr(graph, "trigger", None)
        size = self.signature(graph)[1]
        best, best_score = None, None
        for candidate in reversed(earlier[-POOL:]):
            same_line = trigger is not None and getattr(candidate, "trigger", None) == trigger
            score = (self.similarity(candidate, graph), same_line, -abs(self.signature(candidate)[1] - size))
            if best_score is None or score > best_score:
                best, best_score = candidate, score
        return best
