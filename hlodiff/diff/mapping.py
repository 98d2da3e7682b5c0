"""The pairs two computations' instructions form, as the matchers build them (hlo_diff's mappings).

A module of its own so that the matchers (:mod:`hlodiff.diff.matchers`), the questions they ask about candidates
(:mod:`hlodiff.diff.similarity`) and the classification (:mod:`hlodiff.diff.classify`) all depend on it and not
on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.accel import native
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, graph_index


@dataclass(slots=True)
class Matching:
    """Left name -> right name and back, with the matcher that made each pair (``how``: exact, top_down, ...).
    An instruction is paired at most once: :meth:`add` refuses a second partner."""

    left: CanonicalComputation
    right: CanonicalComputation
    l2r: dict[str, str] = field(default_factory=dict)
    r2l: dict[str, str] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    left_module: CanonicalModule | None = None  # for fusion bodies; optional
    right_module: CanonicalModule | None = None
    settled: set[str] = field(default_factory=set)
    """Left instructions whose every operand position is decided (paired, or its right operand taken): pairs are
    never undone while the matchers run, so the top-down matcher need not look at them again."""
    _pairs: object | None = None
    """The accelerator's mirror of the pairs as positions of both graph indexes (pairs.c), which the matchers' walks
    read instead of probing l2r and r2l: made by :meth:`positions`, told of every pair :meth:`add` makes, forgotten
    by :meth:`drop`; ``False`` once it cannot be kept (the name-keyed walks then run)."""

    def add(self, left: str, right: str, how: str) -> bool:
        if left in self.l2r or right in self.r2l:
            return False
        self.l2r[left] = right
        self.r2l[right] = left
        self.how[left] = how
        if self._pairs and not native.pairs_add(self._pairs, left, right):
            self._pairs = False
        return True

    def positions(self):
        """The mirror of the pairs as positions, made on first use when both computations have a graph index
        (the accelerator, and computations of 16 instructions or more); None otherwise."""
        if self._pairs is None:
            lix = graph_index(self.left) if native is not None else None
            rix = graph_index(self.right) if lix is not None else None
            self._pairs = rix is not None and native.pairs_new(lix, rix, self.l2r, self.r2l, self.how) or False
        return self._pairs or None

    def mirror(self):
        """The mirror of the pairs as positions if the matchers made one and it still holds (:meth:`positions`),
        else None: for the readers after matching, which do not make one."""
        return self._pairs or None

    def drop(self, left: str) -> None:
        """Undo ``left``'s pair (both directions, how it was made, its settled mark): only
        :func:`hlodiff.diff.matchers.unbake_moved_inputs` does, after every matcher ran."""
        right = self.l2r.pop(left)
        del self.r2l[right]
        self.how.pop(left, None)
        self.settled.discard(left)
        self._pairs = False  # the mirror does not undo pairs; nothing matches after the one drop does
