"""Dynamo round 27 (docs/accuracy.md): Dynamo's own guard that an input carries no mark_dynamic mark (a tensor marked
on some calls only) and a cache line invalidated because the compiled module was freed (a new model per fold with
``inline_inbuilt_nn_modules`` off) each get their own row; their look-alikes keep theirs. One test per row, its
look-alikes, and the round's runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fixes import choose
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak
from hlodiff.explain.dynamo_guard_kinds import _classify
from hlodiff.explain.dynamo_log_findings import breaks_of
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


@pytest.mark.parametrize("guard, fact", [
    ("hasattr(args[0], '_dynamo_dynamic_indices') == False", "marked_dynamic"),
    ("hasattr(L['x'], '_dynamo_dynamic_indices') == False", "marked_dynamic"),
    ("Cache line invalidated because L['fn'] got deallocated", "module_freed"),
    ("Cache line invalidated because L['self'] got deallocated", "module_freed"),
])
def test_each_guard_of_the_round_is_read_as_its_fact(guard, fact):
    kind, _, seen, facts = _classify(guard)
    assert kind == "guard" and fact in facts
    assert ("mark_dynamic" in seen) is (fact == "marked_dynamic")


@pytest.mark.parametrize("guard, other", [
    ("not hasattr(L['self'], 'log_prior')", "hasattr"),                      # d21_logit_adjust_late: the user's attribute
    ("hasattr(L['self'], 'log_prior')", "hasattr"),
    ("Cache line invalidated because L['___stack0'] got deallocated", None),  # d17_perf_counter: a resume's stack value
    ("Cache line invalidated because L['mod'] got deallocated", None),       # an argument, not the compiled module
    ("___check_obj_id(x, 140000000)", "object_identity"),               # d24_id_cache
])
def test_look_alikes_keep_their_reading(guard, other):
    _, _, _, facts = _classify(guard)
    assert not facts & {"marked_dynamic", "module_freed"}
    assert other is None or other in facts


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "marked_dynamic"}, "dynamo_marked_dynamic"),
    ({"dynamo", "marked_dynamic", "limit_hit"}, "dynamo_guard"),   # past the limit no "keeps both graphs"
    ({"dynamo", "module_freed"}, "dynamo_module_freed"),
    ({"dynamo"}, "dynamo_guard"),
])
def test_the_rows_are_chosen_on_their_evidence(facts, row):
    rule = choose("guard", frozenset(facts))
    assert rule.name == row
    assert ("mark_dynamic on every call or on none" in rule.text) is (row == "dynamo_marked_dynamic")
    assert ("inline_inbuilt_nn_modules" in rule.text) is (row == "dynamo_module_freed")


def test_a_batch_marked_dynamic_on_some_calls_is_told_to_mark_every_call_or_none():
    """d27_mark_dynamic_some: the guard is located in torch's linear.py; the call is the user's line."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d27_mark_dynamic_some"), "--json", codes=(0, 1),
                         env={"HLODIFF_SOURCE_MAP": f"/home/user/project={SCENARIOS}"}).stdout)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_marked_dynamic"}
    head = doc["headline"]
    assert head["location"]["line"] == 23 and "mark_dynamic on every call or on none" in head["fix"]
    assert "linear.py" not in head["fix"] and "pad" not in head["fix"]


def test_a_new_model_per_fold_with_inlining_off_names_the_setting():
    """d27_kfold_inline_off: 4 recompiles, each "Cache line invalidated because L['fn'] got deallocated"."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d27_kfold_inline_off"), "--json",
                         codes=(0, 1)).stdout)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_module_freed"}
    assert "inline_inbuilt_nn_modules" in doc["headline"]["fix"]


def test_a_resume_functions_freed_stack_value_keeps_its_story():
    """d17_perf_counter: ``L['___stack0']`` got deallocated is no module freed."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d17_perf_counter"), "--json", codes=(0, 1)).stdout)
    assert "dynamo_module_freed" not in {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}


def _library_break(reason: str) -> GraphBreak:
    return GraphBreak("0/0", reason, None,
                      at=SourceFrame("/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", 1826, "inner"),
                      call=SourceFrame("/p/t.py", 26, "<module>"))


@pytest.mark.parametrize("reason, rule", [
    ("Module-level backwards hooks require compiled autograd.", "dynamo_graph_break_module_backward_hook"),
    # look-alikes: torch's own breaks in library code keep the library row (d21_mark_step_inside, compiled opt.step)
    ("Call to `torch._dynamo.graph_break()`", "dynamo_graph_break_library"),
    ("Attempted to call function marked as skipped", "dynamo_graph_break_library"),
])
def test_a_module_backward_hook_break_names_the_hook_and_its_look_alikes_keep_their_row(reason, rule):
    (b,) = breaks_of(DynamoLog("x", "text", [DynamoCompile("0/0", "forward")], graph_breaks=[_library_break(reason)]))
    assert b.fix_rule == rule, b.fix_rule
    assert b.location.line == 26
    if rule == "dynamo_graph_break_module_backward_hook":
        assert "register_hook" in b.fix and "module.py" not in b.fix


def test_a_module_backward_hook_heads_the_report_at_the_call():
    """d27_module_backward_hook: the break inside torch's Module._call_impl, the user's call :26."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d27_module_backward_hook"), "--json",
                         codes=(0,)).stdout)
    head = doc["headline"]
    assert head["kind"] == "graph_break" and head["location"]["line"] == 26
    assert "remove the module hook" in head["fix"]


def test_live_reads_dynamo_s_log_at_the_end_of_a_run_whose_compiled_module_made_no_bridge_graph():
    """d27_module_backward_hook: one XLA graph, no bridge graph, no recompilation: the log is looked for at close."""
    from live_replay import printed, replay_case

    said = printed(replay_case("dynamo/d27_module_backward_hook"))
    assert any("graph break" in line and "d27_module_backward_hook.py:26" in line for line in said), said
