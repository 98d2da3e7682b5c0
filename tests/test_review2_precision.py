"""compare-runs on two real JAX runs whose only difference is the matmul precision setting (review 2026-11-27, F9;
fixtures/jax/review2_precision_pair.py, its truth written by the script from the design before hlodiff ran)."""

from __future__ import annotations

import shutil

from conftest import FIXTURES
from helpers import cli, cli_json, truth_of

PAIR = FIXTURES / "jax" / "review2_precision_pair"


def test_a_matmul_precision_setting_is_told_as_one_not_as_a_python_value(tmp_path):
    truth = truth_of(PAIR)
    # the user's own names for the runs (the reviewer's runA / runD)
    a, b = tmp_path / "runA", tmp_path / "runD"
    shutil.copytree(PAIR / "run_a", a)
    shutil.copytree(PAIR / "run_b", b)
    doc = cli_json("compare-runs", str(a), str(b), codes=(truth["exit_status"],))
    fix = doc["headline"]["fix"].lower()
    for must in truth["fix_must"]:
        words = must if isinstance(must, list) else [must]
        assert all(w.lower() in fix for w in words), (must, fix)
    for never in truth["fix_must_not"]:
        assert never.lower() not in fix, (never, fix)
    assert doc["headline"]["location"]["line"] in {p["user_line"] for p in truth["programs"]}
    assert {p["module"] for p in truth["programs"] if p["b"] == "compiled"} <= set(doc["headline"]["programs"])
    summary = cli("compare-runs", str(a), str(b), codes=(1,)).stdout.splitlines()[0]
    # review 22 F3: a program whose HLO differs is one run A never compiled (it compiled another HLO of it)
    assert summary.startswith("runD compiled 2 programs runA never compiled") and "HLO differs" in summary
    assert "run B" not in summary.split(";")[0]


def test_a_baked_constant_across_runs_keeps_its_traced_argument_fix():
    """Look-alike: a Python float baked in as a constant (cache_seed) is a value of the program: pass it traced."""
    doc = cli_json("compare-runs", str(FIXTURES / "jax" / "cache_seed" / "run_a"),
                   str(FIXTURES / "jax" / "cache_seed" / "run_b"), codes=(1,))
    assert "traced" in doc["headline"]["fix"] and "matmul precision" not in doc["headline"]["fix"]
