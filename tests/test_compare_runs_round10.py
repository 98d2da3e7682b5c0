"""compare-runs rules learned from the tenth blind round across a persistent cache (fixtures/scenarios/runs/runs10_*):
one test per row, each beside the look-alikes that share the row's evidence but one fact and must keep the answer
they had."""

from __future__ import annotations

import re

from runs_helpers import RUNS, compare_runs as _compare, copy_runs as _copy, runs_headline as _head, \
    without_counter_prints
from hlodiff.dumps.compile_cache import read_jax_cache_log
from hlodiff.explain.across_runs import REASONS
from hlodiff.explain.program_differences import length_dimension
from hlodiff.explain.run_differences import JAX_SETTING_OPTIONS, KeyDifference, jax_setting_of
from hlodiff.render.across_runs_fixes import CACHE_FIXES, GRAPH_FIXES


def test_table_rows_are_the_ones_tested():
    assert {"check_contents", "unknown_entry_there", "debug_metadata"} <= set(CACHE_FIXES)
    assert "input_length" in GRAPH_FIXES
    assert {"check_contents", "debug_metadata"} <= set(REASONS)
    assert {("xla_backend_optimization_level", "0"), ("xla_llvm_disable_expensive_passes", "true")} <= set(
        JAX_SETTING_OPTIONS)


# -- a logs-only run B pairs its compilations by trace ----------------------------------------------------------------

def test_a_new_shape_in_a_logs_only_run_b_is_a_new_program_not_a_miss():
    # first try: "run_b compiled again the one program run_a had compiled; jit_train_step: another cache key", exit 1
    # (run B's f32[8,16] train step was loaded and left no line; its one miss, the f32[4,16] last batch, was paired
    # with run A's f32[8,16] program)
    doc = _compare(RUNS / "runs10_last_batch_control", codes=(0,))
    assert doc["headline"] is None
    assert [(c["program"], c["verdict"]) for c in doc["compilations"]] == [("jit_train_step", "new")]
    assert "logged a persistent-cache miss only for programs run_a never compiled" in doc["summary"]
    assert "no cache configured" not in doc["summary"]  # a miss was logged: a cache was there


def test_the_reader_counts_each_functions_traces():
    b = read_jax_cache_log(str(RUNS / "runs10_last_batch_control" / "run_b" / "stderr.log"))
    assert [(c.module_name, c.trace) for c in b.compilations] == [("jit_train_step", 1)]
    a = read_jax_cache_log(str(RUNS / "runs10_last_batch_control" / "run_a" / "stderr.log"))
    assert [(c.module_name, c.trace) for c in a.compilations] == [("jit_train_step", 0), ("jit_evaluate", 0)]
    # look-alike: a log with Compiling lines counts no traces (its compilations are all there)
    full = read_jax_cache_log(str(RUNS / "runs10_disable_opts" / "run_b" / "stderr.log"))
    assert all(c.trace is None for c in full.compilations)


def test_lookalike_without_the_retrace_explanation_pairs_as_before(tmp_path):
    # the "for train_step defined at ... different input types" block removed: nothing says which trace the miss
    # followed, so it pairs with run A's first program, as before (another key, and the runs cannot tell why)
    folder = _copy("runs10_last_batch_control", tmp_path)
    log = folder / "run_b" / "stderr.log"
    log.write_text(re.sub(r"  for train_step defined at [^\n]*\n", "", log.read_text()))
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")


def test_lookalike_silent_run_b_keeps_both_stories():
    # runs9_alloc_env_control: run B logged no miss at all: loaded, or no cache (both said)
    doc = _compare(RUNS / "runs9_alloc_env_control", codes=(0,))
    assert doc["headline"] is None and "no cache" in doc["summary"]


# -- JAX_SETTING_OPTIONS: jax_disable_most_optimizations ---------------------------------------------------------------

def test_disable_most_optimizations_is_named_not_xla_flags():
    # first try: "it comes from XLA_FLAGS (--xla_backend_optimization_level) or from jax.jit(..., compiler_options=...)"
    head = _head("runs10_disable_opts")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "xla_flag")
    assert "jax_disable_most_optimizations" in head["fix"]
    assert "XLA_FLAGS" not in head["fix"] and "compiler_options" not in head["fix"]


def test_one_of_the_settings_options_alone_is_a_flag():
    level = KeyDifference("debug_options", "xla_backend_optimization_level", None, "0")
    passes = KeyDifference("debug_options", "xla_llvm_disable_expensive_passes", None, "true")
    assert jax_setting_of(level, [level, passes])[1] == "B"
    assert jax_setting_of(level, [level]) is None  # --xla_backend_optimization_level=0 in XLA_FLAGS, say
    assert jax_setting_of(level) is None
    remat = KeyDifference("debug_options", "xla_disable_hlo_passes", None, '"rematerialization"')
    assert jax_setting_of(remat)[0].startswith("jax_compiler_enable_remat_pass")  # a one-option setting unchanged


