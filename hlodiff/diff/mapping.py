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
    """Left name -> right name and back, with the matcher that made each pair (:attr:`how`: exact, top_down, ...).
    An instruction is paired at most once: :meth:`add` refuses a second partner."""

    left: CanonicalComputation
    right: CanonicalComputation
    l2r: dict[str, str] = field(default_factory=dict)
    r2l: dict[str, str] = field(default_factory=dict)
    left_module: CanonicalModule | None = None  # for fusion bodies; optional
    right_module: CanonicalModule | None = None
    settled: set[str] = field(default_factory=set)
    """Left instructions whose every operand position is decided (paired, or its right operand taken): pairs are
    never undone while the matchers run, so the top-down matcher need not look at them again."""
    _pairs: object | None = None
    """The accelerator's mirror of the pairs as positions of both graph indexes (pairs.c), which the matchers' walks
    read instead of probing l2r and r2l: made by :meth:`positions`, told of every pair :meth:`add` makes, forgotten
    by :meth:`drop`; ``False`` once it cannot be kept (the name-keyed walks then run)."""
    _made: list[tuple[int, str]] = field(default_factory=list)
    """Which matcher made the pairs, as runs over l2r's order: (where in it a run starts, the matcher). A matcher
    makes its pairs one after another, so a few runs stand for every pair; a map from each left name to its matcher
    was a dict as large as l2r (217K entries, 7.6 MB, at 300K instructions) that only tests and :meth:`drop` read."""

    def made(self, how: str) -> None:
        """The pairs made from now on are ``how``'s (until another matcher's): called before each walk of the
        accelerator's, which writes l2r and r2l only."""
        if not self._made or self._made[-1][1] != how:
            self._made.append((len(self.l2r), how))

    @property
    def how(self) -> dict[str, str]:
        """Left name -> the matcher that paired it, in l2r's order (made when asked)."""
        names, out = list(self.l2r), {}
        ends = [start for start, _ in self._made[1:]] + [len(names)]
        for (start, how), end in zip(self._made, ends):
            out.update(dict.fromkeys(names[start:end], how))
        return out

    def add(self, left: str, right: str, how: str) -> bool:
        if left in self.l2r or right in self.r2l:
            return False
        self.made(how)
        self.l2r[left] = right
        self.r2l[right] = left
        if self._pairs and not native.pairs_add(self._pairs, left, right):
            self._pairs = False
        return True

    def positions(self):
        """The mirror of the pairs as positions, made on first use when both computations have a graph index
        (the accelerator, and computations of 16 instructions or more); None otherwise."""
        if self._pairs is None:
            lix = graph_index(self.left) if native is not None else None
            rix = graph_index(self.right) if lix is not None else None
            self._pairs = rix is not None and native.pairs_new(lix, rix, self.l2r, self.r2l) or False
        return self._pairs or None

    def mirror(self):
        """The mirror of the pairs as positions if the matchers made one and it still holds (:meth:`positions`),
        else None: for the readers after matching, which do not make one."""
        return self._pairs or None

    def drop(self, left: str) -> None:
        """Undo ``left``'s pair (both directions, how it was made, its settled mark): only
        :func:`hlodiff.diff.matchers.unbake_moved_inputs` does, after every matcher ran."""
        at = list(self.l2r).index(left)  # the runs after it start one place earlier in l2r's order
        self._made = [(start - (start > at), how) for start, how in self._made]
        right = self.l2r.pop(left)
        del self.r2l[right]
        self.settled.discard(left)
        self._pairs = False  # the mirror does not undo pairs; nothing matches after the one drop does
