"""Round 14 (blind, torch_xla and JAX): what the first try got wrong, on its real captures (fixtures/scenarios/*),
beside the look-alikes that share the evidence (a cut at a library call every step; a first step's graph that comes
back; ops added in library code)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_doc as _doc, fix_rule_set as _rules
from helpers import FIXTURES

TX = FIXTURES / "scenarios" / "torch_xla"


def test_an_embedding_with_max_norm_is_a_library_cut_not_a_read_of_the_user_s():
    """r14_tx_embed_maxnorm: nn.Embedding(max_norm=1.0) renormalises the rows in place with embedding_renorm_, run
    on the CPU; the early execution hands back no empty out= buffer (the op is in place), its stack names
    torch's _no_grad_embedding_renorm_. The first try said 'a value read before the sync (.item(), print) cut the
    step: read it after the sync, or use xm.add_step_closure'."""
    doc = _doc(TX / "r14_tx_embed_maxnorm" / "graphs.hlo.0", codes=(1,))
    head = doc["headline"]
    assert doc["patterns"][0].startswith("split:")
    assert head["kind"] == "partial" and head["location"]["line"] == 16
    assert "max_norm" in head["fix"] and "runs on the CPU" in head["fix"]
    assert ".item()" not in head["fix"] and "add_step_closure" not in head["fix"]


@pytest.mark.parametrize("fixture, words", [
    ("scenarios/torch_xla/rev8_pad_multiple/record", "EmbeddingBag"),     # F.embedding_bag: the same file of torch
    ("scenarios/torch_xla/r10_ctc_fallback", "CTC"),                      # F.ctc_loss: the same file of torch
    ("scenarios/torch_xla/r11_tx_nanmedian_fallback", "nanmedian"),       # empty out= buffers: the fallback reason
])
def test_look_alikes_cut_at_a_library_call_keep_their_words(fixture, words):
    doc = _doc(FIXTURES / fixture)
    fixes = " ".join(c["fix"] for r in doc["recompilations"] for c in r["causes"])
    assert words in fixes and "max_norm" not in fixes


def test_an_optimizer_built_each_epoch_is_expected_not_gradient_accumulation():
    """r14_tx_opt_rebuild_control: SGD(momentum=0.9) built anew each epoch: its first step runs step 0's graph
    again from the cache (A,B,B,A,B,B,...). The first try said 'the graphs cycle every 3 steps (as gradient
    accumulation does ...)' and exited 1."""
    doc = _doc(TX / "r14_tx_opt_rebuild_control" / "record", codes=(0,))
    head = doc["headline"]
    assert "inputs_optimizer_state_reset" in _rules(doc)
    assert head["fix"].startswith("expected: the optimizer's state is made anew every 3 steps")
    assert "accumulat" not in head["fix"]


@pytest.mark.parametrize("fixture, rule", [
    ("torch_xla/momentum_warmup", "inputs_optimizer_warmup"),           # the state made once: never comes back
    ("torch_xla/setup_accumulate", "accumulation_cycle"),               # grads accumulated, the update every kth
    ("scenarios/torch_xla/r10_r1_lazy_reg/record", "inputs_vs_first_step"),  # the first step never comes back
    ("scenarios/torch_xla/r11_tx_momentum_warmup", "inputs_optimizer_state_late"),  # state begun late
    ("scenarios/torch_xla/review3_collate_key/record", "inputs_cycle_data"),  # a cycle of the data's keys
])
def test_look_alikes_of_a_state_reset_keep_their_rows(fixture, rule):
    path = FIXTURES / fixture
    if (path / "graphs.hlo.0").exists():
        path = path / "graphs.hlo.0"
    rules = _rules(_doc(path))
    assert rule in rules and "inputs_optimizer_state_reset" not in rules


def test_clipping_switched_on_in_a_capture_of_compilations_only_names_the_library_call():
    """r14_tx_clip_after_warmup (PT_XLA_DEBUG_LEVEL=1 and an HLO text dump): clip_grad_norm_'s ops added from step
    3, traced in torch_xla's patched clip_grad_norm_, no line of the user's and no executions in the capture. The
    first try said 'Python code decides per step what is traced (a Python `if`); run the same ops every step
    (torch.where)'."""
    doc = _doc(TX / "r14_tx_clip_after_warmup", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "ops" and "ops_library_call_added" in _rules(doc)
    assert "torch_xla/_patched_functions.py" in head["fix"] and "every step" in head["fix"]
    assert "torch.where" not in head["fix"]


@pytest.mark.parametrize("fixture", [
    "torch_xla/clip_later",                            # the same switch, recorded: executions and the user's line
    "scenarios/torch_xla/r11_tx_momentum_warmup",      # compilations only, ops made in torch/optim
    "scenarios/torch_xla/review2_wd_off",              # an optimizer setting changed once
    "scenarios/torch_xla/label_smoothing_on",          # a setting of torch/nn's loss
])
def test_look_alikes_of_library_ops_added_keep_their_rows(fixture):
    path = FIXTURES / fixture
    if (path / "graphs.hlo.0").exists():
        path = path / "graphs.hlo.0"
    assert "ops_library_call_added" not in _rules(_doc(path))
