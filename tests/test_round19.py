"""Round 19 (blind, small, on merged main): what the first try told less than right, on its real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, jax_scenario

from hlodiff.diff.value_facts import data_ceiling

SC = FIXTURES / "scenarios"


def _static_rules(doc) -> set[str]:
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}


def test_a_static_class_count_from_each_batch_is_fixed_to_the_dataset_s_not_bucketed():
    """r19_jx_onehot_max_label: num_classes = int(y.max()) + 1 per batch (8, 9, 10), static for jax.nn.one_hot.
    The first try said 'pad to a few bucket sizes': a class count padded to a bucket no longer matches the labels."""
    doc = jax_scenario("r19_jx_onehot_max_label")
    head = doc["headline"]
    assert head["kind"] == "static_argument" and _static_rules(doc) == {"static_data_ceiling"}
    assert "class count" in head["fix"] and "at least 10" in head["fix"]
    assert "pad" not in head["fix"] and "bucket" not in head["fix"] and "traced" not in head["fix"]


@pytest.mark.parametrize("name, rule", [
    ("jax_layerdrop_static", "static_structure"),     # tuples of kept blocks: no numbers under a ceiling
    ("jax_scan_inner_static", "static_loop_count"),   # a loop's trip count: its own row first
    ("rev6_static_step", "static_value"),             # a step counter 0, 1, 2, ...: values only, no structure
    ("jax_static_int_float", "static_type_only"),
    ("r18_jx_static_nan", "static_nan"),
    ("rev11_jx_static_obj", "static_identity"),
])
def test_look_alike_static_arguments_keep_their_rows(name, rule):
    rules = _static_rules(jax_scenario(name))
    assert rule in rules and "static_data_ceiling" not in rules, name


def test_a_static_top_k_per_query_is_told_the_same_way():
    """jax_static_topk: k follows each query's positives (5, 7, 9), lax.top_k's output size: a fixed k (the
    largest the data reaches) with a mask is the truth's first answer; never 'pass it traced'."""
    doc = jax_scenario("jax_static_topk")
    head = doc["headline"]
    assert _static_rules(doc) == {"static_data_ceiling"} and "at least 9" in head["fix"] and "mask" in head["fix"]


@pytest.mark.parametrize("values, ceiling", [
    (("8", "9", "10"), 10), (("5", "7", "9", "7"), 9),
    (("3", "5"), None),                  # two values: a setting changed once (scan_length)
    (("0", "1", "2", "3"), None),        # a counter from 0
    (("64", "128", "256"), None),        # sizes spread over buckets
    (("0.5", "0.7", "0.9"), None), (("True", "False", "True"), None), (("(0, 1)", "(1, 2)", "(3,)"), None),
])
def test_data_ceiling(values, ceiling):
    assert data_ceiling(values) == ceiling


def _tx(name) -> dict:
    folder = SC / "torch_xla" / name
    return cli_json("explain-recompile", str(folder / "record" if (folder / "record").exists() else folder),
                    codes=(0, 1))


def _library_only_constants(doc) -> list[dict]:
    return [c for r in doc["recompilations"] for c in r["causes"]
            if c["kind"] == "constant" and c["library_locations"] and not c["locations"]]


def test_a_baked_pow_exponent_borrows_the_line_of_the_op_that_uses_it():
    """r19_tx_focal_gamma_pow: `(1 - pt) ** gamma` bakes gamma; the constant and its power name only
    torch/_tensor.py (Tensor.__pow__'s wrapper), the negate that consumes them names line 20. The first try had no
    location ('the HLO names only library frames here')."""
    doc = _tx("r19_tx_focal_gamma_pow")
    head = doc["headline"]
    assert head["kind"] == "constant" and head["location"]["line"] == 20
    assert head["location"]["file"].endswith("r19_tx_focal_gamma_pow.py")
    assert not _library_only_constants(doc)


@pytest.mark.parametrize("name, library", [("bn_cumulative", "torch/nn/modules/batchnorm.py"),
                                           ("warmup_from_zero", "torch/optim/sgd.py")])
def test_a_constant_made_inside_a_library_keeps_its_library_frame(name, library):
    """Look-alikes: a constant made in BatchNorm's momentum=None path or inside SGD's step is library code, not an
    operator's dispatch: no user line is borrowed from what consumes it downstream."""
    kept = _library_only_constants(_tx(name))
    assert any(library in f["file"] for c in kept for f in c["library_locations"]), name
