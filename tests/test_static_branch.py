"""A static int that an ``if`` reads (a stage switching loss terms on: 0, 1, 2) changes which ops are traced by a
few each time, like a Python loop unrolled once more per count: only a loop's copies scale with the count and sit
in the smaller graph once per count it ran. The branch gets no fori_loop and no padding; the loops keep their rows."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json

from hlodiff.diff.value_facts import whole_numbers

SC = FIXTURES / "scenarios" / "jax"


def _static_rules(doc) -> set[str]:
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}


def _jax(name, *parts) -> dict:
    folder = SC / name
    if (folder / "record").exists():
        return cli_json("explain-recompile", str(folder / "record"), codes=(0, 1))
    return cli_json("explain-recompile", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0, 1))


def test_a_static_stage_that_switches_terms_on_is_a_branch_not_an_unrolled_loop():
    """lead47_jx_static_stage_branch: stage 0 -> 1 -> 2 adds 5 then a few ops of opcodes the graph has. The first
    try said 'sets how many times a Python loop runs ... write the loop as lax.fori_loop'; there is no loop."""
    doc = _jax("lead47_jx_static_stage_branch")
    fix = doc["headline"]["fix"]
    assert _static_rules(doc) == {"static_branch"}
    assert "fori_loop" not in fix and "pad" not in fix and "bucket" not in fix
    assert "lax.cond" in fix and "compiles once" in fix


@pytest.mark.parametrize("name, rule", [
    ("rev9_j2_unrolled_solver", "static_unrolled_loop"),  # for _ in range(n_steps): 10 -> 15 adds 6 ops per step
    ("jax_layerdrop_static", "static_structure"),         # tuples of kept blocks: no whole numbers
    ("jax_scan_inner_static", "static_loop_count"),       # a scan's length: a trip count, its own row
    ("r19_jx_onehot_max_label", "static_data_ceiling"),   # a class count under the data's ceiling: shapes change
])
def test_static_arguments_with_other_evidence_keep_their_rows(name, rule):
    assert rule in _static_rules(_jax(name))
    assert "static_branch" not in _static_rules(_jax(name))


@pytest.mark.parametrize("values, whole", [
    (("0", "1", "2"), True), (("3", "7"), True), (("True", "False"), False), (("0.5", "1"), False),
    (("1",), False), (("'relu'", "'gelu'"), False),
])
def test_whole_numbers_are_two_or_more_ints_never_bools_or_floats(values, whole):
    assert whole_numbers(values) is whole
