"""compare-runs rules learned from the third blind round across a persistent cache (fixtures/scenarios/runs/,
round 3): one test per row of the tables it added (LOCATED_IN_PROGRAM, TOPOLOGY_OPTIONS) and of the CACHE_FIXES row it changed
(no_cache), each beside a look-alike that shares the row's evidence but one fact and must keep its answer; and the
round's two controls."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import FIXTURES, cli_json
from hlodiff.explain.program_lines import LOCATED_IN_PROGRAM
from hlodiff.explain.run_differences import TOPOLOGY_OPTIONS
from hlodiff.hlo import parse_module
from hlodiff.render.across_runs import CACHE_FIXES

RUNS = FIXTURES / "scenarios" / "runs"


def _compare(name: str, codes=(1,)) -> dict:
    return cli_json("compare-runs", str(RUNS / name / "run_a"), str(RUNS / name / "run_b"), codes=codes)


def _at(head: dict) -> tuple[str, int] | None:
    loc = head["location"]
    return None if loc is None else (Path(loc["file"]).name, loc["line"])


def _marked(text: str, reason: str) -> list[str]:
    module = parse_module(text)
    return [i.name for c in module.computations for i in c.instructions if LOCATED_IN_PROGRAM[reason](i, c)]


def test_table_rows_are_the_ones_tested():
    assert set(LOCATED_IN_PROGRAM) == {"host_callbacks", "elided_constants"}


# -- LOCATED_IN_PROGRAM: host_callbacks -----------------------------------------------------------------------------

def test_a_host_callback_is_located_at_its_line():
    """jax.debug.print inside the jitted step (line 19): never written in run A, compiled again in run B; the
    headline names the print's line, read from the callback custom-call's metadata."""
    head = _compare("runs_debug_print")["headline"]
    assert (head["verdict"], head["reason"], head["programs"]) == ("miss_same_key", "host_callbacks",
                                                                   ["jit_train_step"])
    assert _at(head) == ("runs_debug_print.py", 19)
    assert "debug.print" in head["fix"]


def test_lookalike_other_custom_calls_are_no_callback():
    """A custom-call that is not a call back into Python (a LAPACK kernel) is not the callback's line."""
    text = """HloModule m
ENTRY %main (p: f32[4,4]) -> f32[4,4] {
  %p = f32[4,4]{1,0} parameter(0)
  %lu = f32[4,4]{1,0} custom-call(%p), custom_call_target="lapack_sgetrf_ffi"
  ROOT %cb = f32[4,4]{1,0} custom-call(%lu), custom_call_target="xla_ffi_python_cpu_callback"
}
"""
    assert _marked(text, "host_callbacks") == ["cb"]


# -- LOCATED_IN_PROGRAM: elided_constants ---------------------------------------------------------------------------

def test_an_elided_constant_is_located_at_the_line_that_uses_it():
    """A NumPy table drawn without a seed and closed over by the step: XLA prints it as constant({...}) in both
    runs, the keys differ; the headline names the jnp.take line (21) that reads it."""
    head = _compare("runs_closure_table")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "elided_constants")
    assert _at(head) == ("runs_closure_table.py", 21)
    assert "argument" in head["fix"]


def test_lookalike_printed_constants_mark_nothing():
    """Small constants XLA prints in full, and instructions that read no elided constant, are not marked."""
    text = """HloModule m
ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %c = f32[2]{0} constant({1, 2})
  %big = f32[64,16]{1,0} constant({...})
  %a = f32[2]{0} add(%p, %c)
  ROOT %r = f32[2]{0} multiply(%a, %p)
}
"""
    assert _marked(text, "elided_constants") == []


def test_lookalike_same_hlo_under_another_flag_keeps_no_line():
    """runs_xla_flag: the same HLO under another key, without an elided constant: a setting, no line."""
    head = _compare("runs_xla_flag")["headline"]
    assert head["reason"] == "xla_flag" and head["location"] is None


# -- CACHE_FIXES["no_cache"]: the folder and the switch -------------------------------------------------------------

@pytest.mark.parametrize("name", ["runs_cache_disabled", "runs_cache_flag_forgot"])
def test_no_cache_line_in_run_b_names_the_folder_and_the_switch(name):
    """JAX_ENABLE_COMPILATION_CACHE=false in run B (runs_cache_disabled) and run B launched without the folder
    (runs_cache_flag_forgot) leave the same evidence, no cache line in B's log: the fix names both settings."""
    head = _compare(name)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "no_cache")
    assert "jax_compilation_cache_dir" in head["fix"] and "jax_enable_compilation_cache" in head["fix"]
    assert head["fix"] == CACHE_FIXES["no_cache"]


def test_lookalike_configured_late_keeps_its_own_fix():
    """runs_cache_late: no cache line for the first compilations only: set the folder earlier, no switch named."""
    head = _compare("runs_cache_late")["headline"]
    assert head["reason"] == "cache_configured_late" and "jax_enable_compilation_cache" not in head["fix"]


# -- the round's controls -------------------------------------------------------------------------------------------

def test_a_moved_function_loads_everything():
    """runs_line_moved_control: the same step four lines lower; JAX strips debug info before hashing."""
    doc = _compare("runs_line_moved_control", codes=(0,))
    assert doc["headline"] is None and {c["verdict"] for c in doc["compilations"]} == {"hit"}


def test_a_program_run_a_never_compiled_is_new_not_a_miss():
    """runs_new_eval_control: run B also compiles an evaluation step run A never ran."""
    doc = _compare("runs_new_eval_control", codes=(0,))
    assert doc["headline"] is None
    assert [(c["program"], c["verdict"]) for c in doc["compilations"]] == [("jit_train_step", "hit"),
                                                                           ("jit_evaluate", "new")]


# -- TOPOLOGY_OPTIONS: xla_force_host_platform_device_count ---------------------------------------------------------

def test_topology_rows():
    assert TOPOLOGY_OPTIONS == ("xla_force_host_platform_device_count",)


def test_a_host_device_count_alone_is_another_device_configuration():
    """runs_host_device_flag: run B's XLA_FLAGS add --xla_force_host_platform_device_count=4 to a one-device
    program; JAX clears that option before hashing, yet the key differs (it hashes the topology): a device
    configuration, not 'a flag in the key', and never jax.jit(compiler_options=...) (a client flag)."""
    head = _compare("runs_host_device_flag")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "device_count")
    assert "--xla_force_host_platform_device_count" in head["fix"] and "topology" in head["fix"]
    assert "compiler_options" not in head["fix"]


def test_lookalike_two_programs_for_other_device_counts_keep_their_fix():
    """runs_device_count: a mesh over 2, then 4 devices: two HLOs (num_partitions), the device-count fix."""
    head = _compare("runs_device_count")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "device_count")
    assert head["fix"].startswith("run A's program was built for 2 devices")


def test_lookalike_another_flag_beside_the_device_count_is_a_flag(tmp_path):
    """The same pair with one more debug option differing in run B's dump: a flag in the key leads."""
    folder = Path(shutil.copytree(RUNS / "runs_host_device_flag", tmp_path / "pair"))
    for opts in (folder / "run_b" / "dump").glob("*.debug_options"):
        opts.write_text(opts.read_text() + "xla_cpu_enable_fast_math: true\n")
    head = cli_json("compare-runs", str(folder / "run_a"), str(folder / "run_b"), codes=(1,))["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "xla_flag")
    assert "xla_cpu_enable_fast_math" in head["fix"]
