"""When `hlodiff record --lines auto` has torch_xla record source lines (hlodiff.capture.lines), sync by sync, and
how a graph that compiled without them gets them from a later execution (hlodiff.explain.later_lines)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from hlodiff.capture.lines import STEADY_SYNCS, WAIT_SYNCS, LinesPolicy
from helpers import FIXTURES, capture_free_env, record_json, run_hlodiff, script_under_record, truth_of


def feed(policy: LinesPolicy, syncs: list[tuple[bool, str]]) -> list[bool]:
    """Whether each sync was traced with lines (the state before it ran)."""
    states = []
    for compiled, graph in syncs:
        states.append(policy.on)
        policy.after_sync(compiled, graph)
    return states


def test_auto_records_lines_while_warming_up_and_stops_when_steady():
    run = [(True, "A"), (True, "B")] + [(False, "A"), (False, "B")] * 4
    states = feed(LinesPolicy("auto"), run)
    assert states[:2 + STEADY_SYNCS] == [True] * (2 + STEADY_SYNCS)
    assert states[2 + STEADY_SYNCS:] == [False] * (len(run) - 2 - STEADY_SYNCS)


def test_a_graph_compiled_without_lines_turns_them_on_until_it_recurs():
    policy = LinesPolicy("auto")
    feed(policy, [(True, "A")] + [(False, "A")] * STEADY_SYNCS)
    assert not policy.on
    feed(policy, [(True, "M")])  # the metric's graph compiles while lines are off
    assert policy.on and policy.watching and policy.missing == ["M"]
    states = feed(policy, [(False, "A")] * 4 + [(False, "M")])
    assert all(states)  # the metric's next occurrence ran with lines
    assert policy.missing == []
    feed(policy, [(False, "A")] * STEADY_SYNCS)
    assert not policy.on and not policy.watching


def test_a_long_period_is_predicted_from_the_second_occurrence():
    policy = LinesPolicy("auto")
    feed(policy, [(True, "A")] + [(False, "A")] * STEADY_SYNCS)
    period = WAIT_SYNCS + 10
    first = policy.syncs
    feed(policy, [(True, "E")] + [(False, "A")] * (period - 1))
    assert not policy.on  # waited WAIT_SYNCS syncs, then gave up
    assert feed(policy, [(False, "E")]) == [False]  # second occurrence: lines were off
    states = feed(policy, [(False, "A")] * (period - 1))
    assert not any(states[STEADY_SYNCS:])
    assert policy.syncs == first + 2 * period and policy.on and policy.watching  # the third is traced with lines
    feed(policy, [(False, "E")])
    assert policy.missing == []


@pytest.mark.parametrize("mode, expected", [("always", True), ("never", False)])
def test_always_and_never_do_not_switch(mode, expected):
    states = feed(LinesPolicy(mode), [(True, "A"), (True, "B")] + [(False, "A")] * 10)
    assert set(states) == {expected}


@pytest.mark.xla
@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")
def test_record_auto_names_the_line_of_a_late_metric_from_its_next_occurrence(tmp_path):
    """fixtures/torch_xla/metric_late.py under `hlodiff record` (default --lines auto): the metric's graph compiles at
    step 5, after three steady steps, so without source lines; its cause still names the script's line."""
    truth = truth_of(FIXTURES / "torch_xla" / "metric_late")
    script = script_under_record(tmp_path, "metric_late")
    done = run_hlodiff("record", "--out", "run", "--json", "--", sys.executable, script, cwd=tmp_path,
                       env=capture_free_env())
    assert done.returncode == 0, done.stderr[-3000:]
    doc = record_json(done.stdout)
    modules = sorted((tmp_path / "run" / "xla_dump").glob("module_*.before_optimizations.txt"))
    assert len(modules) == len(truth["compilations"])
    assert "source_file=" in modules[0].read_text()  # warm-up: lines on
    assert "source_file=" not in modules[1].read_text()  # steady: lines were off when the metric compiled
    [recompilation] = doc["recompilations"]
    assert recompilation["index"] == truth["compilations"][1]
    cause = recompilation["causes"][0]
    assert cause["kind"] == truth["cause"]
    assert [(Path(loc["file"]).name, loc["line"]) for loc in cause["locations"]][:1] == [
        (truth["user_file"], truth["user_line"])]


@pytest.mark.xla
@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")
def test_record_lines_never_says_how_to_get_the_line(tmp_path):
    script = script_under_record(tmp_path, "metric_late")
    done = run_hlodiff("record", "--lines", "never", "--out", "run", "--", sys.executable, script, cwd=tmp_path,
                       env=capture_free_env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "metric_late.py:35" not in done.stderr.split("fix:")[0]
    assert "--lines always" in done.stderr


@pytest.mark.xla
@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")
def test_record_auto_with_a_save_file_takes_the_module_of_a_later_entry(tmp_path):
    """With XLA_SAVE_TENSORS_FILE set by the user, every execution's HLO is written: the metric's graph compiled
    without lines, and a later entry of the same hash, traced with lines on, supplies them."""
    truth = truth_of(FIXTURES / "torch_xla" / "metric_late")
    script = script_under_record(tmp_path, "metric_late")
    env = capture_free_env(XLA_SAVE_TENSORS_FILE=str(tmp_path / "mine.hlo"), XLA_SAVE_TENSORS_FMT="hlo")
    done = run_hlodiff("record", "--out", "run", "--json", "--", sys.executable, script, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = record_json(done.stdout)
    entries = (tmp_path / "mine.hlo.0").read_text().split("[ScheduleSyncTensorsGraph]")[1:]
    metric = truth["compilations"][1]
    assert "source_file=" not in entries[metric]  # compiled while lines were off
    [recompilation] = doc["recompilations"]
    assert recompilation["index"] == metric
    cause = recompilation["causes"][0]
    assert [(Path(loc["file"]).name, loc["line"]) for loc in cause["locations"]][:1] == [
        (truth["user_file"], truth["user_line"])]
