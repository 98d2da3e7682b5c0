"""Words below a right headline (2026-11-27, seventh stop): the pattern and summary lines say only what the capture
shows, beside the look-alikes that share the evidence (docs/accuracy.md)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_doc as _doc
from helpers import FIXTURES

TX = FIXTURES / "scenarios" / "torch_xla"
JX = FIXTURES / "scenarios" / "jax"


def _names(doc) -> set[str]:
    return {f["pattern"]["name"] for f in doc["families"]}


@pytest.mark.parametrize("fixture", ["r11_tx_momentum_warmup", "spmd_replay_unsharded"])
def test_a_level1_log_s_compilations_are_not_called_unbounded(fixture):
    """A PT_XLA_DEBUG_LEVEL=1 log lists compilations only: 3 compilations of an 8-step (7-step) run that compiled at
    steps 0, 3, 4 (0, 1, 2) were told as 'unbounded: a new graph every time'."""
    doc = _doc(TX / fixture)
    assert "unbounded" not in _names(doc)
    text = " ".join(doc["patterns"]) + doc["summary"]
    assert "every time" not in text and "unbounded" not in text
    assert "no cache hits" in text and "3 compilations of sync at" in text


@pytest.mark.parametrize("fixture", ["loss_history", "rev4_kvcache", "x4c_loss_list_sum"])
def test_look_alikes_with_cache_hits_seen_stay_unbounded(fixture):
    """Captures whose executions are seen (a save-tensors file, a level-2 log): a new graph at every step is seen,
    and still named so."""
    doc = _doc(TX / fixture)
    assert "unbounded" in _names(doc)
    assert "no cache hits" not in " ".join(doc["patterns"])


def test_a_step_cut_by_ops_run_on_the_cpu_is_not_said_split_by_reads():
    """r11_tx_nanmedian_fallback: the cause and fix name nanmedian's CPU fallback (cut reason ``fallback``); the
    summary still said 'split in three by 2 early reads' and 'after an early read cut the step'."""
    doc = _doc(TX / "r11_tx_nanmedian_fallback")
    text = doc["summary"] + " ".join(doc["patterns"])
    assert "early read" not in text
    # since review 20 (F2) the first step's pieces are first compilations, cut by the same reason
    assert "split in three by 2 ops run on the CPU" in text and "ops run on the CPU (no XLA lowering) cut it" in text


@pytest.mark.parametrize("fixture, words", [
    ("r10_ctc_fallback", "split in two by an early read"),        # a library's read: still a read
    ("amp_gradscaler", "split in two by an early read"),          # GradScaler's own read
    ("review_bool_index", "an early run for a mask's values cut the step"),  # a boolean mask's size
])
def test_look_alikes_cut_every_step_are_worded_by_their_own_reason(fixture, words):
    doc = _doc(TX / fixture)
    text = doc["summary"] + " ".join(doc["patterns"])
    assert words in text and "run on the CPU" not in text


def test_graphs_printed_alike_with_elided_constants_are_not_called_the_same_hlo():
    """r10_jx_closure_table: each closure bakes its own table, printed as constant({...}) in every graph; the
    summary said '2 of them the same HLO again: the cache key changed outside it', more than the text shows."""
    doc = _doc(JX / "r10_jx_closure_table")
    assert "the same HLO again: the cache key changed outside it" not in doc["summary"]
    assert "2 of them print the same HLO again, but with constants elided as {...}" in doc["summary"]


@pytest.mark.parametrize("fixture", ["jax_jit_in_loop", "jax_config_identity", "rev8_jx_round_robin"])
def test_look_alikes_with_every_value_printed_stay_the_same_hlo(fixture):
    """Dumps whose repeated graphs print every constant: the same text is the same HLO, and still said so."""
    doc = _doc(JX / fixture)
    assert "the same HLO again: the cache key changed outside it" in doc["summary"]
    assert "elided" not in doc["summary"]
