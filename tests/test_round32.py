"""Round 32 (blind, 2026-11-28): a step whose program is identical but whose buffers torch_xla donated differently
is told what was seen and what to check, not "update the same tensors in place every step"
(r32_tx_spmd_metric_after_sync_control); a dot that contracts other axes is an einsum equation or layout chosen in
Python, never "pass it as a tensor" (r32_tx_einsum_eq_per_type); sizes that fill a range with no gap (2, 3, 4
sub-batches) are the data's counts, not buckets already chosen (r32_tx_subbatch_count_stack). Each on the
look-alikes that share its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of

TX = FIXTURES / "scenarios" / "torch_xla"


def _doc(path) -> dict:
    return cli_json("explain-recompile", str(path), codes=(0, 1))


def _aliasing(doc: dict) -> list[dict]:
    return [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "aliasing"]


def test_donation_alone_on_the_same_program_says_what_to_check():
    """The HLO is identical: the step updates the same tensors in place on both sides, so the in-place row's "on
    some steps only ... every step" is false here; what differed is what held the tensors at the sync."""
    doc = _doc(TX / "r32_tx_spmd_metric_after_sync_control" / "record_first_try")
    (cause,) = _aliasing(doc)
    assert cause["fix_rule"] == "aliasing_torch_same_program"
    assert "every step" not in cause["fix"] and "check what holds them" in cause["fix"]
    assert not cause["fix"].startswith("expected")  # nothing in the run says it was meant


@pytest.mark.parametrize("name, row", [("lr_ema_after_warmup", "aliasing_torch"),
                                       ("rev21_tx_freeze_test/record", "aliasing_follow_frozen"),
                                       ("ulmfit_unfreeze/record", "aliasing_follow_unfrozen")])
def test_donation_that_comes_with_a_changed_program_keeps_its_row(name, row):
    """An EMA begun late, weights frozen or unfrozen: the program changed with the donation; those rows stay."""
    causes = _aliasing(_doc(TX / name))
    assert causes and all(c["fix_rule"] == row for c in causes)


def test_a_contraction_picked_per_batch_kind_asks_for_one_layout_not_a_tensor():
    doc = _doc(TX / "r32_tx_einsum_eq_per_type")
    head = doc["headline"]
    assert "aliasing" != head["kind"] and "attribute_contraction" in fix_rules_of(doc)
    assert "as a tensor" not in head["fix"] and "einsum equation" in head["fix"] and "permute" in head["fix"]


def test_the_contraction_fact_needs_dot_dimension_numbers_only():
    from hlodiff.diff.fixes import choose

    assert choose("attribute", frozenset({"is:attribute", "contraction_attr"})).name == "attribute_contraction"
    assert choose("attribute", frozenset({"is:attribute", "dims_attr"})).name == "attribute_dims"
    assert choose("attribute", frozenset({"is:attribute", "precision_attr"})).name == "attribute_matmul_precision"
    assert choose("attribute", frozenset({"is:attribute"})).name == "attribute_any"


def test_sizes_that_fill_a_range_are_the_data_s_counts_not_buckets():
    from hlodiff.explain.buckets import already_bucketed, consecutive

    assert consecutive([2, 3, 4]) and consecutive([5, 6, 7, 8])
    assert not consecutive([1, 2, 4]) and not consecutive([3, 4]) and not consecutive([24, 28, 32])
    assert not already_bucketed(((2, 3), (3, 3), (4, 2)))  # 2, 3 or 4 sub-batches, each recurring
    assert already_bucketed(((1, 3), (2, 3), (4, 3)))  # powers of two, each reused: chosen
    assert already_bucketed(((8, 3), (16, 3), (24, 3)))  # multiples of 8


def test_a_sub_batch_count_that_recurs_gets_a_plan_not_nothing_to_fix():
    doc = _doc(TX / "r32_tx_subbatch_count_stack" / "graphs.hlo.0")
    head = doc["headline"]
    assert head["kind"] == "shape" and "nothing to fix" not in head["fix"] and "pad" in head["fix"]
