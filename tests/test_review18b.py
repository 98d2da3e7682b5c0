"""New-user review 18, F5 and F6.

F5 (the reviewer's t1, fixtures/reviews/rev18_last_batch_momentum: 40 samples, batch 16, drop_last=False, SGD with
momentum): the graphs A,B,C,B,B,C are the first step's warm-up, then B,B,C every epoch. hlodiff called them "varies
among 3 graphs in no fixed order" and put "already on 2 buckets (8, 16): one graph per bucket is expected" under a
fix that says use drop_last or pad. F6 (the reviewer's c2: a temperature annealed as a Python float): five blocks of
the same story, one per value, and no word that every new value heads for Dynamo's recompile limit.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from helpers import cli, cli_json

from hlodiff.explain.cycles import period_of

T1 = FIXTURES / "reviews" / "rev18_last_batch_momentum"
T1_MAP = f"/home/user/project={T1}"


def test_a_short_last_batch_each_epoch_after_a_warm_up_step_reads_periodic_not_in_no_fixed_order():
    first = cli("explain-recompile", T1, "--source-map", T1_MAP, codes=(1,)).stdout.splitlines()[0]
    assert "periodic: sync at train.py:19 repeats every 3 graphs" in first, first
    assert "after a first graph that never came back" in first, first
    assert "no fixed order" not in first, first


def test_no_plan_calls_the_sizes_expected_under_a_fix_that_asks_for_drop_last():
    out = cli("explain-recompile", T1, "--source-map", T1_MAP, codes=(1,)).stdout
    assert "drop_last=True" in out.splitlines()[1]
    assert "one graph per bucket is expected" not in out
    doc = cli_json("explain-recompile", T1, "--source-map", T1_MAP, codes=(1,))
    plans = [c["plan"] for r in doc["recompilations"] for c in r["causes"] if c.get("plan")]
    assert all(p["kind"] != "expected" for p in plans), plans


@pytest.mark.parametrize("keys, period", [
    ("ABCBBC", 3),    # review 18 F5: warm-up step, then B,B,C each epoch (a short last batch)
    ("ABBCBBC", 3),   # already periodic after one warm-up graph (offset 1): unchanged
    ("ABCBCC", None),  # the first graph once, the rest in no round: no period
    ("ABCBBCA", None),  # the first graph comes back: it was no warm-up
    ("ABBB", None),   # one graph after the first: no cycle (warm-up only)
    ("ABCB", None),   # dyn_maml_param_type's bridge graphs: too few to call alternating after a first graph
])
def test_a_first_graph_of_its_own_before_a_cycle_seen_twice_is_periodic(keys, period):
    assert period_of(list(keys))[0] == period


TEMP = FIXTURES / "reviews" / "rev18_temperature_float"


def test_a_float_guard_recompiling_on_every_new_value_is_one_block_that_names_the_recompile_limit():
    """The reviewer's c2 (dump, PT_XLA_DEBUG log, TORCH_LOGS): 0/1..0/5, each value new, the limit not hit yet."""
    out = cli("explain-recompile", TEMP, "--source-map", f"/home/user/project={TEMP}", codes=(1,)).stdout
    assert out.count("Dynamo recompiled forward (") == 1, out
    assert "Dynamo recompiled forward (5 times: 0/1 to 0/5)" in out
    assert out.count("fix: self.temperature is a number") == 1, out
    assert "recompile limit (8 by default; 6 compilations so far)" in out, out


def test_once_the_limit_is_hit_one_block_and_no_so_far_line_the_summary_tells_the_limit():
    dyn = FIXTURES / "scenarios" / "dynamo"
    out = cli("explain-recompile", dyn / "rev18_tc_temperature_limit" / "record", "--source-map",
              f"/home/user/project={dyn}", codes=(1,)).stdout
    assert out.count("Dynamo recompiled forward (") == 1, out
    assert "(7 times: 0/1 to 0/7)" in out
    assert "so far)" not in out


def test_a_live_line_of_a_dump_names_its_function_once():
    """F8 (watch on the reviewer's j2): "compilation 2 of jit_train_step recompiled (jit_train_step)"."""
    from hlodiff.explain.live_events import LiveEvent, Told
    from hlodiff.render.live import lines

    told = Told(kind="sharding", summary="argument `w` arrives with another sharding", location=None, fix=None)
    event = LiveEvent(kind="recompiled", step=1, graph="run/dump#2", family="jit_train_step", told=told,
                      compilations_only=True)
    [head] = lines(event)
    assert "compilation 2 of jit_train_step recompiled:" in head, head
    assert head.count("jit_train_step") == 1, head
    stepped = LiveEvent(kind="recompiled", step=3, graph="run#5", family="sync at t.py:9", told=told)
    assert "step 3 recompiled (sync at t.py:9):" in lines(stepped)[0]  # a step names no family: it keeps it


def test_compare_runs_names_two_programs_of_one_function_once_with_their_count():
    """F8 (compare-runs on the reviewer's j1): "jit_unstack, jit_train_step, jit_train_step, ..."."""
    from hlodiff.render.across_runs import _names

    assert _names(["jit_unstack", "jit_train_step", "jit_train_step", "jit_stage", "jit_add"]) == \
        "jit_unstack, jit_train_step (2 programs), jit_stage, ..."
    assert _names(["jit_a", "jit_b"]) == "jit_a, jit_b"
