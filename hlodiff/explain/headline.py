"""Which recompilation heads the run's report, and which one tells a family's cause.

A family's leading recompilation is the one of its most common first cause (``shape`` told where a size keeps
changing); the run's headline is the leading one of the first family that needs attention, an expected story
never before an unexpected one. :mod:`hlodiff.explain.patterns` names a family's shape from the same leading cause.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hlodiff.explain.families import Family
    from hlodiff.explain.patterns import Pattern


def leading(family: "Family", recompilations):
    """The recompilation whose first cause is the family's most common leading cause (the first such one).

    Most common, not first: a tensor that grows every step differs in structure from step 0 to 1 (torch_xla
    lowers a one-element tensor its own way) and in shape from then on; the user wants to hear "shape".
    """
    from hlodiff.diff.fix_rules import EXPECTED

    mine = [r for r in recompilations if r.family is family and r.causes]
    if not mine:
        return None
    # an expected warm-up never names the family's cause while a change its fix does not excuse is there (review
    # 2, F2: AdamW's warm-up at step 1 named 'inputs at :17' for a weight-decay change at step 4)
    mine = [r for r in mine if r.causes[0].fix_rule not in EXPECTED] or mine
    kinds = [r.causes[0].kind for r in mine]
    kind = max(set(kinds), key=lambda k: (kinds.count(k), -kinds.index(k)))
    # of that kind, the first at the most common root line: a queue that grows from its second step on is told at
    # the line that grows it, not at the reader its first step changed (review 2, F11)
    of_kind = [r for r in mine if r.causes[0].kind == kind]
    if kind != "shape":  # a size is told where it keeps changing; other kinds at their first recompilation
        return of_kind[0]
    lines = [(r.causes[0].locations[0].file, r.causes[0].locations[0].line) if r.causes[0].locations else None
             for r in of_kind]
    line = max(set(lines), key=lambda x: (lines.count(x), -lines.index(x)))
    return of_kind[lines.index(line)]


def headline_of(families: list["Family"], patterns: list[Pattern], recompilations):
    """The recompilation that heads the run's report: the leading one of the first family whose pattern needs
    attention (not steady, warm-up or setup) and whose root is not called expected by its fix, else of the first
    family that recompiled at all. An expected story (warm-up, buckets, train/eval) never heads the report while an
    unexpected one waits further down (issue 30: an expected warm-up headed a real int32/int64 flip). JAX's eager
    ops never head it: they are not the user's step, and a run whose step compiled once has no headline."""
    from hlodiff.diff.fix_rules import EXPECTED

    def expected(r) -> bool:
        return bool(r.causes) and r.causes[0].fix_rule in EXPECTED

    found = []
    for family, pattern in zip(families, patterns):
        if pattern.name == "eager op":  # JAX's eager ops are not the user's step (as on main since 2b02d69)
            continue
        r = leading(family, recompilations)
        if r is None:
            continue
        if expected(r):  # an expected story never hides an unexpected one of its own family
            r = next((o for o in recompilations if o.family is family and o.causes and not expected(o)), r)
        found.append((pattern.benign or expected(r), r))
    ordered = sorted(found, key=lambda br: br[0])  # stable: run order among equals
    return ordered[0][1] if ordered else None
