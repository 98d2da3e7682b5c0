"""The order a run's report tells things in: the recompilations a user has to act on first, JAX's eager
operations (``jnp.ones`` outside jit, compiled once per shape: expected, not a step) after them, and no line for a
function that compiled once and ran once (``steady: jit_convert_element_type compiled once in 1 graph`` says
nothing the counts do not).

Only order and selection for the terminal and HTML reports; the JSON keeps every pattern and recompilation in run
order.
"""

from __future__ import annotations

from hlodiff.explain.patterns import pattern_names

AFTER_THE_STORY = ("eager op",)
"""Pattern names whose recompilations are told after the others."""


def story_patterns(explanation) -> list[str]:
    """The family patterns worth a line, in words, real recompilations first."""
    names = pattern_names(explanation)
    shown = [(names.get(id(f)), p) for f, p in zip(explanation.families, explanation.patterns)
             if not (names.get(id(f)) == "steady" and len(f.members) <= 1)]
    return fold_alike([p for name, p in sorted(shown, key=lambda np: np[0] in AFTER_THE_STORY)])


def fold_alike(lines: list[str]) -> list[str]:
    """Lines that read the same told once, with how many families they stand for (review 13 F6: torch.compile's
    bridge had two families "steady: torch.compile (XLA bridge) compiled once in 5 graphs", printed twice as if
    one line had been repeated)."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    return [line if k == 1 else f"{line}, for each of {k} graph families" for line, k in counts.items()]


def story_recompilations(explanation) -> list:
    """The recompilations in run order, those of eager operations after the rest."""
    names = pattern_names(explanation)
    return sorted(explanation.recompilations, key=lambda r: names.get(id(r.family)) in AFTER_THE_STORY)


def told_last(explanation) -> set[str]:
    """Refs of the recompilations told after the story (eager operations)."""
    names = pattern_names(explanation)
    return {r.graph.ref for r in explanation.recompilations if names.get(id(r.family)) in AFTER_THE_STORY}
