"""compare-runs rules learned from the ninth blind round across a persistent cache (fixtures/scenarios/runs/runs9_*):
one test per row, each beside the look-alikes that share the row's evidence but one fact and must keep the answer
they had."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runs_helpers import RUNS, compare_runs as _compare, copy_runs as _copy, runs_headline as _head, \
    without_counter_prints
from hlodiff.dumps.compile_cache import read_jax_cache_log
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.across_runs_torch import LOOKED_ELSEWHERE, found_nothing
from hlodiff.explain.per_program_options import set_for_this_program
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.explain.run_settings import FLOAT64_TYPES
from hlodiff.explain.seed_offset import SEED_OFFSET_SETTING, seed_offsets
from hlodiff.render.across_runs_fixes import ACROSS_RUNS_RULES, CACHE_FIXES, GRAPH_FIXES


def test_table_rows_are_the_ones_tested():
    assert {"unknown_key_no_dump", "xla_compiler_options", "entry_missing_elsewhere"} <= set(CACHE_FIXES)
    assert {"seed_offset", "float64", "special_scalar_across_runs"} <= set(GRAPH_FIXES)
    assert {r for r, row in ACROSS_RUNS_RULES.items() if row == "special_scalar_across_runs"} == {
        "constant_float_special", "constant_lr_special", "constant_int_special"}
    assert FLOAT64_TYPES == {"f64": "f32"}


# -- a JAX run captured without a dump (JAX_EXPLAIN_CACHE_MISSES=1 only) ---------------------------------------------

def _logs_only(name: str, tmp_path: Path, keep_compiling: bool = False) -> Path:
    """The scenario ``name`` as a user captures it without hlodiff: each run's stderr (its Compiling lines dropped
    unless ``keep_compiling``) and the cache listing, no dump."""
    folder = tmp_path / name
    for run in ("run_a", "run_b"):
        (folder / run).mkdir(parents=True)
        lines = (RUNS / name / run / "stderr.log").read_text().splitlines(keepends=True)
        kept = [t for t in lines if keep_compiling or not ("Compiling " in t or "Finished XLA compilation" in t)]
        (folder / run / "stderr.log").write_text("".join(kept))
        shutil.copy(RUNS / name / run / "cache_listing.txt", folder / run)
    return folder


def test_a_silent_run_b_captured_without_a_dump_is_no_miss_and_says_what_it_cannot_tell():
    # first try: "no dump here: expected graphs.hlo.N or an xla_dump folder", exit 2
    doc = _compare(RUNS / "runs9_alloc_env_control", codes=(0,))
    assert doc["headline"] is None
    assert "asked for none" not in doc["summary"]
    assert "traced train_step, evaluate" in doc["summary"] and "JAX_LOG_COMPILES=1" in doc["summary"]
    assert "no cache" in doc["summary"]  # the silence is a load, or a run without a cache: both said


def test_a_log_without_compiling_lines_opens_compilations_by_their_cache_lines():
    log = read_jax_cache_log(str(RUNS / "runs9_alloc_env_control" / "run_a" / "stderr.log"))
    assert log.without_compiles and log.traced == ["train_step", "evaluate"]
    assert [(c.module_name, c.lookup, c.written) for c in log.compilations] == [
        ("jit_train_step", "miss", True), ("jit_evaluate", "miss", True)]
    # look-alike: a log with Compiling lines keeps reading compilations from them (nothing opened twice)
    full = read_jax_cache_log(str(RUNS / "runs9_seed_offset" / "run_a" / "stderr.log"))
    assert not full.without_compiles and not full.traced
    assert [c.module_name for c in full.compilations] == ["jit_train_step", "jit_evaluate"]


def test_a_key_that_differs_without_dumps_says_what_the_key_covers(tmp_path):
    doc = _compare(_logs_only("runs9_seed_offset", tmp_path))
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")
    assert "xla_dump_to" in head["fix"] and "compiler_options" in head["fix"]
    assert "was loaded, not compiled" not in doc["summary"]  # no program was dumped at all: not a load


def test_a_threshold_miss_without_dumps_keeps_its_reason(tmp_path):
    # look-alike: the log alone still says why run A did not write ("took < 1.00 seconds to compile")
    head = _compare(_logs_only("runs_threshold", tmp_path))["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "below_compile_time")


def test_a_folder_with_neither_dump_nor_jax_log_is_still_an_error(tmp_path):
    for run in ("run_a", "run_b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "notes.txt").write_text("nothing of JAX here\n")
    from hlodiff.dumps.cached_run import read_run
    from hlodiff.errors import HlodiffError

    with pytest.raises(HlodiffError, match="no dump here"):
        read_run(str(tmp_path / "run_a"), None, [])


# -- jax.jit(..., compiler_options=...) on one program ----------------------------------------------------------------

def test_an_option_only_the_recompiled_program_holds_is_its_compiler_options():
    # first try: "it comes from XLA_FLAGS (--xla_cpu_enable_fast_math) or from jax.jit(..., compiler_options=...)"
    head = _head("runs9_jit_compiler_options")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "xla_flag")
    assert "compiler_options" in head["fix"] and "jit_evaluate" in head["fix"]
    assert "XLA_FLAGS" not in head["fix"]


def test_an_option_every_program_holds_keeps_the_flag_words():
    # look-alike: runs_xla_flag's flag is in both programs' options (XLA_FLAGS reach every program)
    head = _head("runs_xla_flag")
    assert "XLA_FLAGS" in head["fix"] and "no process-wide flag" not in head["fix"]


class _Rec:
    def __init__(self, name, kind="xla_dump"):
        self.module_name, self.kind = name, kind


def test_set_for_this_program_reads_the_other_programs_options():
    d = KeyDifference("debug_options", "xla_cpu_enable_fast_math", None, "true")
    recs = [_Rec("jit_step"), _Rec("jit_eval"), _Rec("jit_eval")]
    without = {"jit_step": {"debug_options:xla_cpu_enable_fast_math": ("true",)}, "jit_eval": {}}
    assert set_for_this_program(d, "jit_step", recs, lambda r: without[r.module_name]) == ["jit_eval"]
    with_it = {"jit_step": without["jit_step"], "jit_eval": {"debug_options:xla_cpu_enable_fast_math": ("true",)}}
    assert set_for_this_program(d, "jit_step", recs, lambda r: with_it[r.module_name]) == []
    assert set_for_this_program(d, "jit_step", [_Rec("jit_step")], lambda r: {}) == []  # nothing else to compare
    assert set_for_this_program(d, "jit_step", recs, lambda r: None) == []  # no options dumped
    compile_option = KeyDifference("compile_options.textproto", "x", None, "1")
    assert set_for_this_program(compile_option, "jit_step", recs, lambda r: {}) == []


# -- jax_random_seed_offset ------------------------------------------------------------------------------------------

_SEED_HLO = """HloModule jit_f, entry_computation_layout={{(s32[])->u32[2]}}

