"""Dynamo round 17 (docs/accuracy.md): guards and graph breaks no earlier round read: the torch function mode stack
(a ``with torch.device(...)`` block), a ``torch.dtype`` argument, a module attribute None at the first compile (a
table built lazily in forward), a value a graph break's eager code hands to the resume function (a clock read), a
compiled optimizer step whose state fills on its first call, and the training step itself inside the compiled
function. Each on the guard as Dynamo prints it, beside the look-alikes that keep their rows, and on the real runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_guards import _failed_guard
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.explain.dynamo_log_findings import breaks_of, recompiles_of
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _recompile(guard: str, function: str = "forward", breaks: list[GraphBreak] | None = None):
    compiles = [DynamoCompile("1/0", function), DynamoCompile("1/1", function, failures=[GuardFailure("1/0", guard)])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles, graph_breaks=breaks or []))
    return r


def _explain(name: str) -> tuple[dict, int]:
    result = cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


@pytest.mark.parametrize("guard, rule", [
    # a `with torch.device(...)` block on some calls: the mode stack, named with the device context
    ("___check_torch_function_mode_stack()", "dynamo_function_mode"),
    # look-alike: grad mode is a mode too, and stays one graph per mode
    ("GLOBAL_STATE changed: grad_mode ", "dynamo_mode"),
    # a torch.dtype argument guarded by value: expected per dtype, never a number to pass as a tensor
    ("out_dtype == torch.float32", "dynamo_python_dtype"),
    ("self.compute_dtype == torch.bfloat16", "dynamo_python_dtype"),
    # look-alikes: a float and a string keep their rows
    ("scale == 0.5", "dynamo_python_float_once"),  # one failed guard of a float: review 22's row
    ("mode == 'train'", "dynamo_python_string"),
    # an attribute of the compiled module None at the first compile (built lazily), or reset to None
    ("self._modules['rot'].cos is None", "dynamo_attribute_lazy"),
    ("L['self'].cache is None", "dynamo_attribute_lazy"),
    ("self._modules['rot'].cos is not None", "dynamo_attribute_cleared"),
    # look-alikes: an argument left out on some calls, and a parameter's gradient, keep theirs
    ("mask is None", "dynamo_optional_none"),
    ("self.param_groups[0]['params'][4].grad is None", "dynamo_grad_none"),
    # a compiled optimizer step's state, empty at its first call
    ("len(self.state[list(dict.keys(self.state))[0]]) != 0", "dynamo_optimizer_state_warmup"),
    # look-alike: the number of param groups (opt.add_param_group) keeps its row
    ("len(self.param_groups) == 1", "dynamo_optimizer_groups"),
])
def test_round_17_guards_and_their_look_alikes(guard, rule):
    r = _recompile(guard, function="step" if "self.state" in guard or "param_groups" in guard else "forward")
    assert r.fix_rule == rule, (guard, r.fix_rule)
    if rule not in ("dynamo_python_value", "dynamo_python_float_once"):  # the numbers' rows may say "a tensor"
        assert "as a tensor" not in r.fix and "torch.tensor(" not in r.fix, (guard, r.fix)


def test_the_device_context_is_named_and_no_grad_mode_or_dtype():
    r = _recompile("___check_torch_function_mode_stack()")
    assert r.kind == "mode" and "torch.device" in r.fix and "device=" in r.fix
    assert "grad" not in r.fix and "dtype" not in r.fix


def test_a_dtype_argument_is_expected_and_cast_outside():
    from hlodiff.diff.fix_stance import FixStance, stance_of_rule

    r = _recompile("out_dtype == torch.float32")
    assert stance_of_rule(r.fix_rule) is FixStance.EXPECTED and "cast the result outside" in r.fix


def test_the_optimizer_state_is_the_optimizer_s_warm_up():
    from hlodiff.diff.fix_stance import FixStance, stance_of_rule

    r = _recompile("len(self.state[list(dict.keys(self.state))[0]]) != 0", function="step")
    assert stance_of_rule(r.fix_rule) is FixStance.WARMUP and "momentum" in r.fix


_CLOCK = GraphBreak("0/0", "Attempted to call function marked as skipped",
                    "Dynamo does not know how to trace the builtin `time.perf_counter.` This function is either ...",
                    at=SourceFrame("/p/t.py", 23, "forward"), call=SourceFrame("/p/t.py", 34, "<module>"))


def test_a_value_a_graph_break_hands_to_the_resume_function_is_told_by_the_call_that_made_it():
    r = _recompile("___stack0 == 752.666002206", function="torch_dynamo_resume_in_forward_at_23", breaks=[_CLOCK])
    assert r.fix_rule == "dynamo_resume_stack_value", r.fix_rule
    assert "`time.perf_counter` at t.py:23" in r.fix and "out of the compiled function" in r.fix
    assert "as a tensor" not in r.fix and "expected" not in r.fix


def test_a_stack_value_without_the_break_before_it_keeps_the_python_value_row():
    # the break at another line, or an ordinary function's name: no resume function's stack (a float whose guard
    # failed once: the plain number's once row, review 22)
    assert _recompile("___stack0 == 752.666002206", function="torch_dynamo_resume_in_forward_at_40",
                      breaks=[_CLOCK]).fix_rule == "dynamo_python_float_once"
    assert _recompile("___stack0 == 752.666002206", function="forward",
                      breaks=[_CLOCK]).fix_rule == "dynamo_python_float_once"


def _break(reason: str, explanation: str, line: int = 22, file: str = "/p/t.py") -> GraphBreak:
    return GraphBreak("0/0", reason, explanation, at=SourceFrame(file, line, "train_step"),
                      call=SourceFrame("/p/t.py", 30, "<module>"))


@pytest.mark.parametrize("brk, rule", [
    (_break("Unsupported Tensor.backward() call", "Dynamo currently does not support tracing `Tensor.backward()`."),
     "dynamo_graph_break_train_step"),
    (_break("Attempted to inline function marked as skipped",
            "Dynamo developers have intentionally marked that the function `Optimizer.zero_grad` should not be "
            "traced."), "dynamo_graph_break_train_step"),
    # look-alikes: another skipped function, a print, and torch's own break inside a compiled optimizer step
    (_break("Attempted to call function marked as skipped", _CLOCK.explanation), "dynamo_graph_break"),
    (_break("Failed to trace builtin operator", "Dynamo does not know how to trace builtin operator `print`"),
     "dynamo_graph_break_print"),
    (_break("Call to `torch._dynamo.graph_break()`", "User-inserted graph break. Message: None", line=81,
            file="/usr/lib/python3.11/site-packages/torch/optim/optimizer.py"), "dynamo_graph_break_library"),
])
def test_the_training_step_inside_the_compiled_function_and_its_look_alikes(brk, rule):
    (b,) = breaks_of(DynamoLog("x", "text", [DynamoCompile("0/0", "train_step")], graph_breaks=[brk]))
    assert b.fix_rule == rule, (brk.reason, b.fix_rule)
    if rule == "dynamo_graph_break_train_step":
        assert "backward" in b.fix and "outside the compiled function" in b.fix and "optimizer.py" not in b.fix


def test_a_guard_traced_from_another_line_is_the_same_guard():
    """SGD's `grad is not None` guards point at sgd.py:358 on the first step and :361 after: not a failure; what
    the later tree guards inside the optimizer's state says the state filled (as the recompiles channel prints)."""
    before = [("NOT_NONE", "L['self'].param_groups[0]['params'][0].grad is not None  # buf = grad.detach().clone()"
                           "  # optim/sgd.py:358 in _single_tensor_sgd")]
    after = [("NOT_NONE", "L['self'].param_groups[0]['params'][0].grad is not None  # buf.mul_(momentum)"
                          "  # optim/sgd.py:361 in _single_tensor_sgd"),
             ("ID_MATCH", "___check_obj_id(L['self'].state[list(dict.keys(L['self'].state))[0]]['momentum_buffer'], "
                          "1401)  # has_sparse_grad = self._init_group(  # optim/sgd.py:123 in step")]
    assert _failed_guard(before, after) == "len(self.state[list(dict.keys(self.state))[0]]) != 0"
    assert _failed_guard(before, after[:1]) is None


