"""The order of a family's whole graphs (those no early read cut), read for the fix rules: where a recompilation
sits in it (the family's first recompilation, the last graph of each round of a cycle, a graph that stays or
settles a warm-up, the graph compared with coming back) and what the order shows (no graph running again once a
later one ran, each held for several steps: a schedule, a block of ops added at each stage).

Facts of :class:`~hlodiff.explain.families.Family` members, no fix's words; :mod:`hlodiff.explain.fix_context`
puts them into the :class:`~hlodiff.diff.fixes.FixContext`.
"""

from __future__ import annotations

from hlodiff.explain.buckets import closes_each_round
from hlodiff.explain.families import is_partial


def family_runs(recompilations) -> dict[int, tuple[list, list]]:
    """Per family (by identity): its whole graphs (not cut by an early read) and its compiled ones, found once."""
    runs: dict[int, tuple[list, list]] = {}
    for r in recompilations:
        if id(r.family) not in runs:
            runs[id(r.family)] = ([g for g in r.family.members if not is_partial(g)], r.family.compiled)
    return runs


def first_recompilation(compiled: list, graph) -> bool:
    """The family's second compiled graph, or its second compiled whole graph when an early read cuts every step
    (A cut, B whole, then C: Adam's first step and its later steps behind a `.item()`, review 5 F6)."""
    if len(compiled) > 1 and compiled[1] is graph:
        return True
    whole = [g for g in compiled if not is_partial(g)]
    return len(whole) > 1 and len(whole) < len(compiled) and whole[1] is graph


def last_of_each_round(members: list, graph, period: int) -> bool:
    """The family runs two graphs, ``graph`` exactly at the end of every full round of ``period`` graphs and
    nowhere else (A,A,A,B,A,A,A,B, a run cut mid-round included): the last batch of each epoch. A first graph
    that never comes back (an optimizer's first step creating its state: W,A,B,A,A,B) stands for the graph after
    it, so the warm-up does not hide the epoch's short last batch (review 5, F1/F8)."""
    keys = [g.cache_key for g in members]
    if period >= 2 and closes_each_round(keys, graph.cache_key):
        return True
    if len(keys) > 3 and keys[0] not in keys[1:] and graph.cache_key not in (keys[0], keys[1]):
        return closes_each_round([keys[1]] + keys[1:], graph.cache_key)
    return False


def comes_back(members: list, r) -> bool:
    """The graph compared with (``closest``) runs again after this graph first ran: A,B,A."""
    if r.closest is None:
        return False
    at = next((i for i, g in enumerate(members) if g.cache_key == r.graph.cache_key), None)
    return at is not None and any(g.cache_key == r.closest.cache_key for g in members[at + 1:])


def switch_stays(members: list, r) -> bool:
    """The earlier graph never runs again after this one first ran, and the family ran on after it."""
    at = next((i for i, g in enumerate(members) if g.cache_key == r.graph.cache_key), None)
    return (r.closest is not None and at is not None and at + 1 < len(members)
            and not any(g.cache_key == r.closest.cache_key for g in members[at + 1:]))


def settles_first(members: list, graph) -> bool:
    """``graph`` (the family's second compiled graph) runs again right after its first run, and no graph seen
    before it ever runs again (A,B,B,B,C,C: B settled the warm-up; a later change, C, is a story of its own, and the
    caller checks that C was compared with B: it changed B, not a new round starting over from A). Review 2, F2: a
    change at step 4 turned AdamW's warm-up at step 1 into 'sync at the same points every step'."""
    keys = [g.cache_key for g in members]
    at = keys.index(graph.cache_key) if graph.cache_key in keys else None
    if at is None or at + 1 >= len(keys) or keys[at + 1] != graph.cache_key:
        return False
    return not set(keys[:at]) & set(keys[at:])


def stays(members: list, graph) -> bool:
    """From ``graph`` on, every whole graph of the family is ``graph`` again: the earlier graph never comes back
    (warm-up). Ending on ``graph`` is not enough: a block skipped at random (A,B,A,B,B) also ends on either."""
    at = next((i for i, g in enumerate(members) if g.cache_key == graph.cache_key), None)
    return at is not None and all(g.cache_key == graph.cache_key for g in members[at:])


def never_returns(family) -> bool:
    """No whole graph of the family runs again once a later one first ran (A,A,B,B,C: yes; A,B,A,C: no)."""
    first: dict[str, int] = {}
    latest = -1
    for g in family.members:
        if is_partial(g):
            continue
        at = first.setdefault(g.cache_key, len(first))
        if at < latest:
            return False
        latest = at
    return True


def held(family) -> bool:
    """Three graphs or more, each run on two consecutive steps or more before the next took over (the last may be
    cut short by the run's end): A,A,A,B,B,B,C,C,C yes; A,B,C,D (a size that grows every step) no."""
    runs: list[list] = []
    for g in family.members:
        if is_partial(g):
            continue
        if runs and runs[-1][0] == g.cache_key:
            runs[-1][1] += 1
        else:
            runs.append([g.cache_key, 1])
    return len(runs) >= 3 and all(n >= 2 for _, n in runs[:-1])


def block_repeats(family_recompilations) -> str:
    """``45, 44``: a family whose every recompilation only adds ops (no inputs, no outputs, nothing removed), about
    the same number each time, and whose earlier graphs never come back while each graph ran more than once: a
    Python loop unrolled once more at each stage. Empty otherwise. (A layer unfrozen adds outputs; a history
    carried compiles every step; a block skipped at random comes back.)"""
    if len(family_recompilations) < 2:
        return ""
    family = family_recompilations[0].family
    members = [g for g in family.members if not is_partial(g)]
    if len(family.compiled) >= len(members) or not never_returns(family):
        return ""
    return _same_ops_added(family_recompilations)


def ops_added_each_step(family_recompilations) -> str:
    """``16, 15, 15``: every whole graph of the family compiled (each ran once) and every recompilation only adds
    about the same block of ops, no input and no output: the same code runs once more at every step (a hook
    registered inside the loop and never removed, a wrapper applied again). A carried autograd history retraces the
    earlier steps with their saved tensors, so it adds inputs too and never reads so (crossings round 7,
    x7c_tx_hook_in_loop). Empty otherwise."""
    if len(family_recompilations) < 2:
        return ""
    family = family_recompilations[0].family
    members = [g for g in family.members if not is_partial(g)]
    if len(family.compiled) < len(members):
        return ""
    return _same_ops_added(family_recompilations)


def _same_ops_added(family_recompilations) -> str:
    """The instructions each recompilation added, when each changes ops only (aliasing aside), adds four or more,
    removes next to none, and the counts stay within 20 % of each other; empty otherwise."""
    counts = []
    for r in family_recompilations:
        kinds = {c.kind for c in r.causes} - {"aliasing"}
        if kinds != {"ops"}:
            return ""
        added = sum(1 for c in r.causes for a, _ in c.instructions if a is None)
        removed = sum(1 for c in r.causes for _, b in c.instructions if b is None)
        if added < 4 or removed * 10 > added:
            return ""
        counts.append(added)
    if max(counts) > 1.2 * min(counts):
        return ""
    return ", ".join(str(n) for n in counts)