ENTRY %main (step: s32[]) -> u32[2] {{
  %step = s32[] parameter(0)
{body}
  %c32 = s32[] constant(32)
  %hi = s32[] shift-right-logical(%seed, %c32)
  %h = u32[] convert(%hi)
  %l = u32[] convert(%seed)
  %h1 = u32[1]{{0}} reshape(%h)
  %l1 = u32[1]{{0}} reshape(%l)
  ROOT %k = u32[2]{{0}} concatenate(%h1, %l1), dimensions={{0}}
}}
"""


def _seed_record(tmp_path: Path, body: str) -> GraphRecord:
    from hlodiff.dumps import iter_graphs

    path = tmp_path / f"module_{abs(hash(body)) % 1000:04d}.jit_f.before_optimizations.txt"
    path.write_text(_SEED_HLO.format(body=body))
    return next(iter(iter_graphs(str(path), [])))


@pytest.mark.parametrize("body, offsets", [
    ("  %seed = s32[] add(%step, %one)\n  %one = s32[] constant(1)", [1]),
    ("  %three = s32[] constant(3)\n  %seed = s32[] add(%three, %step)", [3]),
    ("  %seed = s32[] copy(%step)", [0]),
])
def test_seed_offsets_read_the_constant_added_before_the_split(tmp_path, body, offsets):
    assert seed_offsets(_seed_record(tmp_path, body)) == offsets


def test_a_seed_offset_in_one_run_is_named():
    # first try: "the traced Python took another path ... (lax.fori_loop for a loop count)"
    head = _head("runs9_seed_offset")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "ops")
    assert "jax_random_seed_offset" in head["fix"] and "JAX_RANDOM_SEED_OFFSET" in head["fix"]
    assert "fori_loop" not in head["fix"]


@pytest.mark.parametrize("name", ["runs_time_seed", "runs4_threefry", "runs6_hash_stream", "runs5_prng_impl"])
def test_other_random_programs_name_no_seed_offset(name):
    # look-alikes: a baked clock seed (a constant, not an add), another threefry lowering, a folded-in hash, rbg keys
    doc = _compare(RUNS / name)
    for c in doc["compilations"]:
        assert SEED_OFFSET_SETTING not in str(c.get("differences"))
    assert SEED_OFFSET_SETTING not in (doc["headline"]["fix"] or "")


# -- torch_xla: a cache folder per job -------------------------------------------------------------------------------

def test_a_miss_and_no_failed_load_for_an_entry_run_a_wrote_is_another_folder():
    # first try: not_loadable, "this backend cannot load cached executables ... whatever the code does"
    head = _head("runs9_torch_tmpdir_cache")
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "entry_missing")
    assert "same folder" in head["fix"] and "TMPDIR" in head["fix"]
    assert "deserializ" not in head["fix"].lower()


@pytest.mark.parametrize("name, reason, words", [
    ("runs_torch_identical", "not_loadable", "could not deserialize"),  # failed loads counted
    ("runs5_torch_matmul_precision", "not_loadable", "not the one cached"),  # a failed load counted
    ("runs4_torch_readonly", "entry_missing", "wrote nothing"),  # run A's listing holds no entry
    ("runs6_torch_env_cache", "no_cache", "no persistent cache"),  # run B looked nothing up
])
def test_counted_loads_and_empty_caches_keep_their_stories(name, reason, words):
    head = _head(name)
    assert head["reason"] == reason and words in head["fix"]


def test_without_the_printed_counters_the_cpu_story_stays_hedged(tmp_path):
    # look-alike: the same pair without the counters the script prints: nothing shows run B found nothing, so the
    # CPU's inferred load failure stays, with what else to check (round 6's words)
    head = _compare(without_counter_prints(_copy("runs9_torch_tmpdir_cache", tmp_path)))["headline"]
    assert head["reason"] == "not_loadable" and "also check that run B configures the same cache" in head["fix"]


def test_found_nothing_wants_a_miss_and_no_failed_load():
    class Facts:
        def __init__(self, counters, failures=()):
            self.counters, self.deserialize_failures = counters, list(failures)

        def counter(self, name):
            return self.counters.get(name)

    class R:
        def __init__(self, facts):
            self.torch = facts

    assert found_nothing(R(Facts({"PersistentCacheMiss": 2, "PersistentCacheDeserializeFailure": 0})))
    assert not found_nothing(R(Facts({"PersistentCacheMiss": 1, "PersistentCacheDeserializeFailure": 1})))
    assert not found_nothing(R(Facts({"PersistentCacheMiss": 1}, [("log", 3, "not supported")])))
    assert not found_nothing(R(Facts({"UncachedCompile": 1})))
    assert not found_nothing(R(None))
    assert LOOKED_ELSEWHERE == "looked_elsewhere"


# -- torch_xla: a whole program in float64 ---------------------------------------------------------------------------

def test_a_program_in_float64_in_one_run_names_the_default_dtype():
    # first try: "an input arrives with another dtype on some steps: cast it to one dtype (x.float())"
    head = _head("runs9_torch_default_f64")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    assert "set_default_dtype" in head["fix"] and "float64" in head["fix"]
    for wrong in ("XLA_USE_BF16", "XLA_USE_32BIT_LONG", "x64", "autocast"):
        assert wrong not in head["fix"]


@pytest.mark.parametrize("name, words", [
    ("runs7_torch_use_bf16", "XLA_USE_BF16"), ("runs6_torch_long32", "XLA_USE_32BIT_LONG"),
    ("runs4_torch_autocast", "autocast"), ("runs_x64", "jax_enable_x64"),
])
def test_other_dtype_switches_keep_their_words(name, words):
    head = _head(name)
    assert words in head["fix"] and "set_default_dtype" not in head["fix"]


# -- torch_xla: XLA_NO_SPECIAL_SCALARS -------------------------------------------------------------------------------

def test_a_zero_or_one_baked_in_one_run_and_fed_in_the_other_names_the_switch():
    # first try: one run's fix, "put it in a one-element tensor ... torch.tensor([v]).to(device)"
    head = _head("runs9_torch_no_special_scalars")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "constant")
    assert "XLA_NO_SPECIAL_SCALARS" in head["fix"] and "value differs between the runs" in head["fix"]
    assert "torch.tensor([v])" not in head["fix"]


def test_another_baked_int_keeps_its_words():
    # look-alike: torch.roll's shift 1 then 2 (no 0/1 fed as data): the int constant's row, not the switch
    assert "XLA_NO_SPECIAL_SCALARS" not in (_head("runs_torch_shift")["fix"] or "")


# -- the threshold's words (an older WRONG_NOW row) ------------------------------------------------------------------

def test_the_threshold_fix_says_it_gates_writes_in_the_run_that_fills_the_cache():
    # JAX reads jax_persistent_cache_min_compile_time_secs after each compilation (compiler.py's write path), and
    # runs4_threshold_raised_control showed run B's own value does not matter for its loads
    head = _head("runs_threshold")
    assert "every run that fills the cache" in head["fix"] and "before the first" not in head["fix"]
