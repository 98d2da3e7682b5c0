"""A tensor the step reads that grew once and stayed larger while the data's own sizes came back: a cache
extended for the longest input seen and never shrunk (round 33: rotary cos/sin tables rebuilt for one long batch).

The evidence is the family's compiled graphs only (an XLA dump holds no cache hits): two entry parameters of other
positions vary; one size (the table's) changed once, upward, and kept its new value; another (the batch's length)
took, after that switch, a value it had already compiled with before it. That later compilation is no new bucket:
the data came back to a size already compiled, and only the grown tensor made the graph new. Without this fact the
sizes read as buckets that recur, "each compiled once" (they were not: 16 compiled twice), and nothing to fix.

Look-alikes that must not match: sizes of one input only (a batch and a length of the same ids: a 2-D bucket
plan), a size that grows every compilation (a history: ``grows``), a schedule of sizes never coming back, a
parameter rebuilt at another size (its old-size input still read: ``resized_input``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.explain.buckets import Dimension, parameter_dimensions

_POSITION = re.compile(r"of parameter (\d+) ")
_NAME = re.compile(r"of parameter \d+ (%\S+) ")


@dataclass(frozen=True, slots=True)
class StayedGrown:
    """The grown size (before, after) and the data's size that came back, as typed facts for the fix's words."""

    grown_from: int
    grown_to: int
    came_back: int
    grown_names: frozenset[str]
    """The grown parameters as the causes name them (``%cos.1``)."""

    def names_grown(self, cause) -> bool:
        """The cause is the change of a grown parameter (its summary names it), not of the data's size."""
        return any(f"parameter {name}:" in cause.summary for name in self.grown_names)


def stayed_grown(family) -> StayedGrown | None:
    """The fact for ``family`` (an explanation's Family), or None."""
    compiled = family.compiled
    modules = {g.cache_key: g._module for g in compiled if g._module is not None}
    if len(compiled) < 3 or len(modules) != len(compiled):
        return None
    order = [g.cache_key for g in compiled]
    dims = parameter_dimensions(modules)
    for grown in dims:
        switch = _switched_up_once(grown, order)
        if switch is None:
            continue
        for data in dims:
            if data is grown or _positions(data) & _positions(grown):
                continue
            before = {data.by_key[k] for k in order[:switch]}
            back = next((data.by_key[k] for k in order[switch + 1:] if data.by_key[k] in before), None)
            if back is not None:
                names = {m.group(1) for label in (grown.label, *grown.together) for m in _NAME.finditer(label)}
                return StayedGrown(grown.by_key[order[0]], grown.by_key[order[switch]], back, frozenset(names))
    return None


def _switched_up_once(dim: Dimension, order: list[str]) -> int | None:
    """Index of the one compilation where ``dim`` rose, when it rose exactly once, never fell, and at least one
    compilation followed at the new size."""
    values = [dim.by_key[k] for k in order]
    rises = [i for i in range(1, len(values)) if values[i] != values[i - 1]]
    if len(rises) != 1 or values[rises[0]] < values[rises[0] - 1] or rises[0] == len(values) - 1:
        return None
    return rises[0]


def _positions(dim: Dimension) -> set[int]:
    """Entry parameter positions the dimension sits on (its label and the labels that always agree with it)."""
    return {int(m.group(1)) for label in (dim.label, *dim.together) for m in _POSITION.finditer(label)}
