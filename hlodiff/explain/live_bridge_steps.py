"""Live, a torch.compile run without Dynamo's log: whether a bridge graph mostly alike an earlier one is the
compiled function's fixed set (both run in every steady step: the report at exit tells no recompilation,
:mod:`hlodiff.explain.dynamo_every_step`) or that program changed (told as XLA's story).

The family's own window cannot say: it holds the bridge's graphs alone, and the steps are cut by the user's
syncs, which are other families. So this reads the run as held (its compilations and the families' recent
executions), as the report at exit reads the whole run; until two steady steps are known the graph is held
silently (round 19's control was told at step 1 as a recompilation, the report at exit told none).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.errors import HlodiffError
from hlodiff.explain.dynamo_every_step import fixed_set_pairs, steady_steps


@dataclass(slots=True)
class BridgeSteps:
    """What the steps so far say of the bridge's graphs."""

    known: bool
    """Two steady steps are known: whether a graph runs in every step can be told."""
    fixed: set[str]
    """Refs of bridge recompilations the report at exit tells as the compiled function's fixed set."""


def bridge_steps(run, records) -> BridgeSteps | None:
    """The steps of ``records`` (the run's compilations and held executions, in run order) read as the report at
    exit reads them; None when they cannot be read (a line still being written) or hold no bridge graph."""
    from hlodiff.explain.dynamo import bridge_without_log
    from hlodiff.explain.recompile import explain_records

    try:
        explanation = explain_records(run.window(list(records)), warnings=[])
        found = bridge_without_log(explanation, run.events)
    except HlodiffError:
        return None
    if found is None:
        return None
    bridge = set(found.bridge_compilations)
    fixed = fixed_set_pairs(explanation, bridge) & set(found.bridge_recompilations)
    return BridgeSteps(len(steady_steps(explanation, bridge)) >= 2, fixed)


AWAIT_STEPS = 32
"""Cache hits of the bridge's family a held recompilation waits for two steady steps (its recent window's size)."""
