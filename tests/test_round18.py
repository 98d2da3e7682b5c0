"""Round 18 (blind, small, on merged main): what the first try told less than right, on its real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of, jax_scenario

from hlodiff.diff.value_facts import _all_nan

SC = FIXTURES / "scenarios"


def _doc(path, *extra, codes=(0, 1)) -> dict:
    return cli_json("explain-recompile", str(path), *extra, codes=codes)


def test_a_static_nan_is_told_as_never_equal_to_itself():
    """r18_jx_static_nan: fill=float('nan') static on every call, 5 compilations of the same HLO. The first try said
    'took a new value (nan) ... or fix its value': the value never changed, and the user already fixed it."""
    doc = jax_scenario("r18_jx_static_nan", codes=(1,))
    fix = doc["headline"]["fix"]
    assert "NaN never equals itself" in fix and "fix its value" not in fix
    assert fix_rules_of(doc) == {"static_nan"}


@pytest.mark.parametrize("name, rule", [
    # look-alikes: a static value that changes without changing the HLO, objects compared by identity, a static
    # bound method hashed per instance: each keeps its row
    ("review_steady", None),
    ("rev11_jx_static_obj", "static_identity"),
    ("jax_method_hash", "static_value"),
])
def test_static_look_alikes_keep_their_rows(name, rule):
    rules = fix_rules_of(jax_scenario(name))
    assert "static_nan" not in rules
    if rule:
        assert rule in rules


def test_a_static_argument_that_changes_keeps_static_unused():
    doc = _doc(FIXTURES / "jax" / "static_argument")
    assert "static_unused" in fix_rules_of(doc) and "static_nan" not in fix_rules_of(doc)


@pytest.mark.parametrize("values, nan", [
    (("nan",), True), (("nan", "NaN"), True), (("float('nan')",), True),
    (("0.5", "nan"), False), (("nan", "1.0"), False), (("inf",), False), ((), False), (("'nan'",), False),
])
def test_only_values_that_are_all_nan_count(values, nan):
    assert _all_nan(values) is nan


def test_an_index_made_at_the_op_s_line_is_not_said_to_be_made_on_the_host():
    """r18_tx_length_regulator: repeat_interleave(h, dur) hands XLA an s64[N] index made at its own line; the first
    try said 'an index tensor made on the host (torch.tensor(list), a numpy array)', which the user never wrote. The
    evidence cannot tell the two apart: the fix names both and what to check, and keeps pad and mask."""
    doc = _doc(SC / "torch_xla" / "r18_tx_length_regulator", codes=(1,))
    fix = doc["headline"]["fix"]
    assert "repeat_interleave" in fix and "check which" in fix and "pad it to a fixed length" in fix
    assert fix_rules_of(doc) >= {"shape_tensor_list"}
