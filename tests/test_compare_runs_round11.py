"""compare-runs rules learned from the eleventh blind round across a persistent cache
(fixtures/scenarios/runs/runs11_*): one test per row, each beside the look-alikes that share the row's evidence but
one fact and must keep the answer they had."""

from __future__ import annotations

import re

from runs_helpers import RUNS, compare_runs as _compare, copy_runs as _copy, runs_headline as _head
from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.dumps.cached_run import read_run
from hlodiff.explain.run_arguments import (ARGUMENT_DTYPES, ARGUMENT_ORDER, argument_dtype_differences,
                                           argument_order_differences)
from hlodiff.explain.mesh_axis_names import MESH_AXIS_NAMES, mesh_axis_name_differences
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.explain.run_repeats import REPEATED_WORK, repeated_work
from hlodiff.explain.run_verdicts import Verdict
from hlodiff.render.across_runs import fix_text
from hlodiff.render.across_runs_fixes import GRAPH_FIXES


def test_table_rows_are_the_ones_tested():
    assert {"argument_order", "argument_dtype", "precision_jax", "repeated_work", "mesh_axis_names"} <= set(GRAPH_FIXES)


def _step(name: str, run: str, program: str = "jit_train_step"):
    """A JAX run's first compilation of ``program``."""
    return next(r for r in read_run(str(RUNS / name / run), None, []).records if r.module_name == program)


# -- an OrderedDict's leaves in another order -------------------------------------------------------------------------

def test_an_ordered_config_in_another_key_order_is_a_reordered_program_at_the_call():
    # first try: "the same HLO under another cache key ... compare what else the key hashes (JAX and jaxlib
    # versions, platform, devices)": hlodiff's canonical form numbers parameters apart, JAX's key does not
    head = _head("runs11_ordered_config")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "reordered")
    assert head["location"]["line"] == 50  # the call that passed the config
    assert "OrderedDict" in head["fix"] and "plain dict" in head["fix"]
    assert "hp['lr'] 6, hp['weight_decay'] 8 in run A" in head["fix"]


def test_argument_order_reads_the_leaves_parameter_numbers():
    a, b = _step("runs11_ordered_config", "run_a"), _step("runs11_ordered_config", "run_b")
    [d] = argument_order_differences(a, b)
    assert (d.name, d.a, d.b) == (ARGUMENT_ORDER, "hp['lr'] 6, hp['weight_decay'] 8", "hp['lr'] 8, hp['weight_decay'] 6")
    assert argument_order_differences(a, a) == []  # the same program: nothing moved


def test_lookalike_a_plain_dict_in_another_key_order_stays_loaded():
    # runs7_config_order_control: a dict is flattened in sorted key order: the same program, loaded
    assert _compare(RUNS / "runs7_config_order_control", codes=(0,))["headline"] is None


def test_lookalike_a_leaf_added_keeps_the_pytree_leaves_words():
    # runs7_config_tree: weight_decay None then 0.0: another structure, not another order
    head = _head("runs7_config_tree")
    assert head["reason"] == "ops" and "takes arguments run A's does not" in head["fix"]
    a, b = _step("runs7_config_tree", "run_a"), _step("runs7_config_tree", "run_b")
    assert argument_order_differences(a, b) == []


# -- a checkpoint restored in another dtype ---------------------------------------------------------------------------

def test_parameters_restored_as_float16_name_the_arguments_not_autocast():
    # first try: "only run B's program computes in f16 (mixed precision: torch.autocast, ...)": JAX has no autocast
    head = _head("runs11_ckpt_f16")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    assert "p['w1'] f16[16,32]" in head["fix"] and "checkpoint" in head["fix"] and "astype" in head["fix"]
    assert "autocast" not in head["fix"]


def test_argument_dtypes_need_the_same_leaves_and_dimensions():
    a, b = _step("runs11_ckpt_f16", "run_a"), _step("runs11_ckpt_f16", "run_b")
    [d] = argument_dtype_differences(a, b)
    assert d.name == ARGUMENT_DTYPES and d.a == "p['w1'] f32[16,32], p['w2'] f32[32,4]"
    # look-alike: another shape is not a dtype of the same argument
    assert argument_dtype_differences(a, _step("runs_batch_env", "run_b")) == []


def test_lookalike_float64_checkpoint_is_converted_and_loaded():
    assert _compare(RUNS / "runs11_ckpt_f64_control", codes=(0,))["headline"] is None


def test_lookalike_x64_keeps_its_setting():
    head = _head("runs_x64")
    assert "jax_enable_x64" in head["fix"]


