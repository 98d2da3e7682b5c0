"""A step cut by several early reads runs one piece per read; the first step's later pieces are compiled once and
reused, so they never head a family whose graphs change after the last cut (round 25, r25_tx_mlm_mask_assign:
HF's MLM masking on the device, three boolean-index assignments a step, the graph after the third changing with
the count of masked tokens)."""

from __future__ import annotations

from conftest import FIXTURES
from helpers import cli_json

SCEN = FIXTURES / "scenarios" / "torch_xla"


def test_a_step_cut_three_times_is_told_at_the_cut_whose_graph_keeps_changing():
    doc = cli_json("explain-recompile", str(SCEN / "r25_tx_mlm_mask_assign"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] == 29
    assert "torch.where" in head["fix"]
    # the first step's second piece (the cut at :26) is still reported, just not as the headline
    lines = {c["locations"][0]["line"] for r in doc["recompilations"] for c in r["causes"][:1] if c.get("locations")}
    assert 26 in lines


def test_a_step_cut_once_keeps_its_first_recompilation_as_headline():
    """Look-alike: a split in three by torch_xla's clip_grad_norm_ (review2_clip_nonfinite) and a single user read
    cut keep the headline they had: the rule only skips pieces inside the first step."""
    doc = cli_json("explain-recompile", str(SCEN / "review2_clip_nonfinite" / "graphs.hlo.0"), codes=(1,))
    assert doc["headline"]["location"]["line"] == 14
