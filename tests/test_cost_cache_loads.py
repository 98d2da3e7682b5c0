"""`cost` and `inspect` count programs loaded from JAX's persistent compilation cache apart from compilations, as
`explain-recompile` does (jax_cache_warm_restart: a restarted run loads 2 programs an earlier process wrote and
compiles 1, for its short last batch). Before, both said "3 compiled" and `cost` added the loads' 53 ms to the
compile time."""

from __future__ import annotations

import json

from helpers import FIXTURES, cli

RUN = FIXTURES / "scenarios" / "jax" / "jax_cache_warm_restart"
STEADY_JAX = FIXTURES / "jax" / "weak_type"  # a run that compiled everything: nothing loaded


def test_cost_counts_loaded_programs_apart_and_their_seconds_as_loading():
    doc = json.loads(cli("cost", RUN, "--json").stdout)
    loaded = [g["ref"].rsplit("#", 1)[1] for g in doc["graphs"] if g["loaded_from_cache"]]
    assert loaded == ["0", "2"]
    run = doc["run"]
    assert run["loaded_from_cache"] == 2 and run["compiled"] == 3  # each is a program of the run
    seconds = {g["ref"].rsplit("#", 1)[1]: g["compile_seconds"] for g in doc["graphs"]}
    assert abs(run["load_seconds"] - (seconds["0"] + seconds["2"])) < 1e-6
    assert abs(run["compile_seconds"] - seconds["1"]) < 1e-3
    out = cli("cost", RUN).stdout
    lines = out.splitlines()  # the first finding (cost's headline) may come before the counts
    assert any(line.startswith("3 graphs, 1 compiled, 2 loaded from the persistent cache, ") for line in lines[:6])
    assert "loading" in out


def test_inspect_marks_loaded_programs():
    out = cli("inspect", RUN).stdout
    assert "1 compilation, 2 loaded from the persistent cache" in out.splitlines()[0]
    assert [line.split("│")[3].strip() for line in out.splitlines() if line.startswith("#")] == \
        ["loaded", "yes", "loaded"]


def test_a_run_that_compiled_everything_loads_nothing():
    doc = json.loads(cli("cost", STEADY_JAX / "dump", "--json").stdout)
    assert doc["run"]["loaded_from_cache"] == 0 and doc["run"]["load_seconds"] is None
    assert not any(g["loaded_from_cache"] for g in doc["graphs"])
    assert "loaded" not in cli("inspect", STEADY_JAX / "dump").stdout