@pytest.mark.parametrize("name, rule, codes", [
    ("d17_device_ctx", "dynamo_function_mode", (0, 1)),
    ("d17_dtype_arg", "dynamo_python_dtype", (0,)),
    ("d17_rope_lazy_cache", "dynamo_attribute_lazy", (1,)),
    ("d17_perf_counter", "dynamo_resume_stack_value", (1,)),
    ("d17_sgd_momentum_control", "dynamo_optimizer_state_warmup", (0,)),  # +dynamo: recovered from the trees
])
def test_the_round_s_runs_are_told_by_their_rows(name, rule, codes):
    doc, code = _explain(name)
    assert doc["dynamo"]["recompiles"][0]["fix_rule"] == rule and code in codes
    assert "as a tensor" not in json.dumps(doc["dynamo"]["recompiles"][0])


def test_the_compiled_train_step_heads_with_its_break_and_the_controls_with_nothing():
    doc, code = _explain("d17_train_step_backward")
    assert doc["headline"]["kind"] == "graph_break" and code == 0
    assert [b["fix_rule"] for b in doc["dynamo"]["graph_breaks"]][:2] == ["dynamo_graph_break_train_step"] * 2
    for control in ("d17_rope_buffer_control", "d17_timer_outside_control"):
        doc, code = _explain(control)
        assert doc["headline"] is None and code == 0, control
    doc, code = _explain("d17_sgd_momentum_control")  # torch's optimizer warm-up, told as expected: exit 0
    assert doc["headline"]["fix"].startswith("expected warm-up") and code == 0


@pytest.mark.parametrize("guard", ["GLOBAL_STATE changed: something_new ", "2 <= L['n']",
                                   "___check_obj_id(G['__builtins_dict___0']['iter'], 94093)"])
def test_a_guard_no_row_reads_is_told_as_seen_with_what_to_check_never_a_tensor(guard):
    r = _recompile(guard)
    assert r.fix_rule == "dynamo_guard" and "as a tensor" not in r.fix
    assert "find what that guard checks" in r.fix and "TORCH_LOGS=guards" in r.fix
