"""The rules round 2 of the unseen-runs work added (docs/accuracy.md, "Round 2"), each shown on the real run it was
made for and on the real look-alikes that share its surface evidence, plus the small readers they rest on.

Inputs: real captures only (fixtures/scenarios/<engine>/<name>/, fixtures/<engine>/<fixture>/); the readers are
fed the exact text JAX and XLA print."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import capture_argv as _argv, cli_json
from hlodiff.diff.origin_facts import _window_moves
from hlodiff.diff.value_facts import _OBJECT_REPR, _equal_numbers
from hlodiff.dumps.jax_cache_miss import _type_part

SCEN = FIXTURES / "scenarios"




def _head_rule(path: str) -> str | None:
    doc = cli_json("explain-recompile", *_argv(path), codes=(0, 1))
    heads = [r["causes"][0] for r in doc["recompilations"] if r["causes"]]
    head = doc.get("headline")
    for r in doc["recompilations"]:
        if head and r["graph"] == head.get("graph") and r["causes"]:
            return r["causes"][0]["fix_rule"]
    return heads[0]["fix_rule"] if heads else None


@pytest.mark.parametrize("path, rule", [
    ("scenarios/torch_xla/accum_tail", "loop_count_inputs"),
    ("scenarios/torch_xla/cutmix_box", "slice_window"),
    ("scenarios/torch_xla/teacher_forcing", "ops_branch"),  # its slices, paired otherwise, follow from the ops
    ("scenarios/jax/jax_config_identity", "static_identity"),
    ("scenarios/jax/jax_static_int_float", "static_type_only"),
    ("scenarios/jax/jax_key_type", "dtype_prng_key_jax"),
    ("scenarios/torch_xla/checkpoint_toggle", "ops_checkpointing"),
    # review 10 F2: the same row, naming the lines where the branches differ (:15) now that the graphs show them
    ("scenarios/torch_xla/if_loss_spike", "partial_read_sets_branch_lines"),
    ("torch_xla/clip_later", "ops_switched_on"),
    ("scenarios/torch_xla/inner_loop_count", "ops_loop_unrolled"),
    ("scenarios/torch_xla/loss_history", "history_list_joined"),
    ("scenarios/torch_xla/bn_cumulative", "constant_cumulative_average"),
    ("scenarios/jax/jax_lazy_momentum", "inputs_jax_lazy_state"),
    ("scenarios/jax/jax_device_roundrobin", "cache_key_placement"),
])
def test_each_new_row_heads_the_run_it_was_made_for(path, rule):
    assert _head_rule(path) == rule


@pytest.mark.parametrize("path, not_rule", [
    # optimizer state and accumulated gradients are inputs shaped like kept inputs too, but the graph returns them
    ("torch_xla/adamw_split", "loop_count_inputs"), ("torch_xla/setup_accumulate", "loop_count_inputs"),
    ("torch_xla/momentum_warmup", "loop_count_inputs"),
    # a prefix x[:n] and an index x[i] are slices whose bounds move without a box's start and size both moving
    ("torch_xla/slice_length", "slice_window"), ("torch_xla/slice_index", "slice_window"),
    ("torch_xla/look_host_size", "slice_window"),
    # a slice whose bound really moved (x[:, i]) takes a bound the other graph never slices
    ("torch_xla/slice_index", "slice_rearranged"), ("torch_xla/slice_length", "slice_rearranged"),
    # an object hashed on an attribute: default repr as well, but its program changes with the value
    ("scenarios/jax/jax_method_hash", "static_identity"),
    # an optional leaf that comes and goes is no lazily created state; real compiler options stay options
    # FSDP's graphs hold optimization barriers on both sides: its warm-up is no checkpointing switched on
    ("torch_xla/fsdp_warmup", "ops_checkpointing"),
    # a value read early that sets a size (x[:, :int(lengths.max())]) is no branch: its whole graphs differ in sizes
    ("torch_xla/look_host_size", "partial_read_sets_branch"), ("scenarios/torch_xla/trim_padding",
                                                               "partial_read_sets_branch"),
    ("torch_xla/look_host_size", "partial_read_sets_branch_lines"), ("scenarios/torch_xla/trim_padding",
                                                                     "partial_read_sets_branch_lines"),
    # a block skipped at random comes back (no switch); a frozen backbone loses ops rather than gains them
    # layers unfrozen in stages add outputs too; a history carried compiles every step; a one-time switch adds once
    ("scenarios/torch_xla/ulmfit_unfreeze", "ops_loop_unrolled"), ("scenarios/torch_xla/loss_history",
                                                                    "ops_loop_unrolled"),
    ("torch_xla/unbounded_growth", "ops_loop_unrolled"),
    # a hidden state carried without detach grows the graph too, without a join of one more item
    ("torch_xla/look_rnn_carry", "history_list_joined"), ("scenarios/torch_xla/center_no_detach",
                                                          "history_list_joined"), ("scenarios/torch_xla/label_smoothing_on",
                                                          "ops_loop_unrolled"),
    ("torch_xla/look_stochastic_depth", "ops_switched_on"), ("torch_xla/look_frozen_backbone", "ops_switched_on"),
    ("jax/optional_key", "inputs_jax_lazy_state"), ("jax/compile_options", "cache_key_placement"),
])
def test_look_alikes_of_the_new_rows_get_another_answer(path, not_rule):
    assert _head_rule(path) != not_rule


def test_window_moves_only_for_a_box_placed_and_sized_per_step():
    assert _window_moves(("{[0:4], [0:3], [5:7], [0:16]}", "{[0:4], [0:3], [0:7], [0:16]}"))
    assert not _window_moves(("{[0:4], [0:9]}", "{[0:4], [0:12]}"))      # x[:, :n]: a prefix
    assert not _window_moves(("{[0:4], [3:4]}", "{[0:4], [5:6]}"))       # x[:, i]: an index
    assert not _window_moves(None)


def test_reciprocal_counts_are_a_cumulative_average_weight_only():
    from hlodiff.diff.value_facts import _reciprocal_counts
    assert _reciprocal_counts(("0", "1", "0.5", "0.333333343", "0.25", "0.2"))
    assert not _reciprocal_counts(("2", "1.7", "1.4", "1.1"))         # an annealed temperature
    assert not _reciprocal_counts(("0.5", "0.25", "0.125"))            # halved: 1/2, 1/4, 1/8 skip counts
    assert not _reciprocal_counts(("0.5", "0.333333343"))              # two values are no sequence


def test_equal_numbers_and_identity_reprs():
    assert _equal_numbers({"0", "0.0"}) and _equal_numbers({"1", "True"})
    assert not _equal_numbers({"0", "1"}) and not _equal_numbers({"0", "abc"})
    assert _OBJECT_REPR.match("<__main__.ModelConfig object at 0x000002>")
    assert not _OBJECT_REPR.match("<function relu at 0x7f00>") and not _OBJECT_REPR.match("0.5")


def test_jax_type_part_keeps_the_type_and_drops_the_placement():
    assert _type_part("u32[2]({})") != _type_part("key<fry>[]({})")
    assert _type_part("f32[4,4@d]({Explicit: ('d',)})") == _type_part("f32[4@d,4]({Explicit: ('d',)})") == "f32[4,4]"


def test_two_graphs_in_no_fixed_order_recur_and_strict_turns_alternate():
    irregular = cli_json("explain-recompile", *_argv("scenarios/torch_xla/random_flip_device"), codes=(1,))
    assert irregular["patterns"][0].startswith("recurring:")
    strict = cli_json("explain-recompile", *_argv("torch_xla/metric_even_steps"), codes=(1,))
    assert strict["patterns"][0].startswith("alternating:")


def test_sizes_that_come_back_are_not_growth():
    doc = cli_json("explain-recompile", *_argv("scenarios/torch_xla/random_crop"), codes=(0, 1))
    assert "grows" not in (doc["headline"]["fix"] or "")
