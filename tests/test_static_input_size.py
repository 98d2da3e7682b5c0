"""A JAX static argument that is a size of the inputs passed with it (a node count for segment_sum's num_segments,
graphs concatenated unpadded: ``nodes`` f32[20,8] -> f32[17,8] with ``n_nodes`` 20 -> 17): fixing the static alone
still compiles once per size, so the row ``static_input_size`` says to pad the arrays to a budget and pass the
budget. A static that only sizes what the program makes inside (a one-hot's class count, whose changed parameters
belong to called computations such as log_softmax's) keeps the class-count fix."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from helpers import FIXTURES, cli_json

from hlodiff.explain.static_argument import inputs_sized_by

JAX = FIXTURES / "scenarios" / "jax"


def _r(*changes, entry="main"):
    origins = [NS(left=None, right=NS(opcode=opcode, computation=comp), details={"shape": shapes})
               for opcode, comp, shapes in changes]
    graph = NS(_canonical=NS(entry=NS(name=entry)))
    return NS(causes=[NS(kind="shape", origins=origins)], closest=graph, graph=graph)


def test_an_entry_parameter_whose_dimension_held_the_old_value_then_the_new_one_follows_the_static():
    assert inputs_sized_by(_r(("parameter", "main", ("f32[20,8]{1,0}", "f32[17,8]{1,0}"))), ("20", "17"))


@pytest.mark.parametrize("changes, pair", [
    ((("parameter", "log_softmax.4", ("f32[8,8]", "f32[8,9]")),), ("8", "9")),  # a called computation's parameter
    ((("parameter", "main", ("f32[20,8]", "f32[18,8]")),), ("20", "17")),  # another size than the static's
    ((("broadcast", "main", ("f32[20,8]", "f32[17,8]")),), ("20", "17")),  # made inside, no input
    ((("parameter", "main", ("f32[20,8]", "f32[17,8]")),), ("float32", "bfloat16")),  # no number
])
def test_shapes_that_do_not_follow_the_static_into_the_inputs_do_not(changes, pair):
    assert not inputs_sized_by(_r(*changes), pair)


def test_a_node_count_static_with_the_arrays_sized_by_it_is_told_to_pad_to_a_budget():
    doc = cli_json("explain-recompile", JAX / "r23_jx_segment_num_nodes", codes=(1,))
    fix = doc["headline"]["fix"]
    assert "pad every batch's arrays" in fix and "budget" in fix and "class count" not in fix


@pytest.mark.parametrize("name, row", [("r19_jx_onehot_max_label", "static_data_ceiling")])
def test_a_class_count_static_keeps_its_fix(name, row):
    doc = cli_json("explain-recompile", JAX / name, codes=(1,))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert row in rules and "static_input_size" not in rules


def test_a_static_that_picks_which_ops_run_is_never_told_to_pad():
    """jax_layerdrop_static: a tuple of kept blocks (static) picks ops; its per-graph rows said 'pad to a few bucket
    sizes' (the live lines repeat them). A static that sets shapes (jax/scan_length's steps) keeps that advice."""
    doc = cli_json("explain-recompile", JAX / "jax_layerdrop_static", codes=(1,))
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["fix_rule"] == "static_structure"]
    assert fixes and not any("pad" in f or "bucket" in f for f in fixes)
    doc = cli_json("explain-recompile", FIXTURES / "jax" / "scan_length", codes=(1,))
    assert "pad to a few bucket sizes" in doc["headline"]["fix"]
