"""New-user review 20 (2026-11-28): what a user read first on T1 (a float64 restore under `hlodiff record`) and T2
(clip_grad_norm_(error_if_nonfinite=True) cutting every step), checked on the scenarios made from them."""

from __future__ import annotations

from pathlib import Path

from helpers import cli, cli_json

SCEN = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios"
T2 = SCEN / "torch_xla" / "rev20_t2_clip_sync"


# -- F2: a step cut in three is no recompilation; its second step's warm-up is told as one ----------------------------

def test_a_cut_steps_pieces_are_first_compilations_and_its_warmup_is_named():
    doc = cli_json("explain-recompile", str(T2), codes=(1,))
    head = doc["summary"]
    assert "6 compilations, 3 recompilations (all of them the split step's warm-up: step 1 compiled its 3 graphs " \
           "once more, none after" in head
    assert "5 recompilations" not in head
    assert "error_if_nonfinite=False" in doc["headline"]["fix"]  # the diagnosis stays
    text = cli("explain-recompile", str(T2), codes=(1,)).stdout
    assert "story: 5 compilations, 3 of them recompilations, one root" in text


def test_look_alike_split_without_warmup_counts_no_recompilation():
    # review2_clip_nonfinite: the same program without a step-0 difference: 3 graphs, every step the same three
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "review2_clip_nonfinite" / "graphs.hlo.0"), codes=(1,))
    assert doc["summary"].startswith("18 graphs, 3 compilations, 0 recompilations (the first step's 2 other graphs")
    assert "warm-up" not in doc["summary"].split(":")[0]
