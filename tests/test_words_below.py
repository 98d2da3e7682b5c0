"""Words below a right headline (2026-11-27, seventh stop): the pattern and summary lines say only what the capture
shows, beside the look-alikes that share the evidence (docs/accuracy.md)."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json

TX = FIXTURES / "scenarios" / "torch_xla"
JX = FIXTURES / "scenarios" / "jax"


def _doc(path, codes=(0, 1)) -> dict:
    return cli_json("explain-recompile", str(path), codes=codes)


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
