"""Dynamo round 18 (docs/accuracy.md): a value a graph break hands to the resume function that is a tensor's own
value read into Python (``float()`` of a NumPy draw Dynamo traced as a tensor), told apart from a host call's value
(a clock read, round 17): moving the call out of the compiled function would still pass a changing number, so the
fix keeps the value a tensor. With the round's Logger break, Python-list class weights and the is_compiling
control on their real runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.explain.dynamo_log_findings import recompiles_of
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_AT = SourceFrame("/p/t.py", 22, "forward")
_CALL = SourceFrame("/p/t.py", 31, "<module>")


def _resumed(brk: GraphBreak):
    function = "torch_dynamo_resume_in_forward_at_22"
    compiles = [DynamoCompile("1/0", function),
                DynamoCompile("1/1", function, failures=[GuardFailure("1/0", "___stack2 == 0.988463958454297")])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles, graph_breaks=[brk]))
    return r


_SCALAR_READ = GraphBreak("0/0", "Data dependent operator",
                          "Operator `aten._local_scalar_dense.default` has a non-Tensor output whose value is dependent "
                          "on the data of Tensor inputs.", at=_AT, call=_CALL)
_CLOCK = GraphBreak("0/0", "Attempted to call function marked as skipped",
                    "Dynamo does not know how to trace the builtin `time.perf_counter.` This function is either ...",
                    at=_AT, call=_CALL)
_NONZERO = GraphBreak("0/0", "Dynamic shape operator",
                      "Operator `aten.nonzero.default`'s output shape depends on input Tensor data.", at=_AT, call=_CALL)


def test_a_tensor_read_into_a_number_before_the_break_is_told_to_stay_a_tensor():
    r = _resumed(_SCALAR_READ)
    assert r.fix_rule == "dynamo_resume_tensor_read", r.fix_rule
    assert "read as a Python number at t.py:22" in r.fix and "keep the value a tensor" in r.fix
    # never the clock's advice (moving the read out still passes a new float), a dtype or a higher limit
    for words in ("timer", "time around", ".item()", "dtype", "expected", "raise"):
        assert words not in r.fix, words


@pytest.mark.parametrize("brk", [_CLOCK, _NONZERO], ids=["clock", "nonzero"])
def test_a_host_call_or_a_data_sized_op_before_the_break_keeps_its_row(brk):
    # look-alikes with the same guard: a skipped host call (d17_perf_counter) and an op sized by the data
    r = _resumed(brk)
    assert r.fix_rule == "dynamo_resume_stack_value" and "read as a Python number" not in r.fix


def _explain(name: str) -> tuple[dict, int]:
    result = cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


@pytest.mark.parametrize("name, rule", [("d18_numpy_jitter", "dynamo_resume_tensor_read"),
                                        ("d17_perf_counter", "dynamo_resume_stack_value")])
def test_the_runs_with_a_value_on_the_resume_stack_are_told_by_their_rows(name, rule):
    doc, code = _explain(name)
    assert doc["dynamo"]["recompiles"][0]["fix_rule"] == rule and code == 1


def test_the_round_s_other_runs_keep_what_they_were_told():
    doc, code = _explain("d18_logger_fstring")
    assert doc["headline"]["kind"] == "graph_break" and code == 0
    doc, code = _explain("d18_class_weights_list")
    assert doc["headline"]["kind"] == "python_value" and "tensor" in doc["headline"]["fix"] and code == 1
    doc, code = _explain("d18_is_compiling_control")
    assert doc["headline"] is None and code == 0


def _guarded(guard: str):
    compiles = [DynamoCompile("0/0", "forward"), DynamoCompile("0/1", "forward", failures=[GuardFailure("0/0", guard)])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles))
    return r


@pytest.mark.parametrize("guard", ["self.class_weights[0] == 1.0", "L['self'].class_weights[2] == 0.75",
                                   "self._modules['loss'].weights[1] == 2.5"])
def test_one_number_of_a_list_on_the_module_puts_the_whole_list_in_a_buffer(guard):
    r = _guarded(guard)
    assert r.fix_rule == "dynamo_module_list_item", r.fix_rule
    assert "register_buffer" in r.fix and "copy_" in r.fix and "expected" not in r.fix


@pytest.mark.parametrize("guard, rule", [
    ("self.step == 3", "dynamo_module_number"),              # a number on the module itself keeps its row
    ("self.param_groups[0]['lr'] == 0.1", None),             # an optimizer group's lr ends in a key: no list item
    ("L['grid'][0] == 4", None),                             # an argument's tuple, not the module's list
    ("self.flags[0] == True", "dynamo_python_flag"),         # a flag in a list stays one graph per setting
])
def test_look_alikes_of_a_list_item_keep_their_rows(guard, rule):
    r = _guarded(guard)
    assert r.fix_rule != "dynamo_module_list_item" and (rule is None or r.fix_rule == rule), r.fix_rule


def test_the_class_weights_run_is_told_as_a_list_to_keep_in_a_buffer():
    doc, code = _explain("d18_class_weights_list")
    assert doc["dynamo"]["recompiles"][0]["fix_rule"] == "dynamo_module_list_item" and code == 1
