"""Cycles in a family's sequence of graphs (its cache keys in run order): the period it settles into, where, and
whether a cycle seen is one a step schedule makes. :mod:`hlodiff.explain.patterns` names the shapes from them.
"""

from __future__ import annotations


MAX_PERIOD = 8
"""Longest period named as such: a handful of variants that recur. Longer cycles are described as recurring."""


def schedule_like(tail: list[str], period: int) -> bool:
    """A cycle a step schedule makes: some graph of it runs once a round (every Nth step an EMA or an optimizer
    step, tasks visited round-robin, two graphs alternating). Review 11 (F3, tx_sched_sampling): a coin flip per
    step gave A,B,B,A,A,A,B,B,A,A, a round of 5 seen twice by chance with no graph once a round, and was told as "a
    Python `if` on the step count, every 5 steps": a round with no such graph is periodic only when seen three
    times."""
    round_ = tail[:period]
    return any(round_.count(k) == 1 for k in round_)


def wraps(tail: list[str], period: int) -> bool:
    """A cycle seen once in full and begun again (A,B,C,A,B; a queue pointer that wraps every 8 steps): each graph
    of the cycle distinct, and at least two of them already came back in the same order."""
    return period >= 3 and len(tail) >= period + 2 and len(set(tail[:period])) == period


def period_of(keys: list[str]) -> tuple[int | None, int]:
    """The smallest period (2..MAX_PERIOD) the sequence settles into after at most two warm-up graphs, and where
    it starts; a period must hold at least two distinct graphs. Periods longer than half the sequence are tried
    too (a cycle seen once and begun again): :func:`hlodiff.explain.patterns.pattern_of` decides whether enough of it was seen."""
    n = len(keys)
    for offset in range(0, min(3, n)):
        tail = keys[offset:]
        for p in range(2, min(MAX_PERIOD, max(len(tail) // 2, len(tail) - 2)) + 1):
            if len(set(tail[:p])) >= 2 and all(tail[i] == tail[i + p] for i in range(len(tail) - p)):
                if len(tail) < 2 * p and not wraps(tail, p):
                    # seen less than twice and no cycle begun again: no evidence of a period, and it must not hide
                    # a shorter one after a warm-up graph (review 8, T2: A,A,A,B,A,A,B,A,A matched 7 at offset 0
                    # before 3 at offset 1)
                    continue
                return p, offset
    period, offset = _period_after_first_cycle(keys)
    return (period, offset) if period is not None else _period_after_first_graph(keys)


def _period_after_first_cycle(keys: list[str]) -> tuple[int | None, int]:
    """A cycle whose first round holds graphs that never come back (A,B,B,C, then A,B,B,D for good: gradient
    accumulation whose first optimizer step also creates the momentum buffers): periodic from the end of the first
    round on, seen twice in full after it, and every graph of the first round that differs from the next round's
    ran only that once (a warm-up variant, not a graph that recurs out of turn). Returns (period, where it
    settles), or (None, 0)."""
    n = len(keys)
    for p in range(2, MAX_PERIOD + 1):
        if n - p < 2 * p:
            break
        tail = keys[p:]
        if len(set(tail[:p])) < 2 or any(tail[i] != tail[i + p] for i in range(len(tail) - p)):
            continue
        differ = [i for i in range(p) if keys[i] != keys[i + p]]
        if differ and all(keys.count(keys[i]) == 1 for i in differ):
            return p, differ[-1] + 1
    return None, 0


def _period_after_first_graph(keys: list[str]) -> tuple[int | None, int]:
    """A first graph of its own, then a cycle from the first round on (review 18, F5: A,B,C,B,B,C is a first step
    that warms up, an optimizer creating its state, inside the round B,B,C of an epoch whose last batch is short).
    Seen with that first graph counted as the round's graph in its place, the cycle must come round twice in full,
    its round must hold a graph run once a round (:func:`schedule_like`), and the first graph must never come back.
    Periods of 3 or more only: A,B,C,B (round 8's dyn_maml_param_type, the bridge's graphs) is too little to call
    alternating, and a longer alternation after a warm-up graph is found at offset 1 already.
    Returns (period, 0): the cycle is counted from the first step, whose round it is. Else (None, 0)."""
    n = len(keys)
    if n < 4 or keys.count(keys[0]) != 1:
        return None, 0
    for p in range(3, MAX_PERIOD + 1):  # A,B,C,B is no alternation after one graph: too little seen (dyn_maml)
        if n < 2 * p:
            break
        filled = [keys[p], *keys[1:]]
        if (len(set(filled[:p])) >= 2 and schedule_like(filled, p)
                and all(filled[i] == filled[i + p] for i in range(n - p))):
            return p, 0
    return None, 0
