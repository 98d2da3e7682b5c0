"""Round 31 (blind, 2026-11-28): reads that are a loop's only executions pile up the pending steps
(r31_tx_loader_switch: a plain DataLoader after MpDeviceLoader; r17_tx_item_no_sync: no step mark at all), and a
family that compiles anew every time heads the report before one that settled; each on the look-alikes that share
its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of

TX = FIXTURES / "scenarios" / "torch_xla"


def _doc(name: str) -> dict:
    return cli_json("explain-recompile", str(TX / name), codes=(0, 1))


def _headline_causes(doc: dict) -> list[dict]:
    graph = doc["headline"]["graph"]
    return next(r["causes"] for r in doc["recompilations"] if r["graph"] == graph)


@pytest.mark.parametrize("name", ["r31_tx_loader_switch", "r17_tx_item_no_sync"])
def test_reads_that_pile_up_pending_steps_ask_for_a_step_mark(name):
    """Each read runs every step pending since the last mark: "read it after the sync" names a sync the loop does
    not have, and a step closure waits for a mark that never comes."""
    doc = _doc(name)
    head = doc["headline"]
    assert head["kind"] == "partial" and _headline_causes(doc)[0]["fix_rule"] == "partial_reads_pile_up"
    assert "torch_xla.sync()" in head["fix"] and "MpDeviceLoader" in head["fix"]
    assert "add_step_closure" not in head["fix"]


@pytest.mark.parametrize("name", ["center_no_detach", "print_shape_control", "rev8_eval_nosync"])
def test_growing_graphs_or_reads_with_a_sync_between_them_keep_their_rows(name):
    """A history carried from step to step grows with a sync every step; a read after the sync cuts nothing; a
    validation never synced rides in the next step: none of them is reads piling up steps."""
    assert "partial_reads_pile_up" not in fix_rules_of(_doc(name))


def test_a_family_that_never_settles_heads_before_one_that_settled():
    """Epoch 0's log read (two cached variants of the MpDeviceLoader step) ran first; epoch 1's reads compiled a
    larger graph every time: that family heads, and its fix is the step mark."""
    doc = _doc("r31_tx_loader_switch")
    growing = next(f for f in doc["families"] if f["pattern"]["name"] == "unbounded")
    settled = next(f for f in doc["families"] if f["pattern"]["name"] == "periodic")
    assert doc["families"].index(settled) < doc["families"].index(growing)
    assert doc["headline"]["graph"] in growing["graphs"]


def test_a_read_that_picks_the_loss_reduction_is_a_branch_not_an_update_gate():
    """`if pos.any():` picks the sum over the positives' count or the mean: the two whole graphs differ by a
    constant's type (s64 count, s32 batch size) besides their ops, which must not hide the branch."""
    doc = _doc("r31_tx_mask_any_branch")
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] == 25
    assert _headline_causes(doc)[0]["fix_rule"] == "partial_read_sets_branch"
    assert "torch.where" in head["fix"] and "optimizer state" not in head["fix"] and "found_inf" not in head["fix"]


@pytest.mark.parametrize("path, rule", [
    ("rev13_t3_nan_guard/record", "partial_read_condition"),   # the bool gates AdamW's step
    ("best_loss_min/record", "partial_read_condition"),
    ("if_loss_spike", "partial_read_sets_branch_lines"),        # a branch whose graphs differ in ops only
])
def test_reads_that_gate_the_update_or_branch_on_ops_keep_their_rows(path, rule):
    assert rule in fix_rules_of(_doc(path))
