"""Which training step each graph of a run belongs to: the columns of the HTML timeline and the unit of
``assert_stable(warmup=N)``.

A step ends with each full graph (a torch_xla sync); a partial graph (``.item()``) belongs to the step it
interrupts, and so does a graph torch.compile's XLA bridge ran inside the user's call (its own syncs while it
compiles a Dynamo graph: new-user review 20, F4, "#21 (step 9)" in a 6-step run). XLA dump folders show compilations only, so there each module of a family counts as one step of it.
"""

from __future__ import annotations

from hlodiff.explain.dynamo_bridge import bridge_run
from hlodiff.explain.families import Family, is_partial
from hlodiff.explain.inventory import GraphSummary


def graph_steps(graphs: list[GraphSummary], families: list[Family]) -> dict[str, int]:
    """Graph ref -> step index (0-based)."""
    steps: dict[str, int] = {}
    for family in families:
        for position, g in enumerate(m for m in family.members if m.record.kind == "xla_dump"):
            steps[g.ref] = position
    step = 0
    # a run with no whole graph at all has no sync that ends a step: each graph is a call of its own (review 6, p08:
    # torch.compile inference, where the bridge runs every call and the sync after it has nothing left to run;
    # every graph was "step 0"), as the live lines count them
    whole = any(_ends_a_step(g) for g in graphs if g.ref not in steps)
    for g in graphs:
        if g.ref in steps:
            continue
        steps[g.ref] = step
        if not whole or _ends_a_step(g):
            step += 1
    return steps


def _ends_a_step(g: GraphSummary) -> bool:
    """A whole graph of the user's sync: not a partial one, and not one the Dynamo bridge ran inside a call."""
    return not is_partial(g) and not bridge_run(g.record.frames)
