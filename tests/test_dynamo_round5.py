"""Dynamo, round 5 (docs/accuracy.md): the guard forms of the blind round (a tensor argument's type, an inference
tensor's dispatch keys, an object of another class, a compiled optimizer's groups, sizes past the recompile limit)
and the first-step warm-up of tensors made before the loop. Each row is checked on the real run whose evidence
chooses it and on its look-alikes (tests/test_fix_rules.py checks every row's evidence on its own)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_status as _explain
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.dumps.dynamo_guards import _failed_guard
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.explain.dynamo_log_findings import recompiles_of

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


_TYPE = "expected type of 'b' to be a tensor type, ' but found <class 'torch.Tensor'>"
_KEYS = ("tensor 'args[0]' dispatch key set mismatch. expected DispatchKeySet(XLA, BackendSelect, Functionalize, "
         "ADInplaceOrView, AutogradXLA), actual DispatchKeySet(XLA, BackendSelect, Functionalize, ADInplaceOrView)")


@pytest.mark.parametrize("guard, kind, facts, rule", [
    (_TYPE, "guard", {"tensor_type"}, "dynamo_tensor_type"),
    # review 24, F3: None where a tensor came first is an optional argument, its own row
    ("expected type of 'teacher_logits' to be a tensor type, ' but found <class 'NoneType'>", "guard",
     {"tensor_type", "optional_none"}, "dynamo_optional_none"),
    (_KEYS, "guard", {"inference_tensor"}, "dynamo_inference_tensor"),
    ("___check_type_id(head, 94578765570992)", "guard", {"object_type"}, "dynamo_object_type"),
    ("len(self.param_groups) == 1", "guard", {"container_length", "optimizer_groups"}, "dynamo_optimizer_groups"),
    # look-alikes: a list of crops that changes length, a dispatch key set that differs in another key, requires_grad
    ("len(crops) == 2", "guard", {"container_length"}, "dynamo_container_length"),
    ("tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, AutogradCPU), actual "
     "DispatchKeySet(CPU, Python, AutogradCPU)", "guard", set(), "dynamo_guard"),
    ("tensor 'x' requires_grad mismatch. expected requires_grad=0", "guard", {"requires_grad"},
     "dynamo_requires_grad"),
])
def test_guard_forms_of_round_5_and_their_look_alikes(guard, kind, facts, rule):
    log = DynamoLog("x", "text", [DynamoCompile("0/0"), DynamoCompile("0/1", "f", failures=[GuardFailure("0/0", guard)])])
    (r,) = recompiles_of(log)
    assert r.kind == kind and facts <= r.facts and r.fix_rule == rule, (r.kind, r.facts, r.fix_rule)
    for fact in ("tensor_type", "optional_none", "inference_tensor", "object_type", "optimizer_groups"):
        assert (fact in r.facts) == (fact in facts), fact


@pytest.mark.parametrize("name, rule, status, words", [
    ("dyn_maml_param_type", "dynamo_tensor_type", 1, "an nn.Parameter or another tensor subclass"),
    ("dyn_inference_tensors", "dynamo_inference_tensor", 1, "torch.inference_mode"),
    ("dyn_head_per_task", "dynamo_object_type", 0, "once per class"),
    ("dyn_unfreeze_group", "dynamo_optimizer_groups", 0, "parameter groups"),
    ("dyn_static_lengths", "dynamo_shape_limit", 1, "past Dynamo's recompile limit (8)"),
    # look-alikes: sizes under the limit keep dynamo_shape; a compiled opt.step whose lr changes stays a number
    ("dyn_auto_dynamic", "dynamo_shape", 1, "pad or bucket"),
    ("dyn_sched_lr", "dynamo_python_value_lr", 1, "pass it as a tensor"),
    ("dyn_list_len", "dynamo_container_length", 1, "fixed number of items"),
])
def test_each_round_5_row_heads_its_real_run_and_not_its_look_alikes(name, rule, status, words):
    doc, code = _explain(SCENARIOS / name)
    head = doc["dynamo"]["headline"]
    assert code == status and head["fix_rule"] == rule and words in doc["headline"]["fix"], doc["summary"]
    assert (rule in EXPECTED) == (status == 0)


def test_sizes_past_the_limit_say_pad_never_mark_dynamic_or_a_higher_limit():
    doc, _ = _explain(SCENARIOS / "dyn_static_lengths")
    fix = doc["headline"]["fix"]
    assert "mark_dynamic" not in fix and "cache_size_limit" not in fix and "pad or bucket" in fix


def test_a_class_change_under_plus_dynamo_is_the_type_guard_not_an_old_attribute_s_tensor():
    """TORCH_LOGS=+dynamo prints guard trees only: when the head's class changes, its type guard failed first, not
    the check_tensor of the old class's bias (which the new class does not have)."""
    before = [("TENSOR_MATCH", "check_tensor(L['head']._parameters['bias'], Parameter, DispatchKeySet(XLA), "
                               "torch.float32, device=0, requires_grad=True, size=[4], stride=[1])  # f  # a.py:3 in g"),
              ("TYPE_MATCH", "___check_type_id(L['head'], 111)  # return head(x)  # a.py:20 in task_loss")]
    after = [("TYPE_MATCH", "___check_type_id(L['head'], 222)  # return head(x)  # a.py:20 in task_loss")]
    assert _failed_guard(before, after).startswith("___check_type_id(head, 111)")
    # the same class (same id) with a tensor that changed: the tensor's guard stays the one
    after = [("TYPE_MATCH", "___check_type_id(L['head'], 111)  # return head(x)  # a.py:20 in task_loss"),
             ("TENSOR_MATCH", "check_tensor(L['head']._parameters['bias'], Parameter, DispatchKeySet(XLA), "
                              "torch.float32, device=0, requires_grad=True, size=[8], stride=[1])  # f  # a.py:3 in g")]
    assert _failed_guard(before, after).startswith("tensor 'L['head']._parameters['bias']' size mismatch")


def test_a_library_step_s_recompile_is_told_at_the_user_line_its_graph_breaks_share():
    """torch.compile(opt.step): the guard names torch's sgd.py:118; the graph breaks' tracebacks name the user's
    call, and an expected recompilation heads over a graph break inside the optimizer."""
    doc, code = _explain(SCENARIOS / "dyn_unfreeze_group")
    where = doc["headline"]["location"]
    assert code == 0 and doc["headline"]["kind"] == "guard"
    assert where["file"].endswith("dyn_unfreeze_group.py") and where["line"] in (20, 31)


def test_tensors_made_before_the_loop_and_computed_by_the_first_step_are_a_warm_up():
    """dyn_ema_global_control: copy.deepcopy of a model on the device leaves pending clones the first step's sync
    computes: the second step drops those outputs, then every step is the same. Expected, exit 0 (not 'a value
    kept on some steps only'). Round 7: that first step is the first compiled call's (the bridge compiled before
    it), so the warm-up no longer heads the run: no headline, as the control's truth wants."""
    doc, code = _explain(SCENARIOS / "dyn_ema_global_control")
    assert code == 0 and "outputs_made_before_loop_unread" in EXPECTED and doc["headline"] is None
    (r,) = doc["recompilations"]
    assert r["causes"][0]["fix"].startswith("expected warm-up: the first step's graph also computed tensors")
