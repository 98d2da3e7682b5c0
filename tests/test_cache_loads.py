"""Programs loaded from a persistent compilation cache are not compilations (explain-recompile's count and cost).

Inputs: the real restarted job fixtures/scenarios/jax/jax_cache_warm_restart (its truth committed before hlodiff
read it: train_step for 8 rows and evaluate loaded, train_step for the last batch of 4 compiled) and the
committed compare-runs pairs (fixtures/jax/cache_*: run B loads what run A wrote; torch_xla's cache_reload, whose
CPU client cannot load an entry). Expected values come from the runs: JAX's own log lines.
"""

from __future__ import annotations

import json
import re

from helpers import FIXTURES, cli, cli_json
from hlodiff.dumps.jax_log import read_jax_log

RESTART = FIXTURES / "scenarios" / "jax" / "jax_cache_warm_restart"
TRUTH = json.loads((FIXTURES / "scenarios" / "jax" / "jax_cache_warm_restart.truth.json").read_text())


def _log_seconds(log: str) -> tuple[float, float]:
    """(compiled, loaded) seconds from JAX's own lines: each `Finished XLA compilation` after a `Persistent
    compilation cache hit` is a load."""
    compiled = loaded = 0.0
    hit = False
    for line in open(log):
        if line.startswith("Compiling "):
            hit = False
        elif line.startswith("Persistent compilation cache hit"):
            hit = True
        elif (m := re.match(r"Finished XLA compilation of \S+ in ([0-9.]+) sec", line)):
            if hit:
                loaded += float(m.group(1))
            else:
                compiled += float(m.group(1))
    return compiled, loaded


def test_a_restarted_job_counts_loaded_programs_apart():
    doc = cli_json("explain-recompile", str(RESTART), codes=tuple(TRUTH["exit"]))
    loaded = TRUTH["loaded"]
    assert sorted(g["name"] for g in doc["graphs"] if g["ref"] in doc["loaded_from_cache"]) == sorted(loaded["modules"])
    compiled = [g["name"] for g in doc["graphs"] if g["compiled"] and g["ref"] not in doc["loaded_from_cache"]]
    assert compiled == loaded["compiled"]
    for words in loaded["summary_must"]:
        assert words in doc["summary"]
    for words in loaded["summary_none"]:
        assert words not in doc["summary"]
    assert doc["summary"].startswith("3 graphs, 1 compilation, 2 loaded from the persistent cache, 1 recompilation")
    assert "1 loaded from the persistent cache and 1 compiled" in doc["summary"]  # the family's own words
    assert doc["headline"]["kind"] == "shape"  # the story stays the last batch's new shape


def test_compile_cost_counts_compiling_only_and_says_what_loading_took():
    compiled, loaded = _log_seconds(RESTART / "stderr.log")
    summary = cli("explain-recompile", str(RESTART), codes=(1,)).stdout.splitlines()[0]
    assert f"recompilation cost {compiled:.2f} s of {compiled:.2f} s compiling" in summary
    assert f"loading 2 programs from the persistent cache took {loaded * 1e3:.0f} ms" in summary


def test_the_loaded_program_is_compared_like_with_like():
    """The loaded program's only text is optimized: the compiled one is read after optimizations too, so the
    difference is the batch's shape, not XLA's rewrites ('2 outputs added, 2 removed' before)."""
    doc = cli_json("explain-recompile", str(RESTART), codes=(1,))
    (r,) = [r for r in doc["recompilations"] if r["family"] == "jit_train_step"]
    assert r["causes"][0]["kind"] == "shape" and not [c for c in r["causes"] if c["kind"] == "outputs"]
    warned = [w for w in doc["warnings"] if "loaded from a persistent compilation cache" in w]
    assert len(warned) == 1 and "(2, 8)" in warned[0]


def test_jax_log_names_the_loads():
    log = read_jax_log(str(RESTART / "stderr.log"))
    assert [(c.module_name, c.loaded) for c in log.compilations] == [
        ("jit_train_step", True), ("jit_train_step", False), ("jit_evaluate", True)]


def test_same_answer_as_compare_runs_on_a_full_hit():
    run_a, run_b = FIXTURES / "jax" / "cache_hit" / "run_a", FIXTURES / "jax" / "cache_hit" / "run_b"
    across = cli_json("compare-runs", str(run_a), str(run_b), codes=(0,))
    hits = sorted(c["program"] for c in across["compilations"] if c["verdict"] == "hit")
    doc = cli_json("explain-recompile", str(run_b), codes=(0,))
    assert sorted(g["name"] for g in doc["graphs"] if g["ref"] in doc["loaded_from_cache"]) == hits
    assert doc["summary"].startswith("2 graphs, 0 compilations, 2 loaded from the persistent cache")
    assert "compiling took" not in doc["summary"] and "nothing compiled" in doc["summary"]


def test_a_partly_loaded_run_agrees_with_compare_runs():
    """cache_seed: run B compiles step again (another baked constant) and loads evaluate."""
    run_a, run_b = FIXTURES / "jax" / "cache_seed" / "run_a", FIXTURES / "jax" / "cache_seed" / "run_b"
    across = cli_json("compare-runs", str(run_a), str(run_b), codes=(1,))
    verdicts = {c["program"]: c["verdict"] for c in across["compilations"]}
    doc = cli_json("explain-recompile", str(run_b), codes=(0, 1))
    loaded = {g["name"] for g in doc["graphs"] if g["ref"] in doc["loaded_from_cache"]}
    assert loaded == {p for p, v in verdicts.items() if v == "hit"} == {"jit_evaluate"}
    assert doc["summary"].startswith("2 graphs, 1 compilation, 1 loaded from the persistent cache")


def test_runs_that_load_nothing_are_counted_as_before():
    """Look-alikes: a first run that writes the cache (it compiles everything), and torch_xla's cache_reload,
    whose CPU client fails to deserialize every entry and compiles it (metrics: PersistentCacheDeserializeFailure)."""
    for run in (FIXTURES / "jax" / "cache_hit" / "run_a", FIXTURES / "jax" / "cache_threshold" / "run_b",
                FIXTURES / "torch_xla" / "cache_reload" / "run_b"):
        doc = cli_json("explain-recompile", str(run), codes=(0, 1))
        assert doc["loaded_from_cache"] == [] and "loaded" not in doc["summary"]
        n = sum(1 for g in doc["graphs"] if g["compiled"])
        assert f", {n} compilation" in doc["summary"]
