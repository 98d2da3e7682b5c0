"""New-user review 15, F3/F4/F7 live: the lines `record` / `watch` print while a run goes (replayed from committed
captures as a growing run, fixtures/scenarios/score_live.py). F3: tc_warmup_step's five Dynamo recompilations, at
calls 1-5, were each told as "step 1"."""

from __future__ import annotations

import re

from conftest import FIXTURES
from live_replay import printed, replay, replay_case

from hlodiff.explain.live_steps import FX_CAUSE, RUN_CAUSE, UserSteps

def _lines(case_id: str) -> list[str]:
    return printed(replay_case(case_id))


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


# -- F4: live lines that contradict or repeat each other --------------------------------------------------------------

def test_five_recompilations_of_one_story_are_one_story_with_counts_and_no_float_advice():
    said = _lines("dynamo/rev15_tc_warmup_step")
    told = [x for x in said if re.match(r"hlodiff: step \d+ recompiled \(", x)]
    again = [x for x in said if "recompiled again: same story as step 1" in x]
    assert len(told) == 1 and len(again) == 4 and len(said) <= 7, said
    assert not any("as a float" in x or "float(" in x for x in said), said
    # the guard's value is the earlier graph's, not the failing call's ("step was 0" at the call passing 1)
    assert "guard `step == 0` failed (the earlier graph was traced for step = 0; this call passed another)" in told[0]


def _copy_capture(tmp_path, lines_of_log: int | None):
    import shutil

    src = FIXTURES / "scenarios" / "dynamo" / "rev15_tc_warmup_step" / "record"
    dst = tmp_path / "record"
    shutil.copytree(src, dst)
    log = next((dst / "torch_trace").iterdir())
    full = (src / "torch_trace" / log.name).read_text().splitlines(keepends=True)
    log.write_text("".join(full if lines_of_log is None else full[:lines_of_log]))
    return dst, log, full


def test_a_dynamo_recompilation_is_told_once_its_compile_is_written(tmp_path, monkeypatch):
    """record's lines came while TORCH_TRACE was being written: a compile whose end (its function's name) was not
    written yet was told at the guard's line :9, then moved to the call :15, and each next one at :9 again read as
    another story. It waits for its name: told once, at the call."""
    from hlodiff.live_run import LiveRun

    monkeypatch.setenv("HLODIFF_SOURCE_MAP", f"/home/user/project={FIXTURES / 'scenarios' / 'dynamo'}")
    dst, log, full = _copy_capture(tmp_path, 9)  # up to 0/1's dynamo_start: its compilation_metrics not yet
    watcher = LiveRun(str(dst))
    early = [e for e in watcher.poll() if e.kind in ("recompiled", "repeat")]
    assert early == []
    log.write_text("".join(full))
    late = [e for e in watcher.poll() + watcher.close() if e.kind in ("recompiled", "repeat")]
    assert late and {e.told.location.line for e in late} == {15}
    assert [e.kind for e in late] == ["recompiled"] + ["repeat"] * (len(late) - 1)


def test_an_expected_once_on_the_second_step_waits_for_the_next_step():
    """tx_grad_accum (review 15 #2) told step 1 "expected recompilation ... expected once", then at the next line a
    real recompilation with another fix: "expected once" rests on the next steps reusing the graph (ONCE_RULES)."""
    from hlodiff.explain.live_told import ONCE_RULES
    from hlodiff.diff.fix_rules import RULES_BY_NAME

    assert ONCE_RULES == {"inputs_made_before_loop", "outputs_made_before_loop"}
    assert all("expected once" in RULES_BY_NAME[r].text for r in ONCE_RULES)


def test_grad_accumulation_step_1_is_never_told_expected_then_unexpected():
    """Review 15 #2 under `hlodiff record` (torch_xla/rev15_tx_grad_accum, the scenario of F2's fix): no "expected
    recompilation" line for step 1 before its story; the fix is told once, not revised as each step is added to its
    list ("steps 1 and 3 only", then "steps 1, 3 and 5 only")."""
    said = _lines("torch_xla/rev15_tx_grad_accum")
    assert not any("expected recompilation" in x and "step 1:" in x for x in said), said
    revised = [x for x in said if "now that more of the run is known" in x and "traced on steps" in x]
    assert len(revised) <= 1, said


def test_lookalike_an_optimizers_warm_up_is_told_expected_at_once():
    """rev15_tx_stable_item (SGD momentum): step 1's new inputs are the optimizer's state (a warm-up, no
    ONCE_RULES row): told expected at once and confirmed, never held or told as a recompilation."""
    said = printed(replay(FIXTURES / "scenarios" / "cost" / "rev15_tx_stable_item", "c"))
    assert said and said[0].startswith("hlodiff: step 1: expected recompilation"), said
    assert not any(" recompiled" in x or "a warm-up if the next steps" in x for x in said), said
