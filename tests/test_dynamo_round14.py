"""Dynamo round 14 (docs/accuracy.md): Dynamo's log captured with the `guards` channel into a file
(`TORCH_LOGS=recompiles,graph_breaks,guards`, `TORCH_LOGS_OUT`): a guard tree is a compile even when nothing
recompiled, and it names the line a recompiles record leaves out; a module's parameter in another dtype on some
calls (a bfloat16 copy of the model through one compiled function). Checked on the logs as Dynamo writes them,
their look-alikes and the real runs."""

from __future__ import annotations

import pytest

from explain_helpers import explain_scenario as _explain, guard_recompiles
from helpers import FIXTURES
from hlodiff.dumps.dynamo_read import read_dynamo_log

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_P = "V1127 17:11:14.391000 12155 torch/_dynamo/guards.py:3404] "


def _tree(cid: str, size: str) -> list[str]:
    return [f"{_P}[{cid}] [__guards] GUARDS:",
            f"{_P}[{cid}] [__guards] TREE_GUARD_MANAGER:",
            f"{_P}[{cid}] [__guards] +- RootGuardManager",
            f"{_P}[{cid}] [__guards] | +- TENSOR_MATCH: check_tensor(L['boxes'], Tensor, DispatchKeySet(XLA, "
            f"BackendSelect), torch.float32, device=0, requires_grad=False, size=[{size}, 4], stride=[4, 1])  "
            f"# pred = head(feats)[: boxes.shape[0]]  # loss.py:17 in box_loss",
            f"{_P}[{cid}] [__guards] | +- GLOBAL_STATE: ___check_global_state()",
            f"{_P}[{cid}] [__guards] Guard eval latency = 40.1 us"]


def _write(tmp_path, lines: list[str]):
    path = tmp_path / "torch_logs.txt"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _rules(*guards: str) -> list:
    return guard_recompiles(*guards, function="step")


# -- the guards channel: a tree is a compile ---------------------------------------------------------------------

def test_a_log_of_one_guard_tree_is_dynamo_compiling_once_not_a_foreign_file(tmp_path):
    warnings: list = []
    log = read_dynamo_log(_write(tmp_path, _tree("0/0", "3")), warnings)
    assert [c.compile_id for c in log.compiles] == ["0/0"] and not log.recompiles
    assert not warnings, warnings


def test_two_trees_without_a_recompiles_record_give_the_failed_guard(tmp_path):
    log = read_dynamo_log(_write(tmp_path, _tree("0/0", "3") + _tree("0/1", "0")), [])
    (again,) = log.recompiles
    assert [f.guard for f in again.failures] == ["tensor 'boxes' size mismatch at index 0. expected 3, actual 0"]


def test_a_recompiles_record_without_a_line_takes_the_trees_line(tmp_path):
    record = [f"{_P}[0/1] [__recompiles] Recompiling function box_loss in loss.py:15",
              f"{_P}[0/1] [__recompiles]     triggered by the following guard failure(s):",
              f"{_P}[0/1] [__recompiles]     - 0/0: tensor 'boxes' size mismatch at index 0. expected 3, actual 0"]
    log = read_dynamo_log(_write(tmp_path, _tree("0/0", "3") + record + _tree("0/1", "0")), [])
    (again,) = log.recompiles
    (failure,) = again.failures
    assert failure.guard == "tensor 'boxes' size mismatch at index 0. expected 3, actual 0"
    assert failure.source is not None and (failure.source.file, failure.source.line) == ("loss.py", 17)


def test_a_recompiles_record_of_another_tensor_is_not_given_the_trees_line(tmp_path):
    record = [f"{_P}[0/1] [__recompiles] Recompiling function box_loss in loss.py:15",
              f"{_P}[0/1] [__recompiles]     triggered by the following guard failure(s):",
              f"{_P}[0/1] [__recompiles]     - 0/0: tensor 'feats' size mismatch at index 0. expected 8, actual 4"]
    log = read_dynamo_log(_write(tmp_path, _tree("0/0", "3") + record), [])
    (failure,) = log.recompiles[0].failures
    assert failure.source is None


def test_the_late_hook_control_is_quiet():
    doc, code = _explain("d14_late_hook_control")
    assert doc["headline"] is None and code == 0
    assert not [w for w in doc.get("warnings", []) if "no Dynamo recompilation" in str(w)]


