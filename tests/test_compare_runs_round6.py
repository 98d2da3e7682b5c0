"""compare-runs rules learned from the sixth blind round across a persistent cache (fixtures/scenarios/runs/runs6_*):
one test per row it added (COMPILE_OPTION_SETTINGS, LONG_TYPES, the relative cache folder, torch_xla's
PERSISTENT_COUNTERS; CACHE_FIXES' `jax_compile_setting`, `entry_missing_relative`, `no_cache_torch_xla`,
`not_loadable_inferred`; GRAPH_FIXES' `long32`), each beside a look-alike that shares the row's evidence but one fact
and must keep the answer it had; and the round's two controls."""

from __future__ import annotations


import pytest

from helpers import FIXTURES, cli_json
from runs_helpers import (RUNS, compare_runs as _compare, runs_headline as _head, copy_runs as _copy,
                          without_counter_prints)
from hlodiff.explain.across_runs import Verdict
from hlodiff.explain.across_runs_torch import PERSISTENT_COUNTERS
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.explain.run_settings import (COMPILE_OPTION_SETTINGS, LONG_TYPES, long_width_differences,
                                          relative_cache_folder)
from hlodiff.hlo.parser import parse_module
from hlodiff.render.across_runs import CACHE_FIXES, GRAPH_FIXES, fix_text

def test_table_rows_are_the_ones_tested():
    assert set(COMPILE_OPTION_SETTINGS) == {"use_shardy_partitioner", "exec_time_optimization_effort",
                                            "memory_fitting_effort", "optimization_level"}
    assert LONG_TYPES == {"s64": "s32", "u64": "u32"}
    assert PERSISTENT_COUNTERS == ("PersistentCacheHit", "PersistentCacheMiss", "PersistentCacheDeserializeFailure")
    assert {"jax_compile_setting", "entry_missing_relative", "no_cache_torch_xla", "not_loadable_inferred"} <= set(
        CACHE_FIXES)
    assert "long32" in GRAPH_FIXES


# -- COMPILE_OPTION_SETTINGS: a compile option a JAX setting writes -----------------------------------------------

def test_shardy_off_in_one_run_names_the_jax_setting_not_a_flag():
    """JAX_USE_SHARDY_PARTITIONER=false in run B: the same HLO, `use_shardy_partitioner: true` in run A's compile
    options only; the fix names the setting and says it is no XLA flag."""
    head = _head("runs6_shardy_off")
    assert (head["verdict"], head["reason"], head["count"]) == ("miss_key_differs", "compile_option", 2)
    assert "jax_use_shardy_partitioner" in head["fix"] and "JAX_USE_SHARDY_PARTITIONER" in head["fix"]
    assert "XLA_FLAGS" not in head["fix"]


@pytest.mark.parametrize("name", sorted(COMPILE_OPTION_SETTINGS))
def test_each_compile_option_row_names_its_setting(name):
    v = Verdict("jit_f", "miss_key_differs", reason="compile_option",
                differences=[KeyDifference("compile_options.textproto", name, None, "0.5")])
    fix = fix_text(v)
    assert COMPILE_OPTION_SETTINGS[name].split(" ")[0] in fix and f"{name} is 0.5 in run B" in fix


def test_lookalike_another_compile_option_keeps_the_plain_words():
    """A compile option no JAX setting is known to write: "compile with the same options", no setting guessed."""
    v = Verdict("jit_f", "miss_key_differs", reason="compile_option",
                differences=[KeyDifference("compile_options.textproto", "use_spmd_partitioning", "true", None)])
    assert fix_text(v) == CACHE_FIXES["compile_option"].format(name="use_spmd_partitioning", a="true", b="not set")


def test_lookalike_a_debug_option_of_the_same_name_is_not_the_setting():
    """The table reads executable_build_options only: a debug option spelled alike is a flag."""
    v = Verdict("jit_f", "miss_key_differs", reason="xla_flag",
                differences=[KeyDifference("debug_options", "optimization_level", "1", "2")])
    assert "jax_optimization_level" not in fix_text(v)


