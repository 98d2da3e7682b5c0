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


ROOT_LEADS = (
    # (the root that leads: its fix rows, the root it leads over: (kind, reason)); why
    # review 23 F2 (t2's MoE): `capacity = int(counts.max().item())` sizes the buffers the per-expert nonzero then
    # fills; the mask's fix leaves the read and the step still compiles anew, the read's fix (a static capacity)
    # fixes the size the mask fills
    (SIZE_READ_ROWS, ("partial", "data_dependent")),
)
"""Two roots of one family where the first sets the size the second then fills: the first leads the report."""


def _is(c, kind_reason) -> bool:
    return (c.kind, c.reason) == kind_reason


def lead_root(r, recompilations):
    """The recompilation that heads ``r``'s family: ``r``, unless a ``ROOT_LEADS`` row names another root of the
    same family that sets the size ``r``'s root fills; then the first recompilation of that root."""
    if r is None or not r.causes:
        return r
    for rows, over in ROOT_LEADS:
        if not _is(r.causes[0], over):
            continue
        lead = next((o for o in recompilations or () if o.family is r.family and o.causes
                     and o.causes[0].fix_rule in rows and o.causes[0].fix), None)
        if lead is not None:
            return lead
    return r


def also_roots(r, recompilations) -> list:
    """Review 23, F2: two roots of one family, one of which sets the size the other fills (``ROOT_LEADS``): the one
    that does not head is told in the headline's block with its own fix, once per line, so one round of fixes
    suffices (the mask's fix leaves the capacity read; the capacity's fix leaves the per-expert nonzero)."""
    if r is None or not r.causes:
        return []
    wanted = []
    for rows, over in ROOT_LEADS:
        if r.causes[0].fix_rule in rows:
            wanted.append(lambda c, over=over: _is(c, over))
        elif _is(r.causes[0], over):
            wanted.append(lambda c, rows=rows: c.fix_rule in rows)
    if not wanted:
        return []
    found, seen = [], {_where(r.causes[0])}
    for other in recompilations or ():
        if other is r or not other.causes:
            continue
        c = other.causes[0]
        if c.fix and _where(c) not in seen and any(w(c) for w in wanted):
            seen.add(_where(c))
            found.append(c)
    return found


def _where(c):
    return (c.locations[0].file, c.locations[0].line) if c.locations else None

