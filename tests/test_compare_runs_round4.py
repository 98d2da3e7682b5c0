"""compare-runs rules learned from the fourth blind round across a persistent cache (fixtures/scenarios/runs/runs4_*):
one test per row of the tables it added (JAX_SETTING_OPTIONS, LOWERING_SETTINGS, GRAPH_FIXES' `lowering` and
`aliasing`, CACHE_FIXES' `same_folder_spelled_apart`, `entry_missing_empty`, `entry_missing_empty_torch_xla`,
`jax_setting`), each beside a look-alike that shares the row's evidence but one fact and must keep the answer it
had; and the round's two controls."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runs_helpers import RUNS, compare_runs as _compare, runs_headline as _head
from hlodiff.explain.program_differences import LOW_PRECISION_TYPES, LOWERING_SETTINGS
from hlodiff.explain.run_differences import (JAX_SETTING_OPTIONS, KeyDifference, jax_setting_of,
                                             same_folder_spelled_apart)
from hlodiff.render.across_runs import CACHE_FIXES, GRAPH_FIXES

def _at(head: dict) -> tuple[str, int] | None:
    loc = head["location"]
    return None if loc is None else (Path(loc["file"]).name, loc["line"])


def test_table_rows_are_the_ones_tested():
    assert JAX_SETTING_OPTIONS[("xla_disable_hlo_passes", "rematerialization")] == \
        "jax_compiler_enable_remat_pass=False (JAX_COMPILER_ENABLE_REMAT_PASS=false)"  # kept (later rounds add rows)
    assert LOWERING_SETTINGS == (("threefry2x32", "iota_2x32_shape", "jax_threefry_partitionable"),)
    assert {"lowering", "aliasing", "precision"} <= set(GRAPH_FIXES)
    assert LOW_PRECISION_TYPES == ("bf16", "f16")
    assert {"same_folder_spelled_apart", "entry_missing_empty", "entry_missing_empty_torch_xla",
            "jax_setting"} <= set(CACHE_FIXES)


# -- JAX_SETTING_OPTIONS: the remat pass ----------------------------------------------------------------------------

def test_a_debug_option_a_jax_setting_wrote_names_the_setting():
    """JAX_COMPILER_ENABLE_REMAT_PASS=false in run B: the same HLO under another key; the dumped debug option
    (xla_disable_hlo_passes="rematerialization") is named with the JAX setting that writes it, not XLA_FLAGS."""
    head = _head("runs4_remat_pass")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "xla_flag")
    assert "jax_compiler_enable_remat_pass" in head["fix"] and "rematerialization" in head["fix"]
    assert "XLA_FLAGS" not in head["fix"]


def test_lookalike_other_values_of_the_option_are_no_jax_setting():
    """The same option with a value no JAX setting writes, or set in both runs, is a flag the user gave."""
    assert jax_setting_of(KeyDifference("debug_options", "xla_disable_hlo_passes", None, '"rematerialization"')) == (
        "jax_compiler_enable_remat_pass=False (JAX_COMPILER_ENABLE_REMAT_PASS=false)", "B")
    assert jax_setting_of(KeyDifference("debug_options", "xla_disable_hlo_passes", None, '"fusion"')) is None
    assert jax_setting_of(KeyDifference("debug_options", "xla_disable_hlo_passes", '"fusion"',
                                        '"rematerialization"')) is None


def test_lookalike_a_flag_from_xla_flags_keeps_its_words():
    """runs_xla_flag (--xla_cpu_multi_thread_eigen=false in XLA_FLAGS) keeps the XLA_FLAGS fix."""
    head = _head("runs_xla_flag")
    assert head["reason"] == "xla_flag" and "xla_cpu_multi_thread_eigen" in head["fix"]
    assert "jax_compiler" not in head["fix"]


# -- LOWERING_SETTINGS: jax_threefry_partitionable ------------------------------------------------------------------

def test_another_threefry_lowering_names_the_setting_at_the_draw():
    """JAX_THREEFRY_PARTITIONABLE=false in run B: the train step (bernoulli at :20) and the eager split are other
    programs; the headline names the setting, located at the draw the threefry call comes from."""
    doc = _compare(RUNS / "runs4_threefry")
    head = doc["headline"]
    assert head["verdict"] == "miss_hlo_differs" and _at(head) == ("runs4_threefry.py", 20)
    assert "jax_threefry_partitionable" in head["fix"] and "Python value" not in head["fix"]
    split = next(c for c in doc["compilations"] if c["program"] == "jit__threefry_split")
    assert split["differences"] == [{"source": "lowering", "name": "jax_threefry_partitionable", "a": "on",
                                     "b": "off"}]


def test_lookalike_a_baked_seed_with_one_lowering_keeps_its_story():
    """runs_time_seed: threefry in both runs with the same setting, the seed baked: no lowering difference, the
    constant's story and line as before."""
    doc = _compare(RUNS / "runs_time_seed")
    assert all(not any(d["source"] == "lowering" for d in c["differences"]) for c in doc["compilations"])
    assert "threefry" not in (doc["headline"]["fix"] or "")


# -- GRAPH_FIXES: aliasing ------------------------------------------------------------------------------------------

