"""Blind round 8 (docs/accuracy.md, "Round 8 (blind, torch_xla and JAX)"): the rules it changed, each shown on the
real run it was wrong on and on the real look-alikes that share its evidence.

* ranks whose graphs differ by work without any collective, neither compiled again, are told but fail nothing
  (``Divergence.no_collective``, row ``ranks_value_on_some_ranks_no_collective``);
* "the graph grows at every step" needs the executions: a dump read as its compilations only cannot show it;
* torch_xla SPMD: parameters restored from the host (load_state_dict) come in replicated and are sharded again in
  the next step: told as that restore (``ops_spmd_state_copy``, ``sharding_state_copy``);
* torch_xla: a graph that stops drawing random numbers for good is a dropout that stopped applying (model.eval()
  left on), not a setting switched on (``ops_dropout_stopped``);
* JAX: a function compiled once more for a larger size, as the run's last compilation, is a final call
  (``shape_final_call_jax``), not a short last batch nor a size to pad."""

from __future__ import annotations

import pytest

from explain_helpers import explain_capture as _doc, fix_rules as _rules, head_cause as _head_cause
from helpers import capture_argv as _argv, cli


def test_ranks_that_differ_without_collectives_are_told_and_exit_0():
    res = cli("explain-recompile", *_argv("scenarios/torch_xla/spawn_rank_metric_control"), codes=(0,))
    assert "hold no collective" in res.stdout and "nothing recompiled" in res.stdout
    assert "wait for each other" not in res.stdout
    doc = _doc("scenarios/torch_xla/spawn_rank_metric_control", codes=(0,))
    assert doc["divergence"] and all(d["no_collective"] for d in doc["divergence"])
    assert doc["headline"] is None


@pytest.mark.parametrize("path", [
    "scenarios/torch_xla/spawn_uneven_shard",   # rank 1 compiles its short batch (and reruns it next epoch)
    "scenarios/torch_xla/rank0_item_log",       # rank 0's step cut by an early read every step
    "scenarios/jax/jax_ranks_uneven",           # each rank compiles its own short last batch
])
def test_ranks_whose_divergence_is_a_recompilation_still_fail(path):
    doc = _doc(path, codes=(1,))
    assert doc["divergence"] and not any(d["no_collective"] for d in doc["divergence"])


def test_growth_is_not_claimed_from_compilations_only():
    doc = _doc("scenarios/torch_xla/spmd_load_state_mid")
    assert "history_carried" not in _rules(doc)
    assert "grows" not in (doc["headline"]["fix"] or "")


@pytest.mark.parametrize("path, row", [
    ("scenarios/torch_xla/center_no_detach", "history_carried"),
    # a list of device scalars stacked each step: the scalar inputs it adds are the list's (crossings round 4:
    # history_scalars_summed, no detach, which its truth rules out), the concatenate's own row beside them
    ("scenarios/torch_xla/loss_history", "history_scalars_summed"),
])
def test_growth_seen_in_every_execution_keeps_its_row(path, row):
    assert row in _rules(_doc(path, codes=(1,)))


def test_parameters_restored_from_the_host_under_spmd_are_told_as_the_restore():
    doc = _doc("scenarios/torch_xla/spmd_load_state_mid")
    cause = _head_cause(doc)
    assert cause["fix_rule"] == "ops_spmd_state_copy"
    fix = doc["headline"]["fix"]
    assert "load_state_dict" in fix and "torch_xla.sync()" in fix and "mark_sharding" not in fix
    restore = next(r for r in doc["recompilations"] if r["graph"] == doc["headline"]["graph"])
    assert [c["fix_rule"] for c in restore["causes"]] == ["ops_spmd_state_copy", "sharding_state_copy"]
    # step 1's annotations (the SPMD warm-up) stay the warm-up
    assert "ops_spmd_annotation_warmup" in _rules(doc)


@pytest.mark.parametrize("path", ["scenarios/torch_xla/spmd_replay_unsharded", "scenarios/torch_xla/spmd_last_batch"])
def test_spmd_look_alikes_without_a_restore_keep_their_rows(path):
    rules = _rules(_doc(path, codes=(1,)))
    assert "ops_spmd_state_copy" not in rules and "sharding_state_copy" not in rules
    assert "ops_spmd_annotation_warmup" in rules