def test_lookalike_the_remat_pass_keeps_its_debug_option_setting():
    head = _head("runs4_remat_pass")
    assert head["reason"] in ("xla_flag", "compile_option") and "jax_compiler_enable_remat_pass" in head["fix"]


# -- LONG_TYPES: torch_xla's XLA_USE_32BIT_LONG ---------------------------------------------------------------------

def test_int64_lowered_as_int32_in_one_torch_run_names_xla_use_32bit_long():
    """XLA_USE_32BIT_LONG=1 in run B: the labels are s32[8] instead of s64[8]; the fix names the variable, not
    JAX's x64 nor a per-step cast."""
    head = _head("runs6_torch_long32")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    assert "XLA_USE_32BIT_LONG" in head["fix"] and "run B's" in head["fix"]
    assert "jax_enable_x64" not in head["fix"] and "on some steps" not in head["fix"]


class _Rec:
    def __init__(self, text: str):
        self._module = parse_module(text)

    def module(self):
        return self._module


def _program(label: str, extra: str = "") -> _Rec:
    return _Rec(f"HloModule m\n\nENTRY e {{\n  p0 = {label}[8]{{0}} parameter(0)\n  p1 = f32[8]{{0}} parameter(1)\n"
                f"{extra}  ROOT c = f32[8]{{0}} convert(p0)\n}}\n")


def test_long_width_reads_every_int64_turned_int32():
    assert long_width_differences(_program("s64"), _program("s32")) == [
        KeyDifference("element_types", "64-bit integers", "s64", None)]


def test_lookalike_int64_left_on_the_other_side_is_not_the_setting():
    """Run B still has an s64 of its own: one tensor's dtype changed in the code, not every int64 lowered."""
    keep = "  k = s64[2]{0} constant({1, 2})\n"
    assert long_width_differences(_program("s64", keep), _program("s32", keep)) == []
    assert long_width_differences(_program("s64"), _program("s32", keep)) == []


def test_lookalike_a_float64_is_the_programs_own():
    assert long_width_differences(_program("f64"), _program("f32")) == []


def test_lookalike_jax_x64_keeps_its_setting():
    head = _head("runs_x64")
    assert "jax_enable_x64" in head["fix"] and "XLA_USE_32BIT_LONG" not in head["fix"]


def test_lookalike_torch_autocast_keeps_precision():
    head = _head("runs4_torch_autocast")
    assert "autocast" in head["fix"] and "XLA_USE_32BIT_LONG" not in head["fix"]


# -- a relative cache folder ------------------------------------------------------------------------------------------

def test_a_relative_cache_folder_under_another_working_directory_is_said():
    """Hydra's chdir: the same keys in both runs, run A's entries written under another working directory; the
    dumped options show the relative folder `jax_cache`; the fix says to make it absolute."""
    head = _head("runs6_hydra_chdir")
    assert (head["verdict"], head["reason"], head["count"]) == ("miss_same_key", "entry_missing", 2)
    assert "relative path jax_cache" in head["fix"] and "absolute" in head["fix"]
    assert "evict" not in head["fix"]


def test_relative_cache_folder_reads_the_dumped_options():
    key = "debug_options:xla_gpu_per_fusion_autotune_cache_dir"
    assert relative_cache_folder({key: ('"jax_cache/xla_gpu_per_fusion_autotune_cache_dir"',)}) == "jax_cache"
    assert relative_cache_folder({key: ('"/x/jax_cache/xla_gpu_per_fusion_autotune_cache_dir"',)}) is None
    assert relative_cache_folder({key: ('"C:\\\\cache/xla_gpu_per_fusion_autotune_cache_dir"',)}) is None
    assert relative_cache_folder(None, {}) is None


def test_lookalike_an_absolute_folder_in_both_runs_claims_nothing_relative(tmp_path):
    """The same pair with the folder written absolute in every dumped option: nothing says why B missed, so no
    relative folder is blamed (the verdict says what was seen)."""
    folder = _copy("runs6_hydra_chdir", tmp_path)
    for f in folder.rglob("*"):
        if f.is_file() and (f.name.endswith("debug_options") or f.name == "compile_options.textproto"):
            f.write_text(f.read_text().replace('"jax_cache/', '"/shared/jax_cache/'))
    head = _compare(folder)["headline"]
    assert head["verdict"] == "miss_same_key" and "relative" not in head["fix"]


