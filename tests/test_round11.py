"""Round 11 (blind, small): what the first try got wrong, on its real captures (fixtures/scenarios/*), beside the
look-alikes that share the evidence (an early execution every step, at a line of the user's)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_doc as _doc, fix_rule_set as _rules
from helpers import FIXTURES

TX = FIXTURES / "scenarios" / "torch_xla"


def _partial_reasons(doc) -> set[str]:
    return {c["reason"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "partial"}


def test_an_op_run_on_the_cpu_is_the_cut_not_a_read_of_the_user_s():
    """r11_tx_nanmedian_fallback: torch.nanmedian has no XLA lowering; the early execution hands back the masked
    prediction and two empty out= buffers (f32[0], s64[0]) for the CPU kernel. The first try said 'a value read
    before the sync (.item(), print) cut the step: read it after the sync, or use xm.add_step_closure'."""
    doc = _doc(TX / "r11_tx_nanmedian_fallback", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] in (19, 20)
    assert "no XLA lowering" in head["fix"] and "CPU" in head["fix"]
    assert ".item()" not in head["fix"] and "add_step_closure" not in head["fix"]
    assert _partial_reasons(doc) == {"fallback"}


@pytest.mark.parametrize("fixture, reason, rule", [
    # the user's own reads: a print and an .item() before the sync
    ("torch_xla/print_partial", "read", "partial_read"),
    ("torch_xla/item_partial", "read", None),
    # a boolean mask index: the cut hands back the mask
    ("torch_xla/mask_index", "data_dependent", "partial_mask_index"),
    # a library's read (torch_xla's clip_grad_norm_), and CTC's fallback named by its library frame
    ("scenarios/torch_xla/review2_clip_nonfinite/graphs.hlo.0", "read", "partial_library_read"),
    ("scenarios/torch_xla/r10_ctc_fallback", "read", "partial_library_read"),
])
def test_look_alikes_cut_every_step_keep_their_reason_and_row(fixture, reason, rule):
    path = FIXTURES / fixture
    if (path / "graphs.hlo.0").exists():
        path = path / "graphs.hlo.0"
    doc = _doc(path)
    assert reason in _partial_reasons(doc) and "fallback" not in _partial_reasons(doc)
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "partial_cpu_fallback" not in rules
    if rule:
        assert rule in rules


def test_momentum_raised_from_zero_mid_run_is_optimizer_state_begun_late():
    """r11_tx_momentum_warmup: SGD's momentum 0.0 for three steps, then 0.9: step 3's graph only adds the new
    buffers as outputs, step 4's reads them in torch/optim. The first try said 'a value is kept on some steps only
    (a metric, a log): compute it every step, or read it after the sync'."""
    doc = _doc(TX / "r11_tx_momentum_warmup", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "outputs" and "outputs_optimizer_state_late" in _rules(doc)
    # step 4's graph reads the buffers back: told as following from it, not "sync at the same points"
    assert "inputs_optimizer_state_late" in _rules(doc) and "inputs_seen" not in _rules(doc)
    assert "momentum above 0 from the start" in head["fix"] and "read it after" not in head["fix"]


@pytest.mark.parametrize("fixture", [
    "torch_xla/momentum_warmup",                # the state made on the first step: an expected warm-up
    "torch_xla/metric_even_steps",              # a metric kept on some steps: outputs no optimizer reads back
    "torch_xla/look_frozen_backbone",           # layers frozen mid-run
    "scenarios/torch_xla/ulmfit_unfreeze/record",   # layers unfrozen mid-run: new gradient work with the outputs
    "scenarios/torch_xla/wd_from_zero",         # a setting of the optimizer that makes no state
    "scenarios/torch_xla/r10_r1_lazy_reg/record",  # Adam's state on the first step, a periodic penalty
])
def test_look_alikes_of_state_begun_late_keep_their_rows(fixture):
    path = FIXTURES / fixture
    path = path / "graphs.hlo.0" if (path / "graphs.hlo.0").exists() else path / "dump" if (path / "dump").exists() \
        else path
    rules = _rules(_doc(path))
    assert rules and not rules & {"outputs_optimizer_state_late", "inputs_optimizer_state_late"}
