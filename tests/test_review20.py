"""New-user review 20 (2026-11-28): what a user read first on T1 (a float64 restore under `hlodiff record`) and T2
(clip_grad_norm_(error_if_nonfinite=True) cutting every step), checked on the scenarios made from them."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    assert "story: 5 of the run's 6 compilations, 3 of them recompilations, one root" in text  # review 23 F2


def test_look_alike_split_without_warmup_counts_no_recompilation():
    # review2_clip_nonfinite: the same program without a step-0 difference: 3 graphs, every step the same three
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "review2_clip_nonfinite" / "graphs.hlo.0"), codes=(1,))
    assert doc["summary"].startswith("18 graphs, 3 compilations, 0 recompilations (the first step's 2 other graphs")
    assert "warm-up" not in doc["summary"].split(":")[0]


# -- F1: `record --lines auto` and a value made anew on a step traced without lines -----------------------------------

T1 = SCEN / "torch_xla" / "rev20_t1_restore_f64" / "record"


def test_a_lineless_recompile_does_not_blame_where_the_earlier_value_was_made():
    # the source (the model built at :8, outside the loop) tells the earlier value was made once, not each step
    doc = cli_json("explain-recompile", str(T1), "--source-map", f"/home/user/project={SCEN / 'torch_xla'}",
                   codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "dtype" and head["location"]["line"] == 13  # the model call both graphs run, not :8
    cause = doc["recompilations"][0]["causes"][0]
    assert 8 not in [loc["line"] for loc in cause["locations"]]
    assert "the earlier values were made at rev20_t1_restore_f64.py:8" in cause["hint"]
    assert "--lines always" in cause["hint"]
    assert "float32" in head["fix"]  # the NumPy float64 fix stays


def test_without_the_source_the_earlier_value_s_line_stays():
    # live_batch_change's look-alike: a value made in the loop is made anew at that line every step; with no source
    # to tell which, the line the capture has stays
    doc = cli_json("explain-recompile", str(T1), codes=(1,))
    assert doc["headline"]["location"]["line"] == 8


def test_a_record_run_is_not_told_to_rerun_with_record():
    out = cli("explain-recompile", str(T1), codes=(1,)).stdout
    assert "rerun with `hlodiff record -- python train.py`" not in out
    assert "hint: source lines unknown: these graphs compiled while source lines were off" in out


def test_look_alike_with_lines_keeps_the_line_that_made_the_new_value():
    # rev20_t2's by-hand capture has lines on every step: the rule does not touch it; a dtype scenario with lines on
    # both sides keeps its own origin (review 8's float64 targets from a NumPy cache)
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev8_np_cache_f64" / "graphs.hlo.0"), codes=(1,))
    assert doc["headline"]["kind"] == "dtype" and "where the new value was made" not in str(doc)


# -- F3: `cost` on a step cut by a library's read gives explain-recompile's row, and counts every early graph ---------

def test_cost_of_a_library_read_gives_the_library_rows_fix_and_counts_both_reads():
    head = cli_json("cost", str(T2), codes=(0,))["headline"]
    assert head["kind"] == "read_in_step" and head["library_read"] == "clip_grad_norm_nonfinite_xla"
    assert "error_if_nonfinite=False" in head["fix"] and "torch.where" not in head["fix"]
    assert head["reads"] == 2 and "(14 early graphs)" in head["summary"] and "in 7 steps" in head["summary"]


@pytest.mark.parametrize("name, fix, reads", [
    ("rev10_tx_item_mid_cost", "torch.where", 1),      # the user's own condition read: its row stays
    ("x5c_adam_state_host", "", 8),                    # 8 state tensors .cpu()'d at one line: counted, no library
    ("xla_host_momentum", "", 4),
])
def test_look_alike_reads_keep_their_own_fix(name, fix, reads):
    head = cli_json("cost", str(SCEN / "cost" / name / "record"), codes=(0,))["headline"]
    assert head["library_read"] is None and head["reads"] == reads
    assert fix in head["fix"] and "error_if_nonfinite" not in head["fix"]
