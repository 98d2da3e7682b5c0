"""Which recompilations of a run were unexpected: what ``explain-recompile``'s exit status says.

A run that warms up (the first steps differ, then one graph for good), sets up (graphs that each ran once
before the training loop), runs JAX operations outside jit, or whose recompilations the fix rules call expected
(inputs already on a few buckets, train and eval steps, a library's first step) compiles more than once and is
still healthy; a CI
gate on the exit status must pass it. ``--warmup N`` states the warm-up the way the pytest plugin's
``hlo_stable(warmup=N)`` does, in steps: then a recompilation in the first N steps is expected and one after
them is not, whatever its pattern (setup and eager ops excepted: they are not steps of the loop).
"""

from __future__ import annotations

from hlodiff.diff.fix_rules import EXPECTED as EXPECTED_FIXES
from hlodiff.diff.fix_stance import FixStance
from hlodiff.explain.patterns import pattern_names
from hlodiff.explain.explanation import Recompilation, RunExplanation
from hlodiff.explain.steps import graph_steps

EXPECTED = ("steady", "warm-up only", "setup", "eager op")
"""Family patterns whose recompilations are expected when no ``--warmup`` is given."""
EXPECTED_WITH_WARMUP = ("setup", "eager op")
"""Family patterns whose recompilations stay expected whatever the ``--warmup``: not steps of the loop."""


def unexpected(explanation: RunExplanation, warmup: int | None = None) -> list[Recompilation]:
    """The recompilations that are not warm-up, setup or eager ops (``warmup``: the first N steps are warm-up), nor
    programs loaded from a persistent cache: those compiled nothing in this run (review 17, F3: a run that loaded
    every program said "nothing compiled" and exited 1 for a weak_type finding among the loaded ones)."""
    kinds = pattern_names(explanation)
    loaded = set(getattr(explanation, "loaded", ()) or ())
    compiled = [r for r in explanation.recompilations if r.graph.ref not in loaded]
    if warmup is None:
        return [r for r in compiled
                if (kinds.get(id(r.family)) not in EXPECTED or asks_a_change(r, kinds.get(id(r.family))))
                and not _expected_by_its_fix(r)]
    steps = graph_steps(explanation.graphs, explanation.families)
    return [r for r in compiled
            if kinds.get(id(r.family)) not in EXPECTED_WITH_WARMUP and steps.get(r.graph.ref, 0) >= warmup]


def asks_a_change(r: Recompilation, pattern: str | None) -> bool:
    """A recompilation of a family that warms up whose root's fix asks for a change (a sharding spec switched at
    step 2, then kept): the headline tells the user to change their code, so the exit status cannot say all is
    expected. Setup graphs and eager ops are not steps of the loop and stay expected."""
    if pattern not in ("warm-up only", "steady") or not r.causes:
        return False
    root = r.causes[0]
    return root.fix_rule is not None and root.fix_stance is FixStance.CHANGE


def _expected_by_its_fix(r: Recompilation) -> bool:
    """The recompilation's root cause got a fix row that calls it expected (one graph per bucket, a library's
    first step, train vs eval: :data:`hlodiff.diff.fix_rules.EXPECTED`): the headline says nothing to fix, and the
    exit status agrees."""
    return bool(r.causes) and r.causes[0].fix_rule in EXPECTED_FIXES


def exit_status(explanation: RunExplanation, warmup: int | None = None) -> int:
    """0 when nothing unexpected compiled, 1 when something did or a compiled module could not be read."""
    return 1 if unexpected(explanation, warmup) or explanation.unread else 0
