"""compare-runs rules learned from the fifth blind round across a persistent cache (fixtures/scenarios/runs/runs5_*):
one test per row it added (REASONS' `read_failed`, `renamed`, `metadata_in_key`; PRNG_KEY_SHAPES; CACHE_FIXES'
`read_failed`, `renamed`, `metadata_in_key`, `same_key_precision`, `same_key_program`; GRAPH_FIXES' `prng_impl`),
each beside a look-alike that shares the row's evidence but one fact and must keep the answer it had; and the
round's two controls."""

from __future__ import annotations

import shutil

import pytest

from runs_helpers import (RUNS, compare_runs as _compare, runs_headline as _head, copy_runs as _copy,
                          without_counter_prints)
from hlodiff.dumps.compile_cache import read_jax_cache_log
from hlodiff.explain.across_runs import REASONS, Verdict
from hlodiff.explain.program_differences import PRNG_KEY_SHAPES, SAME_KEY_PROGRAM
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.render.across_runs import CACHE_FIXES, GRAPH_FIXES, fix_text

def test_table_rows_are_the_ones_tested():
    assert {"read_failed", "renamed", "metadata_in_key"} <= set(REASONS)
    assert PRNG_KEY_SHAPES == {"u32[2]": "threefry2x32", "u32[4]": "rbg", "u32[2,2]": "rbg"}
    assert {"read_failed", "renamed", "metadata_in_key", "same_key_precision", "same_key_program"} <= set(CACHE_FIXES)
    assert "prng_impl" in GRAPH_FIXES


# -- read_failed: an entry found under the key and not readable ----------------------------------------------------

def test_an_entry_jax_could_not_read_is_named_with_its_error():
    """The cache copy cut short before run B: JAX found both keys, warned "Error reading persistent compilation
    cache entry" and compiled; the fix quotes the error and says to delete the broken entries."""
    head = _head("runs5_cut_entries")
    assert (head["verdict"], head["reason"], head["count"]) == ("miss_same_key", "read_failed", 2)
    assert "incomplete or truncated stream" in head["fix"] and "delete" in head["fix"]
    assert "evict" not in head["fix"] and "writable" not in head["fix"]


def test_the_read_warning_belongs_to_the_compilation_it_interrupts(tmp_path):
    """The warning comes between a `Compiling` line and its miss: it marks that compilation, and a warning for a
    program not being compiled marks nothing."""
    log = tmp_path / "stderr.log"
    log.write_text(
        "Compiling jit(f) with global shapes and types (ShapedArray(float32[2]),).\n"
        "UserWarning: Error reading persistent compilation cache entry for 'jit_g': error: bad\n"
        "UserWarning: Error reading persistent compilation cache entry for 'jit_f': error: Error -5 while "
        "decompressing data\n"
        "PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key 'jit_f-" + "a" * 64 + "'\n"
        "Finished XLA compilation of jit(f) in 0.5 sec\n")
    (c,) = read_jax_cache_log(str(log)).compilations
    assert c.read_error == "error: Error -5 while decompressing data" and c.lookup == "miss"


def test_lookalike_without_the_warning_no_broken_entry_is_claimed(tmp_path):
    """The same runs with run B's warnings filtered out: the same key, the entry listed, nothing says it was
    unreadable: not read_failed (the verdict says what was seen)."""
    folder = _copy("runs5_cut_entries", tmp_path)
    log = folder / "run_b" / "stderr.log"
    log.write_text("".join(line for line in log.read_text().splitlines(keepends=True)
                           if "Error reading" not in line and "warnings.warn" not in line))
    head = _compare(folder)["headline"]
    assert head["verdict"] == "miss_same_key" and head["reason"] != "read_failed"
    assert "delete" not in head["fix"]


def test_lookalike_an_entry_never_written_keeps_write_failed():
    """runs_cache_readonly: run A could not write; run B found nothing to read."""
    assert _head("runs_cache_readonly")["reason"] == "write_failed"


# -- renamed: the same program under another function name ---------------------------------------------------------

def test_a_renamed_jitted_function_is_the_program_run_a_cached():
    """train_step renamed sgd_step in run B: JAX names and hashes the module after the function; run B compiled
    what run A had cached under the old name (before: `new`, nothing to report, exit 0)."""
    doc = _compare(RUNS / "runs5_renamed_step")
    head = doc["headline"]
    assert (head["verdict"], head["reason"], head["programs"]) == ("miss_key_differs", "renamed", ["jit_sgd_step"])
    assert "jit_train_step" in head["fix"] and "renamed" in head["fix"]
    step = next(c for c in doc["compilations"] if c["program"] == "jit_sgd_step")
    assert step["differences"] == [{"source": "module", "name": "function name", "a": "jit_train_step",
                                    "b": "jit_sgd_step"}]


def test_lookalike_a_program_run_a_never_had_stays_new():
    """runs_new_eval_control: run B also compiles an eval step that is no program of run A: new, no headline."""
    doc = _compare(RUNS / "runs_new_eval_control", codes=(0,))
    assert doc["headline"] is None
    assert [c["verdict"] for c in doc["compilations"] if c["program"] == "jit_evaluate"] == ["new"]


