"""Which recompilation heads the run's report: the leading one (:func:`hlodiff.explain.patterns.leading`, the
family's most common first cause) of the first family that needs attention, an expected story never before an
unexpected one, and never JAX's eager ops. A run-level decision over the families' patterns, kept apart from how
each family's shape is named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hlodiff.explain.patterns import Pattern, leading

if TYPE_CHECKING:
    from hlodiff.explain.families import Family


def headline_of(families: list["Family"], patterns: list[Pattern], recompilations):
    """The recompilation that heads the run's report: the leading one of the first family whose pattern needs
    attention (not steady, warm-up or setup) and whose root is not called expected by its fix, one that never
    settles first, else of the first family that recompiled at all. An expected story (warm-up, buckets, train/eval) never heads the report while an
    unexpected one waits further down (issue 30: an expected warm-up headed a real int32/int64 flip). JAX's eager
    ops never head it: they are not the user's step, and a run whose step compiled once has no headline."""
    from hlodiff.diff.fix_rules import EXPECTED
    from hlodiff.explain.headline_also import lead_root

    def expected(r) -> bool:
        return bool(r.causes) and r.causes[0].fix_rule in EXPECTED

    found = []
    for family, pattern in zip(families, patterns):
        if pattern.name == "eager op":  # JAX's eager ops are not the user's step (as on main since 2b02d69)
            continue
        r = lead_root(leading(family, recompilations), recompilations)
        if r is None:
            continue
        if expected(r):  # an expected story never hides an unexpected one of its own family
            r = next((o for o in recompilations if o.family is family and o.causes and not expected(o)), r)
        found.append(((pattern.benign or expected(r), not _never_settles(pattern)), r))
    ordered = sorted(found, key=lambda br: br[0])  # stable: run order among equals
    return ordered[0][1] if ordered else None


def _never_settles(pattern: Pattern) -> bool:
    """A family that compiled a new graph every time (``unbounded``) heads before one that needs attention but
    settled into cached variants: it keeps costing a compilation per call for as long as the run lasts (round 31,
    r31_tx_loader_switch: epoch 0's log read, two cached variants, headed before epoch 1's graphs that grew with
    every read)."""
    return pattern.name == "unbounded"