def test_lookalike_remat_pass_keeps_its_setting():
    assert "remat" in _head("runs4_remat_pass")["fix"]


# -- check_contents: JAX's cache verification mode --------------------------------------------------------------------

def test_a_verifying_cache_is_named_from_its_error():
    # first try: "nothing captured says why; capture both runs with JAX_EXPLAIN_CACHE_MISSES=1 and keep the cache
    # folder's listing" (both were)
    head = _head("runs10_check_contents")
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "check_contents")
    assert "jax_compilation_cache_check_contents" in head["fix"] and "deserializ" not in head["fix"]


def test_without_the_error_an_entry_that_was_there_names_what_to_check(tmp_path):
    # a verification that passed raises nothing: the same key, the entry in the listing, no read error
    folder = _copy("runs10_check_contents", tmp_path)
    log = folder / "run_b" / "stderr.log"
    log.write_text("".join(t for t in log.read_text().splitlines(keepends=True) if "inconsistency" not in t))
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "unknown")
    assert "jax_compilation_cache_check_contents" in head["fix"] and "another folder" in head["fix"]
    assert "capture both runs" not in head["fix"]


def test_without_the_entry_in_the_listing_it_is_not_a_verifying_cache(tmp_path):
    folder = _copy("runs10_check_contents", tmp_path)
    log = folder / "run_b" / "stderr.log"
    log.write_text("".join(t for t in log.read_text().splitlines(keepends=True) if "inconsistency" not in t))
    for listing in folder.glob("run_*/cache_listing.txt"):
        listing.write_text("".join(t for t in listing.read_text().splitlines(keepends=True) if "train_step" not in t))
    head = _compare(folder)["headline"]
    assert head["reason"] == "entry_missing" and "check_contents" not in head["fix"]


def test_lookalikes_with_a_reason_keep_it():
    assert _head("runs5_cut_entries")["reason"] == "read_failed"
    assert _head("runs_threshold")["reason"] == "below_compile_time"


# -- input_length: a length, not a batch size -------------------------------------------------------------------------

def _d(a: str, b: str) -> KeyDifference:
    return KeyDifference("parameter", "x", a, b)


def test_a_length_dimension_is_one_non_leading_dimension_between_the_same_sizes():
    assert length_dimension([_d("s32[8,122]", "s32[8,115]"), _d("f32[8,122]", "f32[8,115]")]) == 1
    assert length_dimension([_d("f32[8,16]", "f32[12,16]")]) is None  # a batch size
    assert length_dimension([_d("f32[8,224,224,3]", "f32[8,256,256,3]")]) is None  # two dimensions
    assert length_dimension([_d("s32[8,122]", "s32[8,115]"), _d("s32[8,64]", "s32[8,70]")]) is None
    assert length_dimension([_d("s32[122]", "s32[115]")]) is None  # no batch dimension to keep
    assert length_dimension([_d("s32[8,122]", "f32[8,115]")]) is None  # another type


def test_a_length_padded_to_random_data_says_pad_not_batch_size():
    # first try: "... feed the same shapes (batch size, sequence length) in both runs to reuse the cache"
    head = _head("runs10_pad_longest")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "shape")
    assert "pad to a fixed length" in head["fix"] and "bucket" in head["fix"]
    assert "batch size" not in head["fix"]


def test_lookalikes_with_another_batch_size_keep_the_batch_words():
    for name in ("runs_batch_env", "runs10_torch_batch_argv"):
        head = _head(name)
        assert head["reason"] == "shape" and "batch size" in head["fix"] and "pad to a fixed length" not in head["fix"]
    assert "another model" in _head("runs_torch_width")["fix"]  # the weights' shapes: state, not a length


# -- debug_metadata: torch_xla's XLA_HLO_DEBUG / XLA_IR_DEBUG in the graph hash ---------------------------------------

def test_debug_metadata_on_one_side_names_the_debug_settings():
    # first try: "the same HLO under another graph hash, and the dumped options are the same: compare what else the
    # runs' environments set (torch_xla version, XLA_FLAGS, PJRT_DEVICE)"
    head = _head("runs10_torch_hlo_debug")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "debug_metadata")
    assert "XLA_HLO_DEBUG" in head["fix"] and "did not change" in head["fix"]
    assert not any(w in head["fix"] for w in ("shape", "dtype", "deserializ"))


def test_lookalike_without_metadata_on_either_side_stays_unexplained(tmp_path):
    folder = without_counter_prints(_copy("runs10_torch_hlo_debug", tmp_path))
    for dump in (folder / "run_b" / "dump").glob("*.txt"):
        dump.write_text(re.sub(r", metadata=\{[^}]*\}", "", dump.read_text()))
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")


def test_lookalike_metadata_on_both_sides_and_one_hash_is_not_this_row():
    assert _head("runs_torch_identical")["reason"] == "not_loadable"  # both captured with XLA_HLO_DEBUG=1
