"""The order a run's report tells things in: the recompilations a user has to act on first, JAX's eager
operations (``jnp.ones`` outside jit, compiled once per shape: expected, not a step) after them, and no line for a
function that compiled once and ran once (``steady: jit_convert_element_type compiled once in 1 graph`` says
nothing the counts do not).

Only order and selection for the terminal report; the JSON keeps every pattern and recompilation in run order.
"""

from __future__ import annotations

from hlodiff.explain.patterns import pattern_kind

AFTER_THE_STORY = ("eager op",)
"""Pattern kinds whose recompilations are told after the others."""


def _kinds(explanation) -> dict[int, str]:
    return {id(f): pattern_kind(p) for f, p in zip(explanation.families, explanation.patterns)}


def story_patterns(explanation) -> list[str]:
    """The family patterns worth a line, real recompilations first."""
    shown = [(f, p) for f, p in zip(explanation.families, explanation.patterns)
             if not (pattern_kind(p) == "steady" and len(f.members) <= 1)]
    return [p for _, p in sorted(shown, key=lambda fp: pattern_kind(fp[1]) in AFTER_THE_STORY)]


def story_recompilations(explanation) -> list:
    """The recompilations in run order, those of eager operations after the rest."""
    kinds = _kinds(explanation)
    return sorted(explanation.recompilations, key=lambda r: kinds.get(id(r.family)) in AFTER_THE_STORY)
