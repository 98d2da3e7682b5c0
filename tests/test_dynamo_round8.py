"""Dynamo, round 8 (docs/accuracy.md): Dynamo's dtype guard is checked per call, so its advice speaks of calls, not
steps: a compiled helper given float32 at one call site and bfloat16 at another (twice within one step) is not a
value that changes "on every step". Checked on that real run and on its look-alikes, where the other dtype comes
from the data pipeline on some steps (NumPy float64) or from a bf16 model (the dynamo_bf16 fixture)."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _headline_fix(path) -> str:
    result = cli("explain-recompile", str(path), "--json", codes=(0, 1))
    head = json.loads(result.stdout)["headline"]
    assert head is not None and head["kind"] == "dtype", head
    return head["fix"]


@pytest.mark.parametrize("path", [SCENARIOS / "dyn_dtype_two_sites",   # two call sites, one step
                                  SCENARIOS / "dyn_numpy_float64",     # look-alike: float64 on odd steps
                                  FIXTURES / "torch_xla" / "dynamo_bf16"])
def test_a_dynamo_dtype_guard_asks_for_one_dtype_at_every_call(path):
    fix = _headline_fix(path)
    assert "one dtype at every call" in fix and "cast" in fix, fix
    assert "every step" not in fix, fix


def _live_lines(name: str) -> list[str]:
    from live_replay import printed, replay_case

    return printed(replay_case(f"dynamo/{name}"))


def test_an_input_of_another_dtype_is_never_told_live_as_a_symbolic_size():
    # the bank's bf16[16,8] reaches XLA before Dynamo's log says why: a symbolic size never changes an element
    # type, so the live line waits for the dtype guard instead of telling "pad to a few fixed sizes"
    said = _live_lines("dyn_dtype_two_sites")
    assert not any("symbolic" in x or "pad" in x for x in said), said
    assert any("dtype at dyn_dtype_two_sites.py" in x for x in said), said


def test_a_symbolic_size_of_one_element_type_is_still_told_as_xla_per_size():
    # look-alike: dynamic=True, lengths 5..9 of one float32 input: XLA compiles each size of one symbolic graph
    said = _live_lines("dyn_dynamic_true")
    assert any("symbolic graph" in x for x in said), said


def _dynamo_rules(name: str) -> list[str]:
    result = cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1))
    return [r["fix_rule"] for r in json.loads(result.stdout)["dynamo"]["recompiles"]]


def test_an_int_that_set_a_shape_once_sets_it_on_every_recompilation_of_its_frame():
    # grid[0] set a reshape's sizes (0/1: XLA compiled the new shape); 0/2, for another grid[0], was counted as
    # XLA's cache hit: it is still an int that sets a shape, never "pass it as a tensor"
    assert _dynamo_rules("dyn_grid_tuple") == ["dynamo_int_sets_shape", "dynamo_int_sets_shape"]


def test_an_int_used_in_arithmetic_keeps_the_tensor_advice():
    # look-alike: the step passed as an int only scales the loss: no recompilation of its frame sets a shape
    rules = _dynamo_rules("dyn_cache_limit")
    assert rules and "dynamo_int_sets_shape" not in rules, rules