def test_the_empty_boxes_run_heads_at_the_boxes_use():
    doc, code = _explain("d14_empty_boxes")
    assert doc["headline"]["kind"] == "shape" and doc["headline"]["location"]["line"] == 17
    assert "pad" in doc["headline"]["fix"] and code == 1


# -- a module's parameter in another dtype --------------------------------------------------------------------------

def test_a_parameters_dtype_guard_is_a_copy_of_the_model_not_an_input_to_cast():
    (r,) = _rules("tensor 'm._modules['0']._parameters['bias']' dtype mismatch. expected Float, actual BFloat16. "
                  "Guard failed on a parameter, consider using torch._dynamo.config.force_parameter_static_shapes "
                  "= False to allow dynamism on parameters.")
    assert r.fix_rule == "dynamo_parameter_dtype", r.fix_rule
    assert r.fix.startswith("expected") and "one graph per model dtype" in r.fix
    assert "cast where it is made" not in r.fix and "force_parameter_static_shapes" not in r.fix


@pytest.mark.parametrize("guard, rule", [
    ("tensor 'x' dtype mismatch. expected Float, actual Double", "dynamo_dtype"),
    ("tensor 'L['ids']' dtype mismatch. expected Long, actual Int", "dynamo_dtype"),
    ("tensor 'm._modules['fc1']._parameters['bias']' requires_grad mismatch. expected requires_grad=1",
     "dynamo_parameter_requires_grad"),
])
def test_look_alikes_keep_their_rows(guard, rule):
    (r,) = _rules(guard)
    assert r.fix_rule == rule, (guard, r.fix_rule)


def test_the_bf16_copy_run_is_expected():
    doc, code = _explain(str(SCENARIOS / "d14_bf16_eval_copy" / "record"))
    assert [r["fix_rule"] for r in doc["dynamo"]["recompiles"]] == ["dynamo_parameter_dtype"]
    assert code == 0 and "cast where it is made" not in doc["headline"]["fix"]


def test_an_inputs_dtype_run_keeps_its_advice():
    doc, code = _explain("dyn_numpy_float64")
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_dtype"} and code == 1


# -- an int whose guard failed once: another value, or the same number as a float ---------------------------------

def test_an_int_guard_failing_once_names_the_type_as_well_as_the_value():
    (r,) = _rules("temperature == 1")
    assert r.fix_rule == "dynamo_python_int_once", r.fix_rule
    assert "type" in r.fix and "float(" in r.fix and "as a tensor" in r.fix


@pytest.mark.parametrize("guards, rule", [
    (("accum == 1", "accum == 2"), "dynamo_python_value"),      # an int changing: its guard fails every new value
    (("temperature == 1.0",), "dynamo_python_float_once"),      # a float: no int/float pair; changed once (review 22 F4)
    (("temperature == 1.0", "temperature == 0.5"), "dynamo_python_value"),  # a float changing: told as such
    (("keep_attn == False",), "dynamo_python_flag"),            # a flag keeps its row
])
def test_look_alikes_of_the_int_once_keep_their_rows(guards, rule):
    assert {r.fix_rule for r in _rules(*guards)} == {rule}


def test_the_int_then_float_run():
    doc, code = _explain("d14_int_float_temp")
    assert [r["fix_rule"] for r in doc["dynamo"]["recompiles"]] == ["dynamo_python_int_once"]
    assert "float(" in doc["headline"]["fix"] and code == 1


def test_a_cast_of_the_model_is_found_by_its_dtype_argument(tmp_path):
    from hlodiff.dumps.python_calls import calls_named

    src = tmp_path / "t.py"
    src.write_text("x = x.to(w.dtype)\nfast = net.to(torch.bfloat16)\nslow = net.to(dtype=torch.float16)\n"
                   "h = net.half()\nx = x.to(dev)\n")
    assert calls_named(str(src), ("half", "to(bfloat16)", "to(float16)")) == [2, 3, 4]
    assert calls_named(str(src), ("requires_grad_",)) == []


def test_with_the_source_the_bf16_copy_heads_at_its_cast():
    doc, _ = _explain(str(SCENARIOS / "d14_bf16_eval_copy" / "record"), "--source-map",
                      f"/home/user/project={SCENARIOS}")
    (r,) = doc["dynamo"]["recompiles"]
    assert r["located"] == "decision" and r["location"]["line"] == 29
    doc, _ = _explain(str(SCENARIOS / "d14_bf16_eval_copy" / "record"))
    assert doc["dynamo"]["recompiles"][0]["located"] != "decision"
