"""Fixes chosen from evidence, on real runs: each fixture made for a failure kind of issue 19 names, in its
truth.json, the words the headline's fix must carry (`fix_must`) and the words no fix of the run may carry
(`fix_must_not`: the stock advice the evidence contradicts, e.g. drop_last for an index list, "pad inputs" for a
growing cache, `.item()` where nothing reads a value)."""

from __future__ import annotations


import pytest

from helpers import FIXTURES, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained


def _cases():
    cases = []
    for path in sorted(FIXTURES.glob("**/truth.json")):
        t = truth_of(path.parent)
        folder = path.parent
        if "fix_must" not in t or (folder / "run_a").is_dir():  # a pair of runs: compare-runs' own test reads it
            continue
        dump = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "dump"
        cases.append(pytest.param(dump, t, id=str(folder.relative_to(FIXTURES))))
    return cases


CASES = _cases()


def test_every_failure_kind_has_its_fixture():
    names = {c.id for c in CASES}
    assert {"torch_xla/mask_index", "torch_xla/topk_k", "torch_xla/kv_cache", "torch_xla/collate_buckets",
            "torch_xla/index_list", "torch_xla/adamw_split", "torch_xla/offset_index", "torch_xla/bf16_switch",
            "torch_xla/fsdp_warmup", "torch_xla/spmd_warmup",
            "jax/scan_length", "jax/train_flag", "jax/dtype_int_input", "jax/closure_jit"} <= names


@pytest.mark.parametrize("dump, t", CASES)
def test_headline_fix_fits_the_evidence(dump, t):
    result = explained(discover([str(dump)], None, None), [])
    head = result.headline.causes[0]
    assert head.kind == t["cause"], (head.kind, head.summary)
    for word in t["fix_must"]:
        assert word in head.fix, (word, head.fix)
    fixes = [c.fix for r in result.recompilations for c in r.causes]
    wrong = [(word, fix) for fix in fixes for word in t["fix_must_not"] if word in fix]
    assert wrong == []


def test_a_scan_length_without_jax_s_log_is_still_required_static(tmp_path):
    """Without JAX's cache-miss log only the graphs speak: the changed constant sits in the while loop's
    condition (a baked trip count), so the fix reduces its values instead of tracing it, and the stacked outputs'
    shapes follow from it rather than asking to pad arguments nobody changed."""
    import shutil

    shutil.copytree(FIXTURES / "jax" / "scan_length" / "dump", tmp_path / "dump")
    (r,) = explained(discover([str(tmp_path / "dump")], None, None), []).recompilations
    head = r.causes[0]
    assert head.kind == "constant" and head.fix_rule == "constant_static_structure"
    assert "traced argument" not in head.fix and "reduce the values" in head.fix
    shapes = [c for c in r.causes if c.kind == "shape" and c.fix_rule]
    assert shapes and all(c.fix_rule == "shape_loop_length" for c in shapes if "parameter" in c.summary)
    assert not any("pad arguments" in c.fix for c in r.causes)


def test_growth_needs_three_sizes_each_larger_by_one_step():
    from hlodiff.explain.family_values import grows

    assert grows(("7", "8", "9", "10"))
    assert not grows(("8", "16", "32"))  # doubling buckets are not a cache growing by one token
    assert not grows(("2", "3"))  # two sizes cannot show a trend
    assert not grows(("6", "5", "3"))  # an index list that shrinks and grows at random


def test_every_new_fixture_has_its_script_and_tagged_line():
    """Each fixture here was made by its script: the script beside it exists and tags the truth's user line."""
    for case in CASES:
        folder = case.values[0].parent
        script = folder.parent / f"{folder.name}.py"
        t = case.values[1]
        assert script.exists(), script
        lines = script.read_text().splitlines()
        assert lines[t["user_line"] - 1].rstrip().endswith("# RECOMPILE"), (script.name, t["user_line"])
