"""Dynamo round 12 (docs/accuracy.md): a module's parameters with requires_grad set on some calls (a frozen EMA
teacher through the student's compiled function), a torch-wide setting in Dynamo's GLOBAL_STATE guard
(torch.set_num_threads around a validation call), a graph break Dynamo raised under fullgraph=True (no dump: the
run stopped before XLA compiled anything), and the decision's line read from the source on disk. Checked on the
guards as Dynamo prints them, their look-alikes and the real runs."""

from __future__ import annotations

import shutil

import pytest

from explain_helpers import explain_scenario as _explain, guard_recompiles
from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_read import read_dynamo_log
from hlodiff.explain.dynamo_guard_kinds import GLOBAL_SETTINGS

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _rules(*guards: str) -> list:
    return guard_recompiles(*guards, function="step")


# -- a parameter's requires_grad (a frozen copy through one compiled function) -----------------------------------

def test_a_parameters_requires_grad_guard_is_a_frozen_copy_not_a_value_to_pass_as_a_tensor():
    (r,) = _rules("tensor 'm._modules['fc1']._parameters['bias']' requires_grad mismatch. expected requires_grad=1. "
                  "Guard failed on a parameter, consider using torch._dynamo.config.force_parameter_static_shapes "
                  "= False to allow dynamism on parameters.")
    assert r.fix_rule == "dynamo_parameter_requires_grad", r.fix_rule
    assert r.fix.startswith("expected") and "one graph per setting" in r.fix
    assert "as a tensor" not in r.fix and "force_parameter_static_shapes" not in r.fix


@pytest.mark.parametrize("guard", ["tensor 'x' requires_grad mismatch. expected requires_grad=0",
                                   "tensor 'L['x']' requires_grad mismatch. expected requires_grad=0"])
def test_an_inputs_requires_grad_keeps_its_row(guard):
    (r,) = _rules(guard)
    assert r.fix_rule == "dynamo_requires_grad", (guard, r.fix_rule)


def test_a_quoted_parameter_name_is_read_whole_in_a_dtype_guard():
    (r,) = _rules("tensor 'm._modules['emb']._parameters['weight']' dtype mismatch. expected Float, actual BFloat16")
    assert r.kind == "dtype" and r.subject == "m._modules['emb']._parameters['weight']"


def test_the_frozen_teacher_run():
    doc, code = _explain("d12_twin_models")
    assert [r["fix_rule"] for r in doc["dynamo"]["recompiles"]] == ["dynamo_parameter_requires_grad"]
    assert code == 0 and "as a tensor" not in doc["headline"]["fix"]


# -- a torch-wide setting in GLOBAL_STATE -------------------------------------------------------------------------

@pytest.mark.parametrize("what", sorted(GLOBAL_SETTINGS))
def test_each_global_setting_is_told_with_the_call_that_changes_it(what):
    (r,) = _rules(f"GLOBAL_STATE changed: {what} ")
    assert r.fix_rule == "dynamo_global_setting", (what, r.fix_rule)
    assert GLOBAL_SETTINGS[what] in r.fix and "as a tensor" not in r.fix


@pytest.mark.parametrize("guard, rule", [("GLOBAL_STATE changed: grad_mode ", "dynamo_mode"),
                                         ("GLOBAL_STATE changed: autocast ", "dynamo_autocast"),
                                         ("GLOBAL_STATE changed: something_new ", "dynamo_guard")])
def test_grad_mode_autocast_and_unknown_global_state_keep_their_rows(guard, rule):
    (r,) = _rules(guard)
    assert r.fix_rule == rule, (guard, r.fix_rule)


def test_the_thread_count_run():
    doc, code = _explain("d12_num_threads")
    assert [r["fix_rule"] for r in doc["dynamo"]["recompiles"]] == ["dynamo_global_setting"]
    assert "torch.set_num_threads" in doc["headline"]["fix"] and code == 1


# -- the decision's line, from the source on disk -----------------------------------------------------------------

@pytest.mark.parametrize("name, line", [("d12_twin_models", 35), ("d12_num_threads", 18)])
def test_the_decision_line_is_read_from_the_source_when_it_is_on_disk(name, line):
    doc, _ = _explain(name, "--source-map", f"/home/user/project={SCENARIOS}")
    (r,) = doc["dynamo"]["recompiles"]
    assert r["located"] == "decision" and r["location"]["line"] == line, r["location"]
    assert r["location"]["function"] is None


def test_the_decision_line_says_where_it_was_read():
    result = cli("explain-recompile", str(SCENARIOS / "d12_num_threads"), "--source-map",
                 f"/home/user/project={SCENARIOS}", codes=(1,))
    assert "d12_num_threads.py:18" in result.stdout and "read from your source" in result.stdout
    assert "names only library code here" not in result.stdout


@pytest.mark.parametrize("name", ["d12_twin_models", "d12_num_threads", "dyn_requires_grad"])
def test_without_the_source_the_logs_line_stays(name):
    doc, _ = _explain(name)
    assert all(r["located"] != "decision" for r in doc["dynamo"]["recompiles"])


# -- a graph break raised under fullgraph=True --------------------------------------------------------------------

def test_a_raised_break_is_read_from_the_traceback():
    log = read_dynamo_log(str(SCENARIOS / "d12_fullgraph_item" / "stderr.log"))
    (b,) = log.graph_breaks
    assert b.raised and b.at.line == 17 and b.call.line == 27 and "Tensor.item()" in b.reason


def test_the_fullgraph_run_is_told_from_dynamos_log_alone():
    doc, _ = _explain("d12_fullgraph_item")
    head = doc["headline"]
    assert head["kind"] == "graph_break" and head["location"]["line"] == 17
    assert "torch.where" in head["fix"] and "fullgraph=True" in head["fix"]
    (b,) = doc["dynamo"]["graph_breaks"]
    assert b["raised"] and b["fix_rule"] == "dynamo_graph_break_raised_item" and b["graphs"] == 0
    assert "raised at the first call" in doc["summary"]


def test_a_folder_with_neither_dump_nor_dynamo_log_is_still_an_error(tmp_path):
    shutil.copy(SCENARIOS / "d12_fullgraph_item" / "stdout.log", tmp_path / "stdout.log")
    result = cli("explain-recompile", str(tmp_path), codes=(2,))
    assert "no dump here" in result.output


def test_a_python_traceback_that_is_not_dynamos_is_no_break(tmp_path):
    log = tmp_path / "stderr.log"
    log.write_text("Traceback (most recent call last):\n  File \"/w/train.py\", line 3, in <module>\n"
                   "    f()\nValueError: bad\n[0/0] [__graph_breaks] nothing\n")
    assert read_dynamo_log(str(log)).graph_breaks == []