def test_a_jax_precision_inside_the_program_is_no_autocast():
    jax_b = CacheCompilation("train_step", "jit_train_step", 0, 1)
    v = Verdict("jit_train_step", "miss_hlo_differs", "dtype", b=jax_b,
                differences=[KeyDifference("element_types", "16-bit floats", None, "bf16")])
    said = fix_text(v)
    assert "autocast" not in said and "dtype=jnp.bfloat16" in said
    # look-alike: torch_xla's autocast pair keeps its words
    assert "torch.autocast" in _head("runs4_torch_autocast")["fix"]


# -- a loop traced into the step ran more times -------------------------------------------------------------------------

def test_more_micro_batches_say_the_loop_count_not_a_sync():
    # first try: "a value computed in the graph on some steps is device data ... sync at the same points"
    head = _head("runs11_torch_microbatches")
    assert head["verdict"] == "miss_hlo_differs"
    assert "micro-batches" in head["fix"] and "sync at the same points" not in head["fix"]
    assert "run B's step graph repeats run A's work" in head["fix"]


def test_repeated_work_wants_whole_passes_of_known_inputs():
    a = _torch_step("runs11_torch_microbatches", "run_a")
    b = _torch_step("runs11_torch_microbatches", "run_b")
    [d] = repeated_work(a, b)
    assert d.name == REPEATED_WORK and d.a.startswith("f32[4,16] x2, f32[4,4] x2")
    assert repeated_work(a, a) == []
    # look-alikes: a batch size (another input shape) and a model width (weights) are not repeats
    assert repeated_work(_torch_step("runs10_torch_batch_argv", "run_a"),
                         _torch_step("runs10_torch_batch_argv", "run_b")) == []
    assert repeated_work(_torch_step("runs_torch_width", "run_a"), _torch_step("runs_torch_width", "run_b")) == []


def test_lookalike_special_scalars_fed_keep_their_words():
    # runs9_torch_no_special_scalars: inputs added, as much work: the special-scalar words stay
    head = _head("runs9_torch_no_special_scalars")
    assert "XLA_NO_SPECIAL_SCALARS" in head["fix"] and "repeats" not in head["fix"]


def _torch_step(name: str, run: str):
    """A torch_xla run's largest graph (its training step)."""
    return max(read_run(str(RUNS / name / run), None, []).records, key=lambda r: len(r.text()))


# -- the line of the input the headline names ---------------------------------------------------------------------------

def test_the_line_is_the_one_that_made_the_input_the_summary_names(monkeypatch):
    # round 10's WRONG_NOW row: the summary named tokens, the line was the mask's (:37); the line that made an
    # argument is read from the user's source, on disk as a user has it
    monkeypatch.setenv("HLODIFF_SOURCE_MAP", f"/home/user/project={RUNS}")
    head = _head("runs10_pad_longest")
    assert head["location"]["line"] == 36
    assert re.search(r"tokens\.1", _compare(RUNS / "runs10_pad_longest")["compilations"][0]["cause"]["summary"])


def test_lookalike_batch_size_keeps_its_line(monkeypatch):
    monkeypatch.setenv("HLODIFF_SOURCE_MAP", f"/home/user/project={RUNS}")
    assert _head("runs_batch_env")["location"]["line"] in (18, 34, 35, 36)


# -- a mesh whose axes were renamed ------------------------------------------------------------------------------------

def test_renamed_mesh_axes_are_said_as_names_not_a_partitioning():
    # first try (right by the truth): "the mesh (its shape, axis names or device order) or the partition specs
    # differ": the runs showed which of them
    head = _head("runs11_mesh_axis_names")
    assert head["reason"] == "sharding"
    assert "only the mesh's axis names differ" in head["fix"] and "run A: data, model; run B: batch, model" in head["fix"]
    a, b = _step("runs11_mesh_axis_names", "run_a"), _step("runs11_mesh_axis_names", "run_b")
    [d] = mesh_axis_name_differences(a, b)
    assert (d.name, d.a, d.b) == (MESH_AXIS_NAMES, "data, model", "batch, model")
    assert mesh_axis_name_differences(a, a) == []


def test_lookalike_another_mesh_shape_keeps_the_sharding_words():
    # runs7_mesh_shape: 4x1 then 2x2 (another partitioning): not a name
    head = _head("runs7_mesh_shape")
    assert "only the mesh's axis names" not in head["fix"] and "build the same mesh" in head["fix"]
    assert mesh_axis_name_differences(_step("runs7_mesh_shape", "run_a"), _step("runs7_mesh_shape", "run_b")) == []


def test_lookalike_another_device_count_keeps_its_words():
    head = _head("runs_device_count")
    assert head["reason"] == "device_count" and "axis names" not in head["fix"]
