"""What round 26 (docs/accuracy.md, "Round 26") changed, shown on the real run it was made for and on the real
look-alikes that share its evidence.

- ``carried_total_restart`` for several running values at once: a torchmetrics-style metric keeps a correct count
  and a total (tp/fp/fn...), all restarted by ``reset()`` from fresh ``torch.zeros`` and carried from step to step.
  The first step after a reset bakes each start value as a constant 0, the next ones read each previous result as
  device data summed into a scalar output: expected, as for a single running total. A learning rate, a loss weight
  or a smoothing of 0 (multiplied into the step, made in an optimizer) shares the "0 baked here, data there"
  evidence and keeps its own row, one scalar or several.

Inputs: real captures only (fixtures/scenarios/<engine>/<name>/, fixtures/<engine>/<fixture>/)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_capture as _doc, fix_rule_set as _rules
from helpers import capture_argv as _argv, cli


def test_a_metrics_several_running_values_restarted_each_epoch_are_expected():
    doc = _doc("scenarios/torch_xla/r26_tx_metric_reset_control")
    head = doc["headline"]
    assert head is not None and head["kind"] == "constant"
    assert head["fix"].startswith("expected: a running value")
    assert "0 or 1" not in head["fix"] and "one-element tensor" not in head["fix"]
    argv = _argv("scenarios/torch_xla/r26_tx_metric_reset_control")
    assert cli("explain-recompile", *argv, codes=(0, 1)).exit_code == 0


@pytest.mark.parametrize("path", [
    "scenarios/torch_xla/scalar_tensors_collide", "scenarios/torch_xla/tensor_scalars_control",
    "scenarios/torch_xla/grl_lambda_zero", "scenarios/torch_xla/warmup_from_zero", "scenarios/torch_xla/wd_from_zero",
    "scenarios/torch_xla/kl_beta_anneal", "scenarios/torch_xla/rev15_tx_lossscale", "torch_xla/lr_zero_one",
    "scenarios/torch_xla/label_smoothing_on",
])
def test_zeros_multiplied_into_the_step_are_no_running_values(path):
    """Several scalars of 0 baked where other steps pass data, multiplied (weights, rates), not summed out."""
    assert "carried_total_restart" not in _rules(_doc(path))


def test_a_dict_of_sums_that_changes_its_keys_is_not_told_as_restarted():
    """per_class_dict: one masked sum per class present, kept in a dict: some steps add sums the other graph lacks.
    A single new sum reads like a total's first step (a recompilation told so before round 26 too); the story that
    heads stays the changing set of sums, never expected."""
    head = _doc("scenarios/torch_xla/per_class_dict")["headline"]
    assert head is not None and not head["fix"].startswith("expected")
