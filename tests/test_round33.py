"""Round 33 (blind, 2026-11-28): an input that grew once and stayed larger while the data's size came back to one
compiled before (rotary tables extended for one long batch, r33_tx_rope_cache_extend, r33_jx_rope_table_grow) is a
cache never shrunk, not "one graph per bucket, each compiled once, nothing to fix". Each on the look-alikes that
share its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of

from hlodiff.explain.buckets import Dimension
from hlodiff.explain.stayed_grown import _positions, _switched_up_once

SC = FIXTURES / "scenarios"


def _doc(*args) -> dict:
    return cli_json("explain-recompile", *map(str, args), codes=(0, 1))


def test_a_table_extended_once_and_kept_is_told_to_be_built_once_at_its_largest():
    doc = _doc(SC / "torch_xla" / "r33_tx_rope_cache_extend")
    head = doc["headline"]
    assert head["kind"] == "shape" and "shape_stayed_grown" in fix_rules_of(doc)
    assert "16 -> 32" in head["fix"] and "largest size" in head["fix"] and "nothing to fix" not in head["fix"]


def test_in_jax_the_long_batch_itself_is_expected_and_the_kept_table_leads():
    run = SC / "jax" / "r33_jx_rope_table_grow"
    doc = _doc(run / "dump", "--jax-log", run / "stderr.log")
    head = doc["headline"]
    assert "16 -> 32" in head["fix"] and "largest size" in head["fix"] and not head["fix"].startswith("expected")
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "shape"}
    assert "shape_stayed_grown_data" in rules  # the 32-token batch's own compilation: expected, not the story


def test_only_a_size_that_rose_once_and_held_with_a_compilation_after_it_is_a_switch():
    def dim(*values):
        return Dimension("dim 0 of parameter 3 %cos.1 (f32[N,16])", {str(i): v for i, v in enumerate(values)})
    order = ["0", "1", "2", "3"]
    assert _switched_up_once(dim(16, 16, 32, 32), order) == 2
    assert _switched_up_once(dim(16, 32, 64, 64), order) is None  # grew again: a history, not one extension
    assert _switched_up_once(dim(32, 32, 16, 16), order) is None  # shrank: a schedule or a last batch
    assert _switched_up_once(dim(16, 16, 16, 32), order) is None  # nothing compiled after the switch


def test_two_sizes_of_one_input_are_a_2d_bucket_plan_not_a_kept_table():
    batch = Dimension("dim 0 of parameter 2 %ids.1 (s32[N,16])", {})
    length = Dimension("dim 1 of parameter 2 %ids.1 (s32[4,N])", {}, ("dim 0 of parameter 4 %y.1 (s32[N])",))
    assert _positions(batch) & _positions(length) == {2}
    assert _positions(length) == {2, 4}


@pytest.mark.parametrize("name, row", [("embed_vocab_grow", None), ("rev12_tx_progressive_resize", None),
                                       ("rev15_tx_seqlen", None)])
def test_look_alikes_whose_sizes_change_keep_their_rows(name, row):
    """A vocabulary rebuilt larger (its old rows copied in), a resolution schedule, sequence lengths: none has
    a second input that stayed grown while the data came back."""
    doc = _doc(SC / "torch_xla" / name)
    assert not any(c["fix_rule"] in ("shape_stayed_grown", "shape_stayed_grown_data")
                   for r in doc["recompilations"] for c in r["causes"])
