"""The causes a graph's outputs give: outputs added or removed (a metric computed on some steps only), the same
outputs in another order, and the output mapping that pairs the rest.

Apart from :mod:`hlodiff.diff.causes` (the origins of change inside computations) because it asks a different
question of the matching, about the entry's root rather than its instructions: which outputs pair up, which one is
another computed a step further (``x`` became ``x + 1``), and what work exists only to compute an added one.
"""

from __future__ import annotations

from collections import defaultdict

from hlodiff.diff.classify import ComputationDiff
from hlodiff.diff.longest_increasing import longest_increasing
from hlodiff.diff.model import Cause
from hlodiff.diff.summaries import callers, key_sort, locations

Key = tuple[str | None, str | None]


def outputs_causes(cd: ComputationDiff) -> tuple[list[Cause], list[tuple[int, int]], set[Key]]:
    """The entry's outputs compared: a cause for outputs added or removed (with the work that computes only
    them), one for outputs kept but in another order, the output mapping (left index, right index), and the
    instructions those causes explain (the root tuple, the added or removed work), which no region claims again."""
    m = cd.matching
    louts, routs = cd.left.outputs(), cd.right.outputs()
    rpos: dict[str, list[int]] = defaultdict(list)
    for j, name in enumerate(routs):
        rpos[name].append(j)
    mapping: list[tuple[int, int]] = []
    removed: list[int] = []
    for i, name in enumerate(louts):
        partner = m.l2r.get(name)
        if partner is not None and rpos.get(partner):
            mapping.append((i, rpos[partner].pop(0)))
        else:
            removed.append(i)
    paired_right = {j for _, j in mapping}
    added = [j for j in range(len(routs)) if j not in paired_right]
    for i, j in _extended_outputs(cd, louts, routs, removed, added):
        mapping.append((i, j))  # the same output with instructions added or removed on its path: ops, not outputs
        removed.remove(i)
        added.remove(j)
    mapping.sort()
    causes: list[Cause] = []
    absorbed: set[Key] = set()
    if cd.left.insts[cd.left.root].opcode == "tuple" and cd.right.insts[cd.right.root].opcode == "tuple":
        absorbed.add((cd.left.root, m.l2r.get(cd.left.root)))  # the output list itself: explained by the outputs
    if added or removed:
        cone_l = _exclusive_cone(cd.left, [louts[i] for i in removed], m.l2r)
        cone_r = _exclusive_cone(cd.right, [routs[j] for j in added], m.r2l)
        absorbed |= {(n, None) for n in cone_l} | {(None, n) for n in cone_r}
        causes.append(_outputs_cause(cd, [louts[i] for i in removed], [routs[j] for j in added], cone_l, cone_r,
                                     removed, added))
    moved = _moved_outputs(mapping)
    if moved:
        causes.append(Cause(
            "reordered",
            f"same computation, outputs in another order: {len(moved)} of {len(mapping)} moved (the rest keep "
            "their order): "
            + ", ".join(f"{i}->{j}" for i, j in moved[:8]) + (" ..." if len(moved) > 8 else ""),
            instructions=[(louts[i], routs[j]) for i, j in moved]))
    return causes, mapping, absorbed


def _extended_outputs(cd: ComputationDiff, louts: list[str], routs: list[str], removed: list[int],
                      added: list[int]) -> list[tuple[int, int]]:
    """Pairs (removed i, added j) where one output is computed from the other's value: ``x`` became ``x + 1``
    (or the reverse). Output positions are tried nearest first."""
    m = cd.matching
    pairs: list[tuple[int, int]] = []
    free = list(added)
    for i in removed:
        for j in sorted(free, key=lambda j: abs(j - i)):
            lp, rp = m.l2r.get(louts[i]), m.r2l.get(routs[j])
            if (lp is not None and _depends_on(cd.right, routs[j], lp)) or \
                    (rp is not None and _depends_on(cd.left, louts[i], rp)):
                pairs.append((i, j))
                free.remove(j)
                break
    return pairs


def _depends_on(cc, start: str, target: str, limit: int = 10_000) -> bool:
    """Whether ``start`` is computed from ``target`` (bounded walk over operands)."""
    return computed_from(cc, [start], {target}, limit)


def computed_from(cc, starts, targets: set[str], limit: int = 10_000) -> bool:
    """Whether one of ``starts`` is computed from one of ``targets``: a walk over operands, bounded to ``limit``
    instructions (a 35K-instruction graph must not be walked whole for one question)."""
    stack, seen = list(starts), set()
    while stack and len(seen) < limit:
        node = stack.pop()
        if node in targets:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(cc.operands.get(node, ()))
    return False


def _exclusive_cone(cc, outputs: list[str], partner: dict[str, str]) -> set[str]:
    """Unmatched instructions that exist only to compute ``outputs``: the work that came or went with them.

    Walks down from the outputs through unmatched operands, keeping an instruction once every one of its users
    is already in the cone (or is the root tuple).
    """
    cone: set[str] = {o for o in outputs if o not in partner}
    stack = [op for o in cone for op in cc.operands[o]]
    while stack:
        name = stack.pop()
        if name in cone or name in partner:
            continue
        users = cc.users(name)
        if users and all(u in cone or u == cc.root for u in users):
            cone.add(name)
            stack.extend(cc.operands[name])
    return cone


def _moved_outputs(mapping: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pairs outside the longest run kept in order (what a user would call "moved")."""
    if not mapping:
        return []
    js = [j for _, j in mapping]
    keep = set(longest_increasing(js))
    return [pair for k, pair in enumerate(mapping) if k not in keep]


def _outputs_cause(cd, louts, routs, cone_l, cone_r, removed, added) -> Cause:
    parts = []
    if added:
        shapes = ", ".join(str(cd.right.insts[n].shape) for n in routs[:4]) + (" ..." if len(routs) > 4 else "")
        parts.append(f"{len(added)} output{'s' if len(added) != 1 else ''} added ({shapes})")
    if removed:
        shapes = ", ".join(str(cd.left.insts[n].shape) for n in louts[:4]) + (" ..." if len(louts) > 4 else "")
        parts.append(f"{len(removed)} output{'s' if len(removed) != 1 else ''} removed ({shapes})")
    work = len(cone_l) + len(cone_r)
    summary = "; ".join(parts)
    if work:
        summary += f", with {work} instruction{'s' if work != 1 else ''} computing only them"
    # The output producers say where the values come from, whether or not they exist on the other side too.
    stacks = [cd.rcm.frames(cd.right.insts[n]) for n in routs] + [cd.lcm.frames(cd.left.insts[n]) for n in louts]
    if not any(stacks):
        stacks = [cd.rcm.frames(cd.right.insts[n]) for n in sorted(cone_r)]
        stacks += [cd.lcm.frames(cd.left.insts[n]) for n in sorted(cone_l)]
    pairs = [(n, None) for n in louts] + [(None, n) for n in routs]
    user, library = locations(stacks)
    return Cause("outputs", summary, user, sorted(set(pairs), key=key_sort), library, callers=callers(stacks),
                 added=bool(added), removed=bool(removed),
                 own_work=work, scalar_outputs=all(str(side.insts[n].shape).split("{", 1)[0].endswith("[]")
                                                   for side, names in ((cd.left, louts), (cd.right, routs))
                                                   for n in names))
