"""The bridge's graphs that run in every steady step of a torch.compile run read without Dynamo's log: the
compiled function's fixed set (its forward, its backward, the sync of its inputs), not a retrace however alike two
of them are (round 19's control: four bridge graphs every step, one 51% alike another, once told as "a value
computed in the graph on some steps").

The report at exit (:func:`hlodiff.explain.dynamo.bridge_without_log`) and the live story
(:mod:`hlodiff.explain.live_bridge_steps`) read the steps the same way, so a live line ends where the report does.
"""

from __future__ import annotations


def steady_steps(explanation, bridge_refs: set[str]) -> list[set[str]]:
    """Per steady step (between each two of the user's later syncs: the steps after the first two, which warm up),
    the cache keys of the bridge's graphs it ran."""
    bridge_keys = {g.cache_key for g in explanation.graphs if g.ref in bridge_refs}
    return steady_key_steps([g.cache_key for g in explanation.graphs], bridge_keys)


def steady_key_steps(keys, bridge_keys: set[str]) -> list[set[str]]:
    """:func:`steady_steps` of graphs given as their cache keys in run order (the live story holds the keys, not an
    explanation). A step ends at a graph that is not the bridge's; the graphs after the last such graph are a step
    not yet ended."""
    steps, current = [], set()
    for key in keys:
        if key in bridge_keys:
            current.add(key)
        elif current:  # two of the user's syncs in a row (loss.item(), then acc.item()) end no step of the bridge's
            steps.append(current)
            current = set()
    return steps[2:]


def run_every_step(explanation, bridge_refs: set[str]) -> set[str]:
    """Cache keys of the bridge's graphs that run in every steady step. A retrace replaces its graph on later calls;
    graphs that all run in every step are the compiled function's fixed set. Empty with fewer than two steady
    steps: the steps cannot tell yet."""
    return in_every(steady_steps(explanation, bridge_refs))


def in_every(steady: list[set[str]]) -> set[str]:
    """The cache keys every one of the ``steady`` steps ran; empty with fewer than two (they cannot tell yet)."""
    if len(steady) < 2:
        return set()
    return set.intersection(*steady)


def fixed_set_pairs(explanation, bridge_refs: set[str]) -> set[str]:
    """Refs of recompilations whose graph and closest earlier graph both run in every steady step: two programs of
    the compiled function's fixed set, not one program changed."""
    every = run_every_step(explanation, bridge_refs)
    return {r.graph.ref for r in explanation.recompilations
            if r.closest is not None and {r.graph.cache_key, r.closest.cache_key} <= every}
