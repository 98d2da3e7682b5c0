"""Dynamo round 30 (docs/accuracy.md): a compilation the PT_XLA_DEBUG log never announced (anomaly mode's NaN
checks) no longer crashes the run's story, and anomaly mode's cut is told at the user's set_detect_anomaly line;
a recompilation whose log names no failed guard is told as what it most often is, a second backend, and named
from the source when two torch.compile calls of the function give two backends; fullgraph=True on a branch on a
tensor, and an input gradient taken inside a compiled function, get fixes of their own. Each checked on the run
and against the look-alikes that share its evidence."""

from __future__ import annotations

from explain_helpers import DYNAMO_SCENARIOS
from explain_helpers import explain_scenario as _explain
from explain_helpers import guard_recompiles

from hlodiff.dumps.python_calls import compiles_of_function
from hlodiff.explain.dynamo_break_calls import break_call_facts
from hlodiff.dumps.dynamo_log import GraphBreak

_SOURCES = ("--source-map", f"/home/user/project={DYNAMO_SCENARIOS}")


def _head(name: str, *extra: str) -> tuple[dict, int]:
    doc, code = _explain(name, *extra)
    return doc["headline"], code


def test_anomaly_mode_on_debug_steps_is_told_at_the_setting_not_a_crash():
    head, code = _head("d30_anomaly_debug_steps", *_SOURCES)  # was: internal error (a record without frames)
    assert code == 1 and head["kind"] == "partial" and "anomaly" in head["fix"]
    assert head["location"]["line"] == 19  # torch.autograd.set_detect_anomaly(...), read from the source


def test_anomaly_mode_without_the_source_keeps_its_story_and_no_line():
    head, code = _head("d30_anomaly_debug_steps")
    assert code == 1 and "anomaly" in head["fix"] and head["location"] is None


def test_no_failed_guard_names_the_second_backend_and_its_call():
    head, code = _head("d30_backend_check_eval", *_SOURCES)
    assert head["kind"] == "guard" and head["location"]["line"] == 28  # was :17, the def, "a guard failed ()"
    assert "backend='aot_eager' at line 22" in head["fix"] and "backend='openxla' at line 21" in head["fix"]


def test_no_failed_guard_without_the_source_says_what_to_look_for():
    head, _ = _head("d30_backend_check_eval")
    assert "names no failed guard" in head["fix"] and "backend" in head["fix"]
    assert "a guard failed ()" not in head["fix"]


def test_an_empty_guard_is_no_failed_guard_and_any_other_text_is_not():
    (empty,) = guard_recompiles("")
    assert "no_failed_guard" in empty.facts and empty.fix_rule == "dynamo_no_failed_guard"
    (other,) = guard_recompiles("___check_obj_id(L['x'], 1234)")
    assert "no_failed_guard" not in other.facts


def test_compiles_of_one_function_are_read_with_their_backends(tmp_path):
    src = tmp_path / "train.py"
    src.write_text("import torch\n"
                   "def f(x):\n    return x\n"
                   "a = torch.compile(f, backend='openxla')\n"
                   "b = torch.compile(f, backend='aot_eager')\n"
                   "c = torch.compile(g, backend='eager')\n"
                   "torch.compile(f)\n")
    assert compiles_of_function(str(src), "f") == [(4, "openxla", ("a",)), (5, "aot_eager", ("b",)), (7, None, ())]
    assert compiles_of_function(str(tmp_path / "gone.py"), "f") is None


def test_fullgraph_on_a_tensor_branch_asks_for_torch_where_and_item_keeps_its_row():
    head, code = _head("d30_fullgraph_any_branch", *_SOURCES)
    assert head["kind"] == "graph_break" and head["location"]["line"] == 16
    assert "torch.where" in head["fix"] and ".item()" not in head["fix"]
    item, _ = _head("d12_fullgraph_item", *_SOURCES)  # fullgraph on `.item()`: its own row, unchanged
    assert "`.item()` returns a Python number" in item["fix"]


def test_autograd_inside_a_compiled_function_asks_to_take_the_gradient_outside():
    head, code = _head("d30_saliency_autograd_grad", *_SOURCES)
    assert code == 0 and head["kind"] == "graph_break" and head["location"]["line"] == 16
    assert "torch.func" in head["fix"] and "outside the compiled function" in head["fix"]


def _break(reason: str, explanation: str = "") -> GraphBreak:
    return GraphBreak(compile_id="0/0", reason=reason, explanation=explanation, at=None, frames=(), codes=())


def test_the_autograd_facts_come_from_their_own_reasons_only():
    # requires_grad_() alone is its own fact (thirteenth stop): a gradient taken needs autograd.grad's break too
    assert break_call_facts(_break("Unsupported Tensor.requires_grad_() call")) == {"op:requires_grad_inside"}
    grad = ("Dynamo developers have intentionally marked that the function `grad` in file "
            "`/usr/lib/python3.11/site-packages/torch/autograd/__init__.py` should not be traced.")
    assert "op:autograd_inside" in break_call_facts(_break("Attempted to call function marked as skipped", grad))
    seed = grad.replace("`grad`", "`manual_seed`").replace("autograd/__init__.py", "random.py")
    assert break_call_facts(_break("Attempted to call function marked as skipped", seed)) == {"op:rng_seed"}
    elsewhere = grad.replace("torch/autograd/__init__.py", "mylib/optim.py")  # a `grad` of another library
    assert "op:autograd_inside" not in break_call_facts(_break("Attempted to call function marked as skipped",
                                                               elsewhere))
