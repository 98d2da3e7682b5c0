"""Dynamo, round 7 (docs/accuracy.md): a dict's key order, which object an argument is (an enum member), two
arguments that are one tensor, sizes that follow a data-dependent graph break, a function Dynamo gave up (WON'T
CONVERT), and a step graph that changes after the first compiled call's cut step. Each row is checked on the real
run whose evidence chooses it, or on the guard as Dynamo prints it, and on its look-alikes."""

from __future__ import annotations

import pytest

from explain_helpers import explain_status as _explain, guard_recompiles as _rules
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.dumps.dynamo_log import GAVE_UP, GraphBreak
from hlodiff.dumps.dynamo_read import read_dynamo_log
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


@pytest.mark.parametrize("guard, rule", [
    # the same keys in another order, read by iterating the dict
    ("list(dict.keys(batch))[0] == 'x'", "dynamo_dict_key_order"),
    # look-alike: a key present on some calls only keeps its own row
    ("not ___dict_contains('attention_mask', batch)", "dynamo_dict_keys"),
    # which object a local argument is (an enum member compared with `is`): one graph per object, expected
    ("___check_obj_id(phase, 139668781271248)", "dynamo_object_identity"),
    # look-alike: a builtin's identity in Dynamo's globals is no argument of the user's: the generic guard
    ("___check_obj_id(G['__builtins_dict___0']['iter'], 94093)", "dynamo_guard"),
    # look-alike: an object of another class keeps the class row
    ("___check_type_id(head, 94521)", "dynamo_object_type"),
    # two tensor arguments that are one tensor on this call (torch 2.9's words, and older torch's)
    ('Duplicate tensors found: ["a", "b"]', "dynamo_tensor_alias"),
    ("Duplicate tensor found where not expected! L['y'] should not alias to anything, but is aliased",
     "dynamo_tensor_alias"),
])
def test_round_7_guards_and_their_look_alikes(guard, rule):
    assert _rules(guard)[0].fix_rule == rule


def test_an_enum_is_expected_and_never_a_tensor_and_aliases_are_named():
    (identity,) = _rules("___check_obj_id(phase, 1)")
    assert identity.fix_rule in EXPECTED and "as a tensor" not in identity.fix
    (alias,) = _rules('Duplicate tensors found: ["a", "b"]')
    assert alias.subject == "`a` and `b`" and alias.fix_rule not in EXPECTED and "clone" in alias.fix


_DATA_BREAK = GraphBreak("0/0", "Dynamic shape operator",
                         "Operator `aten.nonzero.default`'s output shape depends on input Tensor data.",
                         SourceFrame("/p/t.py", 17, "loss"))
_PRINT_BREAK = GraphBreak("0/0", "Unsupported function call", "`print` is not supported",
                          SourceFrame("/p/t.py", 17, "loss"))


@pytest.mark.parametrize("breaks, rule", [
    # a resume function after a break at a data-dependent op gets the selected rows: their size follows the data
    ([_DATA_BREAK], "dynamo_shape_data_dependent"),
    # look-alike: the same size guard after a print's break is an ordinary new size
    ([_PRINT_BREAK], "dynamo_shape"),
])
def test_a_size_after_a_data_dependent_break_keeps_the_shape_fixed(breaks, rule):
    (r,) = _rules("tensor '___stack0' size mismatch at index 0. expected 7, actual 8",
                  function="torch_dynamo_resume_in_loss_at_17", breaks=breaks)
    assert r.fix_rule == rule


def test_boolean_mask_indexing_is_told_as_a_mask_weight_not_buckets():
    doc, code = _explain(SCENARIOS / "dyn_mask_select")
    assert code == 1 and doc["dynamo"]["headline"]["fix_rule"] == "dynamo_shape_data_dependent"
    assert "bucket" not in doc["headline"]["fix"] and "weight by the mask" in doc["headline"]["fix"]
    assert {b["fix_rule"] for b in doc["dynamo"]["graph_breaks"]} == {"dynamo_graph_break_data_dependent"}


def test_a_won_t_convert_record_is_a_function_dynamo_gave_up_at_the_backend_s_failing_line():
    log = read_dynamo_log(str(SCENARIOS / "dyn_tolist_split" / "stderr.log"))
    (brk,) = log.graph_breaks
    assert brk.reason == GAVE_UP and brk.at.line == 17 and "openxla" in brk.explanation
    doc, code = _explain(SCENARIOS / "dyn_tolist_split")
    head = doc["headline"]
    assert code == 1 and head["kind"] == "graph_break" and head["location"]["line"] == 17
    assert doc["dynamo"]["graph_breaks"][0]["fix_rule"] == "dynamo_gave_up" and "eagerly" in head["fix"]
    assert doc["summary"].startswith("Dynamo compiled nothing: it gave up on pool")


def test_an_item_graph_break_is_no_function_given_up():
    """Look-alike: `.item()` in the compiled function breaks the graph; Dynamo compiled the pieces."""
    doc, _ = _explain(SCENARIOS / "dyn_item_branch")
    assert [b["fix_rule"] for b in doc["dynamo"]["graph_breaks"]] == ["dynamo_graph_break_item"]
    assert doc["summary"].startswith("Dynamo compiled guarded_loss")


def test_a_freeze_after_the_first_call_s_cut_step_is_the_story_not_the_cut_step():
    """dyn_freeze_backbone (A,B,B,C,C,C,C): the first graph is the first compiled call's step, cut by the bridge
    (a first-call sync, expected); the freeze at step 3 is a switch whose outputs are the backbone's updates."""
    doc, code = _explain(SCENARIOS / "dyn_freeze_backbone")
    (sync,) = doc["dynamo"]["first_call_syncs"]
    assert code == 1 and sync.endswith("dyn_freeze_backbone/dump#7")
    assert doc["headline"]["graph"].endswith("/dump#15") and "frozen" in doc["headline"]["fix"]
    step = next(f for f in doc["families"] if doc["headline"]["graph"] in f["graphs"])
    assert step["pattern"]["name"] == "switched"


@pytest.mark.parametrize("name", ["dyn_unread_attr_control", "dyn_grad_hook_control", "dyn_ema_global_control"])
def test_controls_have_no_headline(name):
    doc, code = _explain(SCENARIOS / name)
    assert code == 0 and doc["headline"] is None


@pytest.mark.parametrize("name, rule", [
    # the first compiled call's cut step, counted as expected, says so (it was "a value is kept on some steps only")
    ("dyn_grad_hook_control", "dynamo_first_call_sync"),
    ("dyn_freeze_backbone", "dynamo_first_call_sync"),
    # without Dynamo's log too (a dump and PT_XLA_DEBUG only)
    ("dyn_train_eval_dump", "dynamo_first_call_sync"),
    # look-alike: a row of its own that is already expected (tensors made before the loop) stays
    ("dyn_ema_global_control", "outputs_made_before_loop_unread"),
])
def test_a_first_compiled_call_s_cut_step_says_it_is_expected(name, rule):
    doc, _ = _explain(SCENARIOS / name)
    (sync,) = doc["dynamo"]["first_call_syncs"]
    (r,) = [r for r in doc["recompilations"] if r["graph"] == sync]
    assert r["causes"][0]["fix_rule"] == rule in EXPECTED and r["causes"][0]["fix"].startswith("expected")
