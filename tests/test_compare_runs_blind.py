"""compare-runs rules learned from the blind runs across a persistent cache (fixtures/scenarios/runs/, 2026-11-27):
one test per row of each knowledge table (CANNOT_DESERIALIZE, DEVICE_COUNT_ATTRIBUTES, LOCATED_AT_CALL), each
beside a look-alike that shares the row's evidence but one fact and must keep the answer it had."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs_helpers import RUNS, compare_runs as _compare, copy_runs as _copy, without_counter_prints
from hlodiff.dumps import iter_graphs
from hlodiff.explain.across_runs import CANNOT_DESERIALIZE
from hlodiff.explain.program_differences import DEVICE_COUNT_ATTRIBUTES, device_count_differences
from hlodiff.render.across_runs import LOCATED_AT_CALL

# -- CANNOT_DESERIALIZE: ("torch_xla", "cpu") ------------------------------------------------------------------------

def test_table_rows_are_the_ones_tested():
    assert set(CANNOT_DESERIALIZE) == {("torch_xla", "cpu")}
    assert DEVICE_COUNT_ATTRIBUTES == ("num_partitions", "replica_count")
    assert LOCATED_AT_CALL == {"cache_configured_late"}


def test_torch_xla_cpu_entry_in_cache_compiled_again_is_not_loadable(tmp_path):
    """Identical runs, TF_CPP_MIN_LOG_LEVEL=2 (no 'Failed to deserialize' warning), no metrics (the script's own
    counter print removed): run A's listing holds both graphs' entries, run B compiled both on the CPU backend."""
    doc = _compare(without_counter_prints(_copy("runs_torch_identical", tmp_path)))
    head = doc["headline"]
    assert (head["verdict"], head["reason"], head["count"]) == ("miss_same_key", "not_loadable", 2)
    assert "deserialize" in head["fix"] and "CPU" in head["fix"]
    assert all("CPU client cannot deserialize" in c["text"] for c in doc["compilations"])


def test_lookalike_without_the_cache_listing_stays_unknown(tmp_path):
    """The same runs without the cache's listing: nothing says run A's entry was there, so nothing says it failed
    to load; the fix says what to keep."""
    folder = without_counter_prints(_copy("runs_torch_identical", tmp_path))
    for listing in folder.glob("run_*/cache_listing.txt"):
        listing.unlink()
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_same_key", "unknown")
    assert "Failed to deserialize" in head["fix"]


def test_lookalike_on_another_backend_stays_unknown(tmp_path):
    """The same evidence from a backend that can load its entries (the dump named gpu): not the CPU's limit."""
    folder = without_counter_prints(_copy("runs_torch_identical", tmp_path))
    for p in folder.glob("run_*/dump/*.cpu_after_optimizations.txt"):
        p.rename(p.with_name(p.name.replace(".cpu_after", ".gpu_after")))
    head = _compare(folder)["headline"]
    assert head["reason"] == "unknown"


def test_a_changed_torch_graph_is_still_its_diff():
    """The row speaks of the same hash only: a graph whose baked shift changed keeps its cause and line."""
    head = _compare(RUNS / "runs_torch_shift")["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "constant")
    assert head["location"]["line"] == 22


# -- DEVICE_COUNT_ATTRIBUTES ---------------------------------------------------------------------------------------

def test_num_partitions_differs_is_the_device_count():
    doc = _compare(RUNS / "runs_device_count")
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "device_count")
    assert "built for 2 devices" in head["fix"] and "for 4" in head["fix"]
    step = doc["compilations"][0]
    assert step["differences"] == [{"source": "module", "name": "num_partitions", "a": "2", "b": "4"}]
    assert step["cause"]["kind"] == "sharding"  # the graph's difference is still said, as the count's consequence


def test_lookalike_same_device_count_other_sharding_keeps_the_sharding_story(tmp_path):
    """Run B's program told as built for 2 devices like run A's (its header edited): the mesh and the shardings
    still differ, so it is the graph's sharding difference and its fix, not a device count."""
    folder = _copy("runs_device_count", tmp_path)
    for p in folder.glob("run_b/dump/*jit_train_step.before_optimizations.txt"):
        p.write_text(p.read_text().replace("num_partitions=4", "num_partitions=2", 1))
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "sharding")
    assert "device" not in head["fix"].split(":")[0]


def _module(tmp_path: Path, name: str, header: str):
    path = tmp_path / name / "module_0000.jit_f.before_optimizations.txt"
    path.parent.mkdir()
    path.write_text(f"HloModule jit_f{header}\n\nENTRY %main (p: f32[4]) -> f32[4] {{\n"
                    "  ROOT %p = f32[4]{0} parameter(0)\n}\n")
    return next(iter(iter_graphs(str(path), [])))


@pytest.mark.parametrize("a, b, name", [
    (", num_partitions=2", ", num_partitions=8", "num_partitions"),
    (", replica_count=2", ", replica_count=4", "replica_count"),
    ("", ", replica_count=4", "replica_count"),  # left out: XLA's default, 1
])
def test_each_device_count_attribute(tmp_path, a, b, name):
    diffs = device_count_differences(_module(tmp_path, "a", a), _module(tmp_path, "b", b))
    assert [d.name for d in diffs] == [name]


def test_lookalike_other_header_attributes_are_no_device_count(tmp_path):
    diffs = device_count_differences(_module(tmp_path, "a", ", num_partitions=2, is_scheduled=true"),
                                     _module(tmp_path, "b", ", num_partitions=2"))
    assert diffs == []


# -- LOCATED_AT_CALL: cache_configured_late ------------------------------------------------------------------------

def test_configured_late_is_located_at_the_line_that_compiled_first():
    """Eager jnp.mean/jnp.std before jax_compilation_cache_dir: JAX's log names no call site for them, their HLO
    does (line 14)."""
    head = _compare(RUNS / "runs_cache_late")["headline"]
    assert (head["reason"], head["programs"][0]) == ("cache_configured_late", "jit__mean")
    assert (Path(head["location"]["file"]).name, head["location"]["line"]) == ("runs_cache_late.py", 14)


@pytest.mark.parametrize("name, reason", [("runs_threshold", "below_compile_time"), ("runs_xla_flag", "xla_flag")])
def test_lookalike_settings_have_no_line(name, reason):
    """The same programs missed for a setting (a threshold, a flag): no line of the program is the answer."""
    head = _compare(RUNS / name)["headline"]
    assert head["reason"] == reason and head["location"] is None


def test_the_control_loads_everything():
    doc = _compare(RUNS / "runs_all_hit_control", codes=(0,))
    assert doc["headline"] is None and {c["verdict"] for c in doc["compilations"]} == {"hit"}