# -- metadata_in_key: the same program, other source lines, another key --------------------------------------------

def test_only_source_lines_differ_under_another_key():
    """jax_compilation_cache_include_metadata_in_key on, the step four lines lower in run B: another key, the
    programs differ in their source lines only; the fix names the setting."""
    head = _head("runs5_metadata_in_key")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "metadata_in_key")
    assert "jax_compilation_cache_include_metadata_in_key" in head["fix"]
    assert "_line_moved_a.py:9" in head["fix"] and "_line_moved_b.py:14" in head["fix"]


def test_lookalike_the_same_lines_under_another_key_stay_unknown(tmp_path):
    """The same runs with run B's program dumped as run A's (the same lines): nothing seen differs, the key does:
    unknown, with what to compare, never the metadata setting."""
    folder = _copy("runs5_metadata_in_key", tmp_path)
    name = "module_0000.jit_train_step.before_optimizations.txt"
    shutil.copy(folder / "run_a" / "dump" / name, folder / "run_b" / "dump" / name)
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")
    assert "metadata" not in head["fix"]


def test_lookalike_moved_lines_with_the_setting_off_load():
    """runs_line_moved_control: the same edit, the setting off: both programs load."""
    assert _head("runs_line_moved_control", codes=(0,)) is None


# -- GRAPH_FIXES: prng_impl -----------------------------------------------------------------------------------------

def test_another_prng_implementation_names_the_setting_not_the_shapes():
    """JAX_DEFAULT_PRNG_IMPL=rbg in run B: the key is u32[4] (u32[2,2] into fold_in), the draw is
    rng-bit-generator; the fix names jax_default_prng_impl, never "the model changed" or "feed the same shapes"."""
    doc = _compare(RUNS / "runs5_prng_impl")
    head = doc["headline"]
    assert head["verdict"] == "miss_hlo_differs" and "jax_default_prng_impl" in head["fix"]
    assert "another model" not in head["fix"] and "same shapes" not in head["fix"]
    step = next(c for c in doc["compilations"] if c["program"] == "jit_train_step")
    assert step["differences"] == [{"source": "lowering", "name": "jax_default_prng_impl", "a": "threefry2x32",
                                    "b": "rbg"}]


def test_lookalike_input_shapes_keep_the_input_fix():
    """runs_batch_env: f32 inputs of another batch size, no random bits: the inputs' fix."""
    assert "feed the same shapes" in _head("runs_batch_env")["fix"]


def test_lookalike_threefry_counter_keeps_its_setting():
    """runs4_threefry: threefry in both runs, keys of one shape: jax_threefry_partitionable, not the PRNG."""
    head = _head("runs4_threefry")
    assert "jax_threefry_partitionable" in head["fix"] and "prng_impl" not in head["fix"]


# -- CACHE_FIXES: same_key_precision, same_key_program --------------------------------------------------------------

def test_one_graph_hash_over_two_precisions_is_said():
    """torch_xla, set_mat_mul_precision("highest") in run B: the graph hash (the key) is the same, the dots'
    precision is not; the CPU could not load the entry, and the fix warns that a device that can would run run
    A's program."""
    doc = _compare(RUNS / "runs5_torch_matmul_precision")
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "not_loadable")
    assert "set_mat_mul_precision" in head["fix"] and "run A's program" in head["fix"]
    assert doc["compilations"][0]["differences"] == [{"source": SAME_KEY_PROGRAM, "name": "operand_precision",
                                                      "a": "default", "b": "highest,highest"}]


def test_lookalike_one_program_under_one_hash_keeps_not_loadable(tmp_path):
    """The same runs with run B's program dumped as run A's: one program, one key: the CPU's not_loadable fix (the
    inferred one since round 6: no warning or metrics report shows the failed load)."""
    folder = without_counter_prints(_copy("runs5_torch_matmul_precision", tmp_path))
    name = "module_0000.SyncTensorsGraph.92.before_optimizations.txt"
    shutil.copy(folder / "run_a" / "dump" / name, folder / "run_b" / "dump" / name)
    head = _compare(folder)["headline"]
    assert head["reason"] == "not_loadable" and head["fix"].startswith("this backend cannot load cached executables")
    assert "precision" not in head["fix"]


def test_another_program_under_one_hash_without_a_precision_difference():
    """Another difference under one key (not a precision): the generic row, both dumps named."""
    v = Verdict("ab12", "miss_same_key", "not_loadable",
                differences=[KeyDifference(SAME_KEY_PROGRAM, "HLO", "run_a/dump#0", "run_b/dump#0")])
    assert fix_text(v) == CACHE_FIXES["same_key_program"].format(a="run_a/dump#0", b="run_b/dump#0")


# -- the round's controls -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["runs5_dump_proto_control", "runs5_quiet_log_control"])
def test_controls_have_no_headline(name):
    """A dump flag added in run B (left out of the key); run B's log settings off (a silent log, every program
    loaded): nothing is blamed."""
    doc = _compare(RUNS / name, codes=(0,))
    assert doc["headline"] is None and {c["verdict"] for c in doc["compilations"]} == {"hit"}
