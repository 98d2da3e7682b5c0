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
