"""Dynamo round 27 (docs/accuracy.md): Dynamo's own guard that an input carries no mark_dynamic mark (a tensor marked
on some calls only) and a cache line invalidated because the compiled module was freed (a new model per fold with
``inline_inbuilt_nn_modules`` off) each get their own row; their look-alikes keep theirs. One test per row, its
look-alikes, and the round's runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fixes import choose
from hlodiff.explain.dynamo_guard_kinds import _classify

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
