"""compare-runs rules learned from the second blind round across a persistent cache (fixtures/scenarios/runs/,
round 2): one test per row of each table it added to (NOT_WRITTEN_REASONS, CACHE_FIXES' new rows, GRAPH_FIXES),
each beside a look-alike that shares the row's evidence but one fact and must keep the answer it had."""

from __future__ import annotations

from pathlib import Path

from runs_helpers import RUNS, compare_runs as _compare, copy_runs as _copy
from hlodiff.dumps import iter_graphs
from hlodiff.explain.across_runs import NOT_WRITTEN_REASONS
from hlodiff.explain.program_differences import WIDE_TYPES, parameter_shape_differences, wide_type_differences
from hlodiff.render.across_runs import CACHE_FIXES, GRAPH_FIXES

def _edit_stderr(folder: Path, old: str, new: str) -> None:
    for log in folder.glob("run_*/stderr.log"):
        lines = log.read_text().splitlines(keepends=True)
        log.write_text("".join(new + "\n" if old in line else line for line in lines))


def test_table_rows_are_the_ones_tested():
    assert NOT_WRITTEN_REASONS == {"compile_time": "below_compile_time", "entry_size": "below_entry_size",
                                   "cache_size": "exceeds_cache_size", "write_error": "write_failed"}
    assert {"state_shape", "input_shape", "x64"} <= set(GRAPH_FIXES)  # round 4's rows: test_compare_runs_round4
    assert WIDE_TYPES == {"s64": "s32", "u64": "u32", "f64": "f32", "c128": "c64"}
    assert {"exceeds_cache_size", "write_failed", "xla_debug_option_torch_xla", "unknown_key_torch_xla"} <= set(
        CACHE_FIXES)


# -- NOT_WRITTEN_REASONS: cache_size, write_error ------------------------------------------------------------------

def test_entry_larger_than_the_cache_is_exceeds_cache_size():
    """jax_compilation_cache_max_size=5000: JAX logs 'Writing jit_train_step ...', then warns the value exceeds the
    maximum cache size and writes nothing; run B compiles the train step again."""
    head = _compare(RUNS / "runs_cache_max_size")["headline"]
    assert (head["verdict"], head["reason"], head["programs"]) == ("miss_same_key", "exceeds_cache_size",
                                                                   ["jit_train_step"])
    assert "jax_compilation_cache_max_size" in head["fix"] and "5000" in head["fix"]
    assert "min_entry_size" not in head["fix"]


def test_lookalike_without_the_warning_is_an_entry_missing(tmp_path):
    """The same runs with the warning lost (stderr filtered): run A said it wrote the entry and the cache lacks it;
    nothing says why, so not the size limit."""
    folder = _copy("runs_cache_max_size", tmp_path)
    _edit_stderr(folder, "exceeds the maximum cache size", "")
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "entry_missing")
    assert "max_size" not in head["fix"]


def test_lookalike_below_the_entry_size_threshold_stays_below_entry_size():
    """'Not writing ... since its size (N bytes) is less than threshold': the other size setting, named."""
    head = _compare(RUNS / "runs_entry_size")["headline"]
    assert (head["reason"], head["programs"]) == ("below_entry_size", ["jit_evaluate"])
    assert "min_entry_size" in head["fix"] and "max_size" not in head["fix"]


def test_write_error_is_write_failed():
    """A cache folder the process cannot write (runs_cache_readonly): JAX logs 'Writing ...' then warns 'Error
    writing persistent compilation cache entry for ...: PermissionError'; the error is quoted and the folder's
    writability is the fix, not an eviction."""
    head = _compare(RUNS / "runs_cache_readonly")["headline"]
    assert (head["verdict"], head["reason"], head["count"]) == ("miss_same_key", "write_failed", 2)
    assert "Permission denied" in head["fix"] and "writable" in head["fix"] and "evict" not in head["fix"]


def test_lookalike_write_error_in_place_of_the_size_warning(tmp_path):
    """JAX's write error in place of runs_cache_max_size's size warning: the train step's reason follows the
    warning, not the size setting."""
    folder = _copy("runs_cache_max_size", tmp_path)
    _edit_stderr(folder, "exceeds the maximum cache size",
                 "/usr/lib/python3.11/site-packages/jax/_src/compiler.py:834: UserWarning: Error writing persistent "
                 "compilation cache entry for 'jit_train_step': OSError: [Errno 28] No space left on device")
    head = _compare(folder)["headline"]
    assert (head["reason"], head["programs"]) == ("write_failed", ["jit_train_step"])
    assert "No space left" in head["fix"] and "max_size" not in head["fix"]


# -- torch_xla: another graph hash, the same HLO -------------------------------------------------------------------

