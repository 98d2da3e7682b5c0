"""New-user review 15, F3/F4/F7 live: the lines `record` / `watch` print while a run goes (replayed from committed
captures as a growing run, fixtures/scenarios/score_live.py). F3: tc_warmup_step's five Dynamo recompilations, at
calls 1-5, were each told as "step 1"."""

from __future__ import annotations

import importlib.util
import re

from conftest import FIXTURES

from hlodiff.explain.live_steps import FX_CAUSE, RUN_CAUSE, UserSteps

_spec = importlib.util.spec_from_file_location("scenario_score_live_r15", FIXTURES / "scenarios" / "score_live.py")
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)


def _lines(case_id: str) -> list[str]:
    from hlodiff.render.live import lines

    engine, name = case_id.split("/")
    truth = live.score.local_cases([case_id])[0]["truth"]
    events, skipped = live.replay(FIXTURES / "scenarios" / engine / name, truth["capture"])
    assert skipped is None
    return [x for e in events for x in lines(e)]


def _steps(said: list[str]) -> list[int]:
    return [int(m.group(1)) for x in said if (m := re.match(r"hlodiff: step (\d+) recompiled", x))]


# -- F3: the step of each Dynamo recompilation whose XLA graph was compiled already ---------------------------------

def test_each_dynamo_recompilation_is_told_at_its_own_call():
    said = _lines("dynamo/rev15_tc_warmup_step")
    assert _steps(said) == [1, 2, 3, 4, 5], said


def _read(steps: UserSteps, ref: str, n: int, cause: str, key: str, hit: bool = True) -> None:
    steps.read(ref, n, bridge=True, cut=False, traced=True, debug_cause=cause, hit=hit, key=key)


def test_a_compiled_programs_later_runs_are_calls():
    """A run of the compiled program ("dynamo is executing a compiled program") begins a call when the call under
    way ran that graph already, with no sync of its inputs before it."""
    steps = UserSteps()
    _read(steps, "r#0", 0, "torch_xla.sync when dynamo processing input graphs", "in", hit=False)
    _read(steps, "r#1", 1, FX_CAUSE + " a FX graph to HLO", "A", hit=False)
    for i in range(2, 6):
        _read(steps, f"r#{i}", i, RUN_CAUSE, "A")
    assert steps.calls == 5 and steps.upcoming() == 5


def test_lookalike_the_graph_after_a_break_is_the_same_call():
    """Two graphs of one call (the code after a graph break): A then B is one call; A again begins the next."""
    steps = UserSteps()
    _read(steps, "r#0", 0, "torch_xla.sync when dynamo processing input graphs", "in", hit=False)
    _read(steps, "r#1", 1, FX_CAUSE, "A", hit=False)
    _read(steps, "r#2", 2, FX_CAUSE, "B", hit=False)
    assert steps.calls == 1
    _read(steps, "r#3", 3, RUN_CAUSE, "A")
    _read(steps, "r#4", 4, RUN_CAUSE, "B")
    assert steps.calls == 2


def test_an_unjoined_recompilation_takes_the_calls_this_look_began_in_order():
    steps = UserSteps()
    _read(steps, "r#0", 0, "torch_xla.sync when dynamo processing input graphs", "in", hit=False)
    _read(steps, "r#1", 1, FX_CAUSE, "A", hit=False)
    steps.poll_begins()
    for i in range(2, 5):  # calls 1, 2, 3 read at one look
        _read(steps, f"r#{i}", i, RUN_CAUSE, "A")
    assert [steps.unjoined(n, after) for n, after in ((0, 0), (1, 1), (2, 2))] == [1, 2, 3]
    # read before its call's graph: the upcoming call; never before the frame's previous compilation
    steps.poll_begins()
    assert steps.unjoined(0, 3) == 4 and steps.unjoined(0, 6) == 7