def test_donation_switched_on_is_another_program():
    """DONATE=1 in run B: the graphs are the same, the headers donate the parameters in run B only; another
    program (JAX lowers donation into what it hashes), not a key input nothing captured."""
    head = _head("runs4_donate_toggle")
    assert (head["verdict"], head["reason"], head["programs"]) == ("miss_hlo_differs", "aliasing", ["jit_step"])
    assert "donate_argnums" in head["fix"] and "in run B only" in head["fix"]


def test_lookalike_the_same_program_under_another_key_without_donation():
    """runs_flag_order_control / runs_xla_flag: the same HLO, no donation difference: not aliasing."""
    assert _head("runs_xla_flag")["reason"] == "xla_flag"
    assert _head("runs_flag_order_control", codes=(0,)) is None


# -- GRAPH_FIXES: precision ----------------------------------------------------------------------------------------

def test_autocast_in_one_run_is_said_for_two_runs():
    """torch_xla, AMP=1 in run B: the matmul in bf16; the fix says which run computes in bf16 and asks for one
    precision setting in both runs, not explain-recompile's "switched on or off between steps"."""
    doc = _compare(RUNS / "runs4_torch_autocast")
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    assert "only run B's program computes in bf16" in head["fix"] and "between steps" not in head["fix"]
    assert doc["compilations"][0]["differences"] == [{"source": "element_types", "name": "16-bit floats",
                                                      "a": None, "b": "bf16"}]


def test_lookalike_64_bit_types_keep_the_x64_fix():
    """runs_x64: the types only one run has are 64-bit: jax_enable_x64, not mixed precision."""
    head = _head("runs_x64")
    assert "jax_enable_x64" in head["fix"] and "mixed precision" not in head["fix"]


# -- CACHE_FIXES: same_folder_spelled_apart -------------------------------------------------------------------------

def test_one_folder_spelled_two_ways_says_so():
    """<root>/cache, then <root>/cache/../cache: one folder, two keys; the fix says it is one folder spelled apart
    and how to give one string."""
    head = _head("runs4_cache_path_spelling")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "other_cache_folder")
    assert "spelled two ways" in head["fix"] and "realpath" in head["fix"]


def test_lookalike_two_folders_keep_the_folder_fix():
    """runs_job_cache_dir: job_4411 and job_4412 are two folders: give both runs the same one (a folder named after
    a job id is another folder every job)."""
    head = _head("runs_job_cache_dir")
    assert head["reason"] == "other_cache_folder" and "give both runs the same folder" in head["fix"]
    assert "job id" in head["fix"] and "spelled two ways" not in head["fix"]
    assert not same_folder_spelled_apart("/x/cache/job_4411", "/x/cache/job_4412")
    assert same_folder_spelled_apart("/x/cache", "/x//cache/./")
    assert not same_folder_spelled_apart("cache", "./cache")  # relative: the working folders are not known


# -- CACHE_FIXES: entry_missing_empty(_torch_xla) -------------------------------------------------------------------

def test_nothing_written_by_torch_xla_names_readonly():
    """xr.initialize_cache(path, readonly=True) in both runs: the listing after run A is empty; the fix names
    readonly, not an eviction."""
    head = _head("runs4_torch_readonly")
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "entry_missing")
    assert "readonly=False" in head["fix"] and "evict" not in head["fix"]


def test_lookalike_a_listing_with_other_entries_keeps_the_eviction_fix(tmp_path):
    """The same runs with another entry in run A's listing: something was written, this entry is missing."""
    folder = Path(shutil.copytree(RUNS / "runs4_torch_readonly", tmp_path / "runs4_torch_readonly"))
    (folder / "run_a" / "cache_listing.txt").write_text("25056 176277991312165030585449375704362543801\n")
    head = _compare(folder)["headline"]
    assert head["reason"] == "entry_missing" and "evicts" in head["fix"] and "readonly" not in head["fix"]


def test_jax_entry_missing_from_an_empty_cache(tmp_path):
    """runs_cache_max_size with its warning lost and run A's listing emptied: JAX said it wrote the entry, the
    folder holds none: nothing was written there (JAX's words, not torch_xla's readonly)."""
    folder = Path(shutil.copytree(RUNS / "runs_cache_max_size", tmp_path / "runs_cache_max_size"))
    for log in folder.glob("run_*/stderr.log"):
        log.write_text("".join(line for line in log.read_text().splitlines(keepends=True)
                               if "exceeds the maximum cache size" not in line))
    (folder / "run_a" / "cache_listing.txt").write_text("")
    (folder / "run_b" / "cache_listing.txt").write_text("")
    head = _compare(folder)["headline"]
    assert head["reason"] == "entry_missing" and "holds no entry" in head["fix"] and "readonly" not in head["fix"]


def test_lookalike_torch_entry_present_stays_not_loadable():
    """runs_torch_identical: the listing holds the entry the CPU cannot load: not_loadable as before."""
    assert _head("runs_torch_identical")["reason"] == "not_loadable"


# -- the round's controls -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["runs4_debug_nans_control", "runs4_threshold_raised_control"])
def test_controls_have_no_headline(name):
    """JAX_DEBUG_NANS in run B; a higher write threshold in run B: both programs load, nothing is blamed."""
    doc = _compare(RUNS / name, codes=(0,))
    assert doc["headline"] is None and {c["verdict"] for c in doc["compilations"]} == {"hit"}