def test_a_dropout_that_stopped_after_validation_is_told_as_the_mode_left_on():
    doc = _doc("scenarios/torch_xla/eval_no_train_back", codes=(1,))
    assert _head_cause(doc)["fix_rule"] == "ops_dropout_stopped"
    fix = doc["headline"]["fix"]
    assert "model.train()" in fix and "from the first step" not in fix


@pytest.mark.parametrize("path,rule", [
    ("scenarios/torch_xla/dropout_ramp", "ops_switched_on"),      # dropout from 0 to 0.1: random bits came
    ("scenarios/torch_xla/freeze_backbone", "outputs_frozen"),    # ops went, no random bits among them
])
def test_ops_that_came_or_went_without_random_bits_keep_their_rows(path, rule):
    rules = _rules(_doc(path, codes=(1,)))
    assert rule in rules and "ops_dropout_stopped" not in rules


def test_a_final_bigger_call_is_expected_once_not_padded():
    res = cli("explain-recompile", *_argv("scenarios/jax/jax_final_eval_size"), codes=(0,))
    doc = _doc("scenarios/jax/jax_final_eval_size", codes=(0,))
    assert _head_cause(doc)["fix_rule"] == "shape_final_call_jax"
    fix = doc["headline"]["fix"]
    assert fix.startswith("expected") and "pad" not in fix and "last batch" not in fix
    assert res.stdout


@pytest.mark.parametrize("path,rule", [
    ("scenarios/jax/jax_last_batch", "shape_last_batch_jax"),     # the last call is smaller: a short last batch
    ("scenarios/jax/jax_split_count", "shape_prng_keys_jax"),     # more keys from a schedule, mid-run
])
def test_sizes_that_shrink_or_change_mid_run_keep_their_rows(path, rule):
    rules = _rules(_doc(path, codes=(0, 1)))
    assert rule in rules and "shape_final_call_jax" not in rules


def test_a_one_hot_sized_by_a_read_max_names_num_classes():
    """onehot_counts: F.one_hot(y) without num_classes: the changed zeros feed a scatter, and the early read of the
    labels' max decides the size (3 different graphs after it): row ``shape_scatter_from_read``."""
    doc = _doc("scenarios/torch_xla/onehot_counts", codes=(1,))
    assert _head_cause(doc)["fix_rule"] == "shape_scatter_from_read"
    assert "num_classes" in doc["headline"]["fix"] and "minlength" not in doc["headline"]["fix"]


@pytest.mark.parametrize("path", [
    "scenarios/torch_xla/bincount_weights",   # bincount without minlength: an index tensor, no scatter
    "scenarios/torch_xla/unique_classes",     # torch.unique
    "scenarios/torch_xla/trim_padding",       # a slice length read early, no scatter
])
def test_sizes_read_from_the_data_without_a_scatter_keep_their_rows(path):
    assert "shape_scatter_from_read" not in _rules(_doc(path, codes=(1,)))


def test_spmd_runtime_modules_are_set_aside_and_the_log_joins_the_dump():
    """spmd_load_state_mid: the dump holds 3 ReplicateShardedData modules (state_dict's .cpu() of sharded
    parameters) that the PT_XLA_DEBUG log never lists; set aside, the log's 3 compilations pair with the 3 step
    modules and the cache hits between them are seen (the restore is one graph among reused ones, not growth)."""
    from hlodiff.dumps.executions import runtime_module

    assert runtime_module("ReplicateShardedData.6") and runtime_module("module_0002.ReplicateShardedData.6.txt")
    assert not runtime_module("SyncTensorsGraph.175") and not runtime_module("module_0000.SyncTensorsGraph.175.txt")
    res = cli("explain-recompile", *_argv("scenarios/torch_xla/spmd_load_state_mid"), codes=(1,))
    assert "ReplicateShardedData modules in the XLA dump" in res.stderr + res.stdout
    doc = _doc("scenarios/torch_xla/spmd_load_state_mid", codes=(1,))
    assert [f["pattern"]["letters"] for f in doc["families"]] == ["ABBBCBB"]
