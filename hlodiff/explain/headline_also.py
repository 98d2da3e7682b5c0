"""A second cause of the headline's recompilation that alone would compile the step again, told in the headline's
block as "also:" with its own fix, so one round of fixes suffices.

New-user review 14, F2: a static argument (``step``) headed, and ``w``'s sharding change (made by ``jnp.zeros``,
uncommitted on the first call, replicated from the second) was told only as "with it" under it. After fixing the
static argument the step still compiled twice. What a static argument or weak type changes is traced inside the
function; an argument's own placement is not (:func:`hlodiff.explain.cause_facts.own_placement`), so it is a cause
of its own. Causes that follow from the headline (a baked constant of the static value) stay "with it".
"""

from __future__ import annotations

from hlodiff.diff.fix_stance import FixStance
from hlodiff.explain.cause_facts import own_placement

KEY_ROOTS = frozenset({"static_argument", "weak_type"})
"""Headline kinds JAX keys its cache on, whose consequences are traced inside the function."""


def also_causes(r) -> list:
    """The causes of recompilation ``r`` besides its first that are an argument's own placement, with a fix of
    their own (not one that follows from the first), when the first is a static argument or weak type."""
    if r is None or not r.causes or r.causes[0].kind not in KEY_ROOTS:
        return []
    return [c for c in r.causes[1:] if own_placement(c) and c.fix and c.fix_stance is not FixStance.FOLLOWS]


SIZE_READ_ROWS = frozenset({"partial_read_sets_size_with_mask"})
"""Fix rows of an early value read that sets a size, beside a mask's early run: a root of its own."""


def also_roots(r, recompilations) -> list:
    """Review 23, F2: the headline is a boolean mask's early run (fix: apply the mask as values), and another
    recompilation of the run is cut by a value read that sets a size (an MoE's ``capacity = int(counts.max().item())``):
    that read stays after the mask fix and the step still compiles anew, so its cause is told in the headline's block
    with its own fix, once per line."""
    if r is None or not r.causes or r.causes[0].kind != "partial" or r.causes[0].reason != "data_dependent":
        return []
    found, seen = [], set()
    for other in recompilations or ():
        if other is r or not other.causes:
            continue
        c = other.causes[0]
        where = (c.locations[0].file, c.locations[0].line) if c.locations else None
        if c.fix_rule in SIZE_READ_ROWS and c.fix and where not in seen:
            seen.add(where)
            found.append(c)
    return found

