"""compare-runs reads what the runs' own ``hlodiff record`` manifests hold (new-user review 21, F1): a flag of
XLA_FLAGS that XLA leaves out of its dumped options is named from the runs' recorded XLA_FLAGS, and when nothing
differs the words say what was compared instead of asking for it again. One test per row, beside the look-alikes
that share its evidence but one fact (runs/rev21_jx_unkept_flag, rev21_jx_rerun_control)."""

from __future__ import annotations

import json
from pathlib import Path

from runs_helpers import RUNS, compare_runs, copy_runs
from hlodiff.dumps.cached_run import own_flags
from hlodiff.render.across_runs_fixes import CACHE_FIXES


def _set_manifest(folder: Path, run: str, **changes) -> None:
    manifest = folder / run / "hlodiff-record.json"
    doc = json.loads(manifest.read_text())
    doc.update(changes)
    manifest.write_text(json.dumps(doc))


def test_table_rows_are_the_ones_tested():
    assert "unknown_key_recorded" in CACHE_FIXES


def test_a_flag_xla_does_not_dump_is_named_from_the_runs_recorded_xla_flags():
    # first try: "an input of the key not captured differs (JAX/jaxlib version, platform, devices)" and a fix to
    # compare the versions, which both manifests held and were equal
    doc = compare_runs(RUNS / "rev21_jx_unkept_flag")
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "xla_flag")
    assert "xla_cpu_use_thunk_runtime" in doc["summary"] and "hlodiff-record.json" in doc["summary"]
    assert "--xla_cpu_use_thunk_runtime is false in run B and not set in run A" in head["fix"]
    assert "version" not in head["fix"] and "platform" not in head["fix"]


def test_the_same_recorded_flags_leave_the_key_unexplained_and_say_what_was_compared(tmp_path):
    folder = copy_runs("rev21_jx_unkept_flag", tmp_path)
    _set_manifest(folder, "run_b", cache_settings={})  # run B's own XLA_FLAGS as run A's: nothing set
    doc = compare_runs(folder)
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")
    assert "XLA_FLAGS (not set)" in doc["summary"] and "jax 0.10.2" in doc["summary"]
    assert "JAX/jaxlib version" not in doc["summary"]
    assert head["fix"].startswith("the dumped options, XLA_FLAGS and versions are the same in both runs")
    assert "devices" in head["fix"]


def test_a_capture_without_manifests_keeps_the_words_that_ask_for_the_versions(tmp_path):
    folder = copy_runs("rev21_jx_unkept_flag", tmp_path)
    for run in ("run_a", "run_b"):
        (folder / run / "hlodiff-record.json").unlink()
    doc = compare_runs(folder)
    assert doc["headline"]["reason"] == "unknown"  # nothing on disk holds the flag
    assert "JAX/jaxlib version" in doc["summary"] and "hlodiff record" in doc["headline"]["fix"]


def test_only_one_run_recorded_is_not_read_as_a_flag_set_in_one_run(tmp_path):
    folder = copy_runs("rev21_jx_unkept_flag", tmp_path)
    (folder / "run_a" / "hlodiff-record.json").unlink()
    head = compare_runs(folder)["headline"]
    assert head["reason"] == "unknown" and "xla_cpu_use_thunk_runtime" not in head["fix"]


def test_a_new_version_still_leads_over_a_recorded_flag(tmp_path):
    folder = copy_runs("rev21_jx_unkept_flag", tmp_path)
    _set_manifest(folder, "run_b", versions={"jax": "0.10.3", "jaxlib": "0.10.3"})
    head = compare_runs(folder)["headline"]
    assert head["reason"] == "version" and "jax" in head["fix"]


def test_dump_flags_are_not_a_difference_between_runs():
    assert own_flags("--xla_cpu_use_thunk_runtime=false --xla_dump_to=/x --xla_dump_hlo_as_text") == [
        "--xla_cpu_use_thunk_runtime=false"]
    assert own_flags("") == []


def test_an_identical_rerun_under_record_is_all_hits():
    doc = compare_runs(RUNS / "rev21_jx_rerun_control", codes=(0,))
    assert doc["headline"] is None