def test_torch_xla_same_hlo_other_hash_names_the_flag():
    """Run B adds --xla_cpu_enable_fast_math=true: the same HLO, another graph hash (torch_xla's key); the option
    is read from the debug_options XLA dumped beside the module the debug log joins."""
    doc = _compare(RUNS / "runs_torch_flags")
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "xla_flag")
    assert "xla_cpu_enable_fast_math" in head["fix"] and "XLA_FLAGS" in head["fix"]
    assert "jax" not in head["fix"]  # torch_xla's words, not jax.jit(compiler_options=...)
    assert doc["compilations"][0]["differences"][0] == {"source": "debug_options", "name": "xla_cpu_enable_fast_math",
                                                        "a": None, "b": "true"}


def test_lookalike_same_options_other_hash_says_what_to_compare(tmp_path):
    """The same pair with run B's dumped options made equal to run A's: the same program under another hash and
    nothing dumped differs: torch_xla's words for an unknown key."""
    folder = _copy("runs_torch_flags", tmp_path)
    for p in folder.glob("run_b/dump/*.debug_options"):
        p.write_text("\n".join(line for line in p.read_text().splitlines() if "fast_math" not in line) + "\n")
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")
    assert "torch_xla version" in head["fix"] and "jax" not in head["fix"].lower()


# -- GRAPH_FIXES: state_shape, input_shape -------------------------------------------------------------------------

def test_wider_model_is_state_shapes_expected_not_padding():
    """HIDDEN=32, then 64: every changed parameter is a weight the step returns updated."""
    head = _compare(RUNS / "runs_torch_width")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "shape")
    assert "expected after changing the model" in head["fix"]
    assert "pad" not in head["fix"] and "bucket" not in head["fix"]


def test_lookalike_batch_size_is_an_input_shape():
    """BATCH=8, then 16: the changed parameters (x, y) are not returned: the inputs' shapes, same in both runs."""
    head = _compare(RUNS / "runs_batch_env")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "shape")
    assert "f32[8,16] in run A, f32[16,16] in run B" in head["fix"] and "same shapes" in head["fix"]
    assert "model" not in head["fix"]


def _module(tmp_path: Path, name: str, body: str):
    path = tmp_path / name / "module_0000.jit_f.before_optimizations.txt"
    path.parent.mkdir()
    path.write_text(f"HloModule jit_f\n\n{body}")
    return next(iter(iter_graphs(str(path), [])))


def _step(n: int) -> str:
    return (f"ENTRY %main (w: f32[{n},4], x: f32[8,4]) -> (f32[], f32[{n},4]) {{\n"
            f"  %w = f32[{n},4]{{1,0}} parameter(0)\n  %x = f32[8,4]{{1,0}} parameter(1)\n"
            "  %c = f32[] constant(0)\n"
            f"  ROOT %t = (f32[], f32[{n},4]{{1,0}}) tuple(%c, %w)\n}}\n")


def test_parameter_returned_in_its_new_shape_is_state(tmp_path):
    diffs, state = parameter_shape_differences(_module(tmp_path, "a", _step(2)), _module(tmp_path, "b", _step(3)))
    assert [(d.name, d.a, d.b) for d in diffs] == [("w", "f32[2,4]", "f32[3,4]")] and state


def test_lookalike_parameter_not_returned_is_an_input(tmp_path):
    """Only x changes and nothing of its shape is returned: an input."""
    b = _step(2).replace("f32[8,4]", "f32[16,4]")
    diffs, state = parameter_shape_differences(_module(tmp_path, "a", _step(2)), _module(tmp_path, "b", b))
    assert [(d.name, d.a, d.b) for d in diffs] == [("x", "f32[8,4]", "f32[16,4]")] and not state


# -- GRAPH_FIXES: x64 ------------------------------------------------------------------------------------------------

def test_64_bit_types_in_one_run_only_name_x64():
    """JAX_ENABLE_X64=1 in run B: accuracy's argmax index is s64 there, s32 in run A. The fix names the setting
    itself (the scenario's file name, runs_x64.py, must not be what says it)."""
    head = _compare(RUNS / "runs_x64")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    fix = head["fix"].replace("runs_x64.py", "")
    assert "jax_enable_x64" in fix and "run B" in fix and "follow its input" not in fix


def _typed(ty: str) -> str:
    return (f"ENTRY %main (x: f32[4]) -> {ty}[4] {{\n  %x = f32[4]{{0}} parameter(0)\n"
            f"  ROOT %c = {ty}[4]{{0}} convert(%x)\n}}\n")


def test_each_wide_type_is_told(tmp_path):
    for n, (wide, narrow) in enumerate(sorted(WIDE_TYPES.items())):
        a, b = _module(tmp_path, f"a{n}", _typed(narrow)), _module(tmp_path, f"b{n}", _typed(wide))
        assert [(d.a, d.b) for d in wide_type_differences(a, b)] == [(None, wide)]
        assert [(d.a, d.b) for d in wide_type_differences(b, a)] == [(wide, None)]


def test_lookalike_other_types_are_no_x64(tmp_path):
    """f32 -> bf16 (a cast the user wrote, autocast): not what x64 switches; the graph diff's own fix stays."""
    a, b = _module(tmp_path, "a", _typed("s32")), _module(tmp_path, "b", _typed("bf16"))
    assert wide_type_differences(a, b) == []