def test_lookalike_an_entry_never_written_keeps_its_threshold(tmp_path):
    """The same pair where run A did not write the eval step (under the compile-time threshold): that reason is
    known and leads; the relative folder is said only for what run A wrote."""
    folder = _copy("runs6_hydra_chdir", tmp_path)
    log = folder / "run_a" / "stderr.log"
    log.write_text("".join(
        "Not writing persistent cache entry for 'jit_evaluate' because it took < 1.00 seconds to compile (0.14s)\n"
        if "Writing jit_evaluate" in line else line for line in log.read_text().splitlines(keepends=True)))
    doc = _compare(folder)
    reasons = {c["program"]: c["reason"] for c in doc["compilations"]}
    assert reasons == {"jit_train_step": "entry_missing", "jit_evaluate": "below_compile_time"}


def test_lookalike_two_absolute_folders_keep_other_cache_folder():
    head = _head("runs_job_cache_dir")
    assert head["reason"] == "other_cache_folder" and "relative" not in head["fix"]


# -- torch_xla: no lookup in run B's metrics, and a not-loadable entry inferred -----------------------------------

_METRICS = "Counter: UncachedCompile\n  Value: 1\nCounter: CreateXlaTensor\n  Value: 40\n"


def test_metrics_without_a_cache_lookup_say_run_b_had_no_cache(tmp_path):
    """run B's metrics report counts a compilation and no persistent-cache counter: it had no cache (its
    XLA_PERSISTENT_CACHE_PATH was lost), whatever this CPU could have loaded."""
    folder = _copy("runs6_torch_env_cache", tmp_path)
    (folder / "run_b" / "metrics.txt").write_text(_METRICS)
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "no_cache")
    assert "XLA_PERSISTENT_CACHE_PATH" in head["fix"] and "initialize_cache" in head["fix"]
    assert "deserializ" not in head["fix"]


def test_lookalike_metrics_with_a_failed_load_stay_not_loadable(tmp_path):
    folder = _copy("runs6_torch_env_cache", tmp_path)
    (folder / "run_b" / "metrics.txt").write_text(_METRICS + "Counter: PersistentCacheDeserializeFailure\n"
                                                             "  Value: 1\n")
    head = _compare(folder)["headline"]
    assert head["reason"] == "not_loadable" and head["fix"] == CACHE_FIXES["not_loadable"]


def test_an_inferred_not_loadable_says_what_else_it_could_be(tmp_path):
    """No metrics, no warning (the script's counter print removed): the CPU cannot load entries (known, not seen),
    and nothing shows run B looked: the fix says both, and what to keep to tell them apart; never "nothing to
    change" alone."""
    head = _compare(without_counter_prints(_copy("runs6_torch_env_cache", tmp_path)))["headline"]
    assert head["reason"] == "not_loadable"
    assert "XLA_PERSISTENT_CACHE_PATH" in head["fix"] and "metrics report" in head["fix"]
    assert not head["fix"].startswith("nothing to change")


def test_lookalike_an_observed_failed_load_keeps_nothing_to_change():
    """torch_xla/cache_reload: run B's stderr has the 'Failed to deserialize executable' warning: seen, so the
    plain not_loadable fix."""
    head = cli_json("compare-runs", str(FIXTURES / "torch_xla" / "cache_reload" / "run_a"),
                    str(FIXTURES / "torch_xla" / "cache_reload" / "run_b"), codes=(0, 1))["headline"]
    assert head["reason"] == "not_loadable" and head["fix"] == CACHE_FIXES["not_loadable"]


# -- the round's controls -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["runs6_hash_tokens_control", "runs6_tracebacks_control"])
def test_controls_load_everything(name):
    doc = _compare(RUNS / name, codes=(0,))
    assert doc["headline"] is None and doc["recompiled"] == 0
