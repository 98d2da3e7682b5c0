"""Round 9 (blind, small): what the first try got wrong, on its real captures (fixtures/scenarios/*), beside the
look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli, cli_json
from hlodiff.diff.value_facts import _choice_value

JAX = FIXTURES / "scenarios" / "jax"


def _static_rules(name: str, *extra: str) -> set[str]:
    doc = cli_json("explain-recompile", JAX / name, *extra, codes=(1,))
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}


def test_a_static_checkpoint_policy_switched_is_a_choice_not_a_size():
    """jax_remat_policy_switch: `policy` went from nothing_saveable to dots_saveable; the first try said 'pad to a
    few bucket sizes'. A policy is no size: one compilation per choice, chosen before the first call."""
    folder = JAX / "jax_remat_policy_switch"
    doc = cli_json("explain-recompile", folder / "dump", "--jax-log", folder / "stderr.log", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "static_argument"
    assert "bucket" not in head["fix"] and "pad" not in head["fix"]
    assert "choose the value before the first call" in head["fix"]


@pytest.mark.parametrize("name, rule", [("jax_layerdrop_static", "static_structure"),
                                        ("jax_static_topk", "static_data_ceiling"),
                                        ("jax_scan_inner_static", "static_loop_count")])
def test_static_sizes_and_counts_keep_their_rows(name, rule):
    """Look-alikes: a static tuple of kept blocks, a static k (a shape), a static scan length: numbers, not choices."""
    rules = _static_rules(name)
    assert rule in rules and "static_choice" not in rules, name


@pytest.mark.parametrize("value", ["<function nothing_saveable at 0x7fb420585260>",
                                   "DotsSaveable(only_if_no_batch_dims=False)", "'train'", '"gelu"',
                                   "<built-in function max>"])
def test_choice_values(value):
    assert _choice_value(value)


@pytest.mark.parametrize("value", ["3", "0.5", "True", "(0, 2, 3)", "np.float32(0.5)", "Array(3, dtype=int32)",
                                   "int32(4)", "<Cfg object at 0x7f00>", "[1, 2]", "float32(1.0)"])
def test_numbers_sizes_and_identity_objects_are_no_choices(value):
    assert not _choice_value(value)


TX = FIXTURES / "scenarios" / "torch_xla"


def _rules(path) -> set[str]:
    doc = cli_json("explain-recompile", path, codes=(0, 1))
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}


def test_an_embedding_resized_mid_run_is_told_as_a_rebuilt_parameter():
    """embed_vocab_grow: the table rebuilt with 56 rows at step 3, the old 50 copied in; the first try said 'a value
    computed in the graph on some steps is device data on others ... sync at the same points every step'."""
    doc = cli_json("explain-recompile", TX / "embed_vocab_grow", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "inputs"
    assert "before the first step" in head["fix"] and "sync at the same points" not in head["fix"]


@pytest.mark.parametrize("name", ["review_last_batch", "rev4_kvcache", "hf_generate_no_cache", "ulmfit_unfreeze",
                                  "accum_tail", "review2_moco_queue", "spmd_load_state_mid"])
def test_last_batches_caches_and_state_are_no_resized_parameter(name):
    """Look-alikes: a short last batch, a cache grown by cat, layers unfrozen, a short accumulation group, a queue,
    weights restored mid-run: inputs or shapes change, but no table is rebuilt from an old one."""
    folder = TX / name
    path = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "record" \
        if (folder / "record").exists() else folder
    assert "inputs_resized" not in _rules(path), name


# review 21 (F2): a dimension shrunk is no longer a resize: a LoRA factor f32[2,32] took the place of a f32[32,32]
# layer's update in a broadcast, and was told "an embedding resized ... spare rows"; a table made again grows
@pytest.mark.parametrize("old, new, resized", [("f32[50,16]", "f32[56,16]", True), ("f32[4,32]", "f32[6,32]", True),
                                               ("f32[8,16]", "f32[4,16]", False), ("f32[32,32]", "f32[2,32]", False),
                                               ("f32[50,16]", "f32[56,20]", False),
                                               ("f32[50,16]", "bf16[50,16]", False), ("f32[50]", "f32[50,1]", False),
                                               ("f32[]", "f32[]", False)])
def test_resized_means_same_type_and_rank_one_dimension_grown(old, new, resized):
    from hlodiff.explain.resized_input import _resized

    assert _resized(old, new) is resized


def test_a_steady_run_a_resize_step_then_the_new_graph_for_good_is_switched():
    """embed_vocab_grow (A,A,A,B,C,C,C): the resize step's own graph (the copy traced into it), then the new step for
    good: one switch, was '3 compilations in 7 graphs' with no name."""
    out = cli("explain-recompile", TX / "embed_vocab_grow", codes=(1,)).stdout
    assert "switched: at sync at embed_vocab_grow.py:38 from graph 4 of 7" in out


@pytest.mark.parametrize("name, words", [("eval_own_sync", None), ("checkpoint_toggle", "switched"),
                                         ("spmd_load_state_mid", None)])
def test_look_alike_sequences_keep_their_names(name, words):
    """A one-graph change for good keeps `switched`; a restore whose next step is its own graph and a control keep
    what they said (no new `switched` where the run goes back)."""
    out = cli("explain-recompile", TX / name, codes=(0, 1)).stdout
    if words:
        assert words in out.splitlines()[0]
    else:
        assert "switched" not in out.splitlines()[0]
