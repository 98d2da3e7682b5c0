"""Round 10 (blind, torch_xla and JAX): what the first try got wrong, on its real captures (fixtures/scenarios/*),
beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from explain_helpers import explain_doc as _doc, fix_rule_set as _rules
from helpers import FIXTURES
from hlodiff.diff.library_reads import library_read, LIBRARY_READS
from hlodiff.hlo.model import SourceFrame

TX = FIXTURES / "scenarios" / "torch_xla"
JAX = FIXTURES / "scenarios" / "jax"


# -- a read right after a sync that sits in a step function ---------------------------------------------------------

def test_a_loss_check_after_the_step_function_s_sync_cuts_nothing():
    """r10_spmd_shard_late: `assert torch.isfinite(loss).item()` on the line after `loss = train_step(x, y)`,
    whose sync is inside train_step: a small graph of its own (a scalar it reads, an infinity torch_xla made data),
    not a cut of the next step. The first try said 'a value read before the sync cut the step: read it after the
    sync' and missed the weights sharded late."""
    doc = _doc(TX / "r10_spmd_shard_late", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "sharding" and "partial" not in {c["kind"] for r in doc["recompilations"]
                                                             for c in r["causes"]}
    assert "before the first step" in head["fix"] and "read it after the sync" not in head["fix"]
    assert doc["patterns"][0].startswith("switched")


@pytest.mark.parametrize("fixture, rule", [("rev5_item_clip_adam", None), ("best_loss_min", None),
                                           ("review2_clip_nonfinite", None)])
def test_reads_that_cut_the_step_still_do(fixture, rule):
    """Look-alikes: reads above the sync in the loop (a grad-norm check before opt.step, `min(best, loss)`, the
    patched clip_grad_norm_) keep their cut."""
    folder = TX / fixture
    path = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else \
        folder / "record" if (folder / "record").exists() else folder
    doc = _doc(path)
    assert any(c["kind"] == "partial" for r in doc["recompilations"] for c in r["causes"]), fixture


# -- weights sharded after training began ---------------------------------------------------------------------------

def test_weights_sharded_after_the_first_steps_get_annotate_before_the_first_step():
    doc = _doc(TX / "r10_spmd_shard_late", codes=(1,))
    assert "sharding_marked_late" in _rules(doc) and "sharding_torch" not in _rules(doc)


@pytest.mark.parametrize("fixture", ["spmd_replay_unsharded", "spmd_last_batch", "spmd_load_state_mid"])
def test_other_spmd_runs_keep_their_rows(fixture):
    """Look-alikes: a batch left unmarked on some steps (tiled -> replicated, comes back), a short last batch,
    parameters restored from the host."""
    assert "sharding_marked_late" not in _rules(_doc(TX / fixture))


# -- CTC runs on the CPU ---------------------------------------------------------------------------------------------

def test_ctc_loss_split_is_the_cpu_fallback_not_a_read_of_yours():
    """r10_ctc_fallback: every step cut at nn.CTCLoss (aten::_ctc_loss has no XLA lowering); the first try said
    'a value read before the sync (.item(), print) cut the step'."""
    doc = _doc(TX / "r10_ctc_fallback", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] == 20
    assert "CPU" in head["fix"] and "ctc" in head["fix"].lower()
    assert ".item()" not in head["fix"] and "add_step_closure" not in head["fix"]


def test_the_ctc_row_names_ctc_loss_only():
    row = next(r for r in LIBRARY_READS if r.name == "ctc_loss_cpu_fallback")
    user = SourceFrame("/home/user/project/train.py", 20, "<module>")
    lib = "/usr/lib/python3.11/site-packages/torch/nn/functional.py"
    assert library_read([SourceFrame(lib, 3071, "ctc_loss"), user]) is row
    assert library_read([SourceFrame(lib, 3071, "cross_entropy"), user]) is None


# -- work every Nth step, compared with the first step ---------------------------------------------------------------

def test_a_lazy_regularizer_every_fourth_step_is_periodic_ops_not_accumulation():
    """r10_r1_lazy_reg: the R1 step (C) is most alike to step 0 (A: R1 too, before Adam's state); the first try
    headlined the optimizer state's inputs with 'as gradient accumulation does'."""
    doc = _doc(TX / "r10_r1_lazy_reg" / "record", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "ops" and head["location"]["line"] in (17, 18, 19)
    assert "accumulat" not in head["fix"] and "torch.where" not in head["fix"]
    assert "every 4 steps" in head["fix"]
    assert {"inputs_vs_first_step", "ops_periodic"} <= _rules(doc)


@pytest.mark.parametrize("fixture, path", [("accum_tail", ""), ("review_grad_accum", ""), ("ema_every4", ""),
                                           ("rev7_loss_dict", "record"), ("attn_weights_logging", ""),
                                           ("rev8_eval_nosync", "")])
def test_cycles_that_are_accumulation_or_periodic_outputs_keep_their_rows(fixture, path):
    """Look-alikes: accumulation cycles (the compared graph comes back), periodic EMA / dict keys / attention maps /
    validation told by their own rows."""
    folder = TX / fixture
    target = folder / path if path else (folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder)
    doc = _doc(target)
    head = doc["headline"]
    assert head is None or "compared with is the first step's" not in head["fix"], fixture
    assert "inputs_vs_first_step" not in _rules(doc), fixture


# -- JAX: a factory's closure over an array ---------------------------------------------------------------------------

def test_a_jitted_closure_made_per_epoch_is_told_to_take_the_array_as_an_argument():
    """r10_jx_closure_table: make_step(protos) returns a new @jax.jit closure per epoch, the prototypes baked in;
    the first try said 'create and jit the function once, outside the loop' (which keeps the first prototypes)."""
    doc = _doc(JAX / "r10_jx_closure_table", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "cache_key" and "argument" in head["fix"]
    assert "cache_key_new_closure" in _rules(doc)


def test_a_lambda_made_per_step_keeps_create_it_once():
    """Look-alike: jax_jit_in_loop's lambda closes over no array that changes (the HLO is the same)."""
    doc = _doc(JAX / "jax_jit_in_loop", codes=(1,))
    assert "outside the loop" in doc["headline"]["fix"]
    assert "cache_key_new_function" in _rules(doc) and "cache_key_new_closure" not in _rules(doc)
