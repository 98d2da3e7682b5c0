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
