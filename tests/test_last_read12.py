"""The last read of the twelfth stop (docs/accuracy.md, "The last read"): rules whose evidence test let a
look-alike get their confident fix, each narrowed and shown on the look-alike's evidence.

- ``inputs_trained_from_step`` now needs the fact ``trains`` (:func:`hlodiff.explain.fix_evidence.
  trains_new_tensors`): an EMA of the weights begun after a warm-up and kept every step (lr_ema_after_warmup) has
  the same evidence as layers unfrozen, but adds no weight gradient and its inputs feed only its own update; it
  gets ``inputs_updated_from_step`` ("from step 3 on ... an EMA ... expected").

Inputs: real captures (fixtures/scenarios/<engine>/<name>/) or small unit-level inputs."""

from __future__ import annotations

from explain_helpers import explain_capture as _doc, fix_rule_set as _rules


def test_an_ema_begun_after_warmup_is_not_told_as_tensors_trained_for_good():
    doc = _doc("scenarios/torch_xla/lr_ema_after_warmup")
    rules = _rules(doc)
    assert "inputs_trained_from_step" not in rules and "inputs_updated_from_step" in rules
    fix = doc["headline"]["fix"]
    assert fix.startswith("from step 3 on") and "EMA" in fix
    assert not any(w in fix for w in ("unfrozen", "prune", "requires_grad", "trained for good"))


def test_unfrozen_layers_and_a_pruning_reparametrization_stay_trained_for_good():
    """Look-alikes the other way: the unfrozen group adds its weight gradient (a dot); prune's weight_orig and mask
    feed the kept forward matmul."""
    assert "inputs_trained_from_step" in _rules(_doc("scenarios/torch_xla/ulmfit_unfreeze"))
    assert "inputs_trained_from_step" in _rules(_doc("scenarios/torch_xla/r27_tx_prune_schedule"))
