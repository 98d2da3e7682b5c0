"""Round 24 (blind, torch_xla and JAX): what the first try told less than right, on its real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence: one input handed over in two formats
(hard class indices on some steps, soft targets on others), and a prefix slice of a tensor that keeps its size."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, fix_rules_of

from hlodiff.diff.input_formats import format_switch
from hlodiff.diff.model import Cause, Change, InstructionRef
from hlodiff.diff.slice_facts import prefix_of_fixed

SC = FIXTURES / "scenarios" / "torch_xla"


def _doc(path: str) -> dict:
    return cli_json("explain-recompile", str(SC / path), codes=(0, 1),
                    env={"HLODIFF_SOURCE_MAP": f"/home/user/project={SC}"})


def _param(shape: str, n: int = 0) -> InstructionRef:
    return InstructionRef("main", f"p{n}.{n}", "parameter", shape)


def _inputs(gone: list[str], came: list[str]) -> Cause:
    origins = [Change(_param(s, i), None) for i, s in enumerate(gone)]
    origins += [Change(None, _param(s, 10 + i)) for i, s in enumerate(came)]
    return Cause("inputs", "inputs changed", origins=origins)


@pytest.mark.parametrize("gone, came, told", [
    (["f32[]", "f32[8,10]{1,0}"], ["s64[8]{0}"], ("f32[8,10]", "s64[8]")),   # soft targets, then hard labels
    (["s64[8]{0}"], ["f32[8,10]{1,0}"], ("s64[8]", "f32[8,10]")),            # the other way round
    (["s64[8]{0}", "f32[4,32]{1,0}"], ["f32[8,1]{1,0}", "f32[1,32]{1,0}"], None),  # another head's weights too
    ([], ["f32[8]{0}"], None),                                               # a key on some batches only
    (["s32[8]{0}"], ["s64[8]{0}"], None),                                    # one rank, ints both: a dtype
    (["s64[8]{0}"], ["f32[4,10]{1,0}"], None),                               # other rows: not one batch
])
def test_one_input_in_two_formats_is_told_only_when_nothing_else_came_or_went(gone, came, told):
    logits = frozenset({"f32[8,10]", "f32[4,10]", "f32[8,1]"})  # what the graph's dots compute (every float here)
    assert format_switch(_inputs(gone, came), logits) == told


@pytest.mark.parametrize("dots", [
    frozenset({"f32[8,64]"}),   # token ids on some steps, dense features f32[8,128] on others: no class axis of 128
    frozenset(),                # no graph read: the class axis is not known
])
def test_a_float_input_that_is_no_target_over_the_classes_is_no_format_switch(dots):
    """The eleventh stop's read: an int input and a float one of one batch are as likely ids and features."""
    assert format_switch(_inputs(["s64[8]{0}"], ["f32[8,128]{1,0}"]), dots) is None
    assert format_switch(_inputs(["s64[8]{0}"], ["f32[8,128]{1,0}"]), dots | {"f32[8,128]"}) == ("s64[8]", "f32[8,128]")


def test_soft_and_hard_targets_are_told_as_one_format_every_step():
    """r24_tx_mixup_soft_hard: the first try said 'run the same ops every step (torch.where, or multiply by a 0/1
    mask)', as for a block an `if` skips; the batch's targets came as s64[8] or f32[8,10]."""
    doc = _doc("r24_tx_mixup_soft_hard/graphs.hlo.0")
    fix = doc["headline"]["fix"]
    assert "inputs_format_switch" in fix_rules_of(doc)
    assert "one format every step" in fix and "s64[8]" in fix and "torch.where" not in fix


def test_two_heads_picked_by_an_if_keep_their_path_swap():
    """rev7_two_heads: the labels change format with the head, but the heads' weights come and go too."""
    assert "inputs_format_switch" not in fix_rules_of(_doc("rev7_two_heads/record"))


def _slice(left: str, right: str, of_left: str, of_right: str) -> Cause:
    a = InstructionRef("main", "slice.1", "slice", "f32[8,4]")
    b = InstructionRef("main", "slice.1", "slice", "f32[8,8]")
    change = Change(a, b, ("attribute:slice",), {"attribute:slice": (left, right), "slice_of": (of_left, of_right)})
    return Cause("attribute", "slice changed", origins=[change])


@pytest.mark.parametrize("left, right, of_left, of_right, full", [
    ("{[0:8], [0:4]}", "{[0:8], [0:8]}", "8,12", "8,12", 12),   # logits[:, :n_seen] of a 12-way head
    ("{[0:8], [0:4]}", "{[0:8], [0:8]}", "8,8", "8,12", None),  # the operand changed too: the size comes from there
    ("{[0:8], [2:6]}", "{[0:8], [1:8]}", "8,12", "8,12", None),  # a window, not a prefix
    ("{[0:8], [0:4]}", "{[0:8], [0:12]}", "8,12", "8,12", 12),  # one side the whole axis
])
def test_a_prefix_of_a_tensor_that_keeps_its_size_gives_its_full_size(left, right, of_left, of_right, full):
    assert prefix_of_fixed(_slice(left, right, of_left, of_right)) == full


def test_a_prefix_cut_by_an_input_s_length_is_no_prefix_of_a_fixed_tensor():
    """The eleventh stop's read: ``logits[:, :x.shape[1]]`` with x a batch of another length: x's size sets n, and
    keeping all and masking would leave x's own recompile; the cause's resized input rules the row out."""
    cause = _slice("{[0:8], [0:4]}", "{[0:8], [0:8]}", "8,12", "8,12")
    cause.origins.append(Change(_param("s64[8,4]{1,0}"), _param("s64[8,8]{1,0}"), ("shape",)))
    assert prefix_of_fixed(cause) is None
    # an input whose layout alone differs has kept its size
    cause.origins[-1] = Change(_param("s64[8,4]{1,0}"), _param("s64[8,4]{0,1}"), ("layout",))
    assert prefix_of_fixed(cause) == 12


def test_a_class_incremental_slice_is_told_to_keep_every_logit_and_mask():
    """r24_tx_class_incremental: the first try said 'pad to a fixed length and mask, or bucket lengths', though
    nothing is short: the head already has all 12 logits."""
    doc = _doc("r24_tx_class_incremental")
    fix = doc["headline"]["fix"]
    assert "slice_prefix_of_fixed" in fix_rules_of(doc)
    assert "keep all 12" in fix and "pad" not in fix and "bucket" not in fix


def test_a_trimmed_batch_whose_length_was_read_keeps_the_read_row():
    """trim_padding: x[:, :int(lengths.max())]: the length read to the host earlier decides (slice_length_from_read)."""
    assert "slice_prefix_of_fixed" not in fix_rules_of(_doc("trim_padding/graphs.hlo.0"))


def test_a_block_diagonal_mask_made_on_the_device_is_told_to_be_built_from_data():
    """r24_tx_packed_blockdiag: torch.block_diag(*[torch.ones(n, n, device=dev) for n in lens]); the first try said
    'keep sizes fixed (allocate the largest once, mask)' and planned padding each document up to a bucket."""
    doc = _doc("r24_tx_packed_blockdiag/dump")
    head = doc["headline"]
    assert "shape_made_pieces_joined" in fix_rules_of(doc)
    assert "on the host" in head["fix"] and "segment ids" in head["fix"]
    assert all(c["plan"] is None for r in doc["recompilations"] for c in r["causes"])


@pytest.mark.parametrize("path", ["review2_moco_queue/record", "x6c_preds_cat_epoch/record",
                                  "hf_generate_no_cache", "collate_pad_longest"])
def test_tensors_grown_or_batched_by_cat_keep_their_rows(path):
    """A queue or a list grown by torch.cat, a sequence grown a token at a time, a batch padded per collate."""
    assert "shape_made_pieces_joined" not in fix_rules_of(_doc(path))


def test_a_mask_built_in_the_graph_or_passed_in_is_not_told_as_a_missing_sync_alone():
    """r24_tx_ul2_causal_toggle: is_causal=True builds the mask inside scaled_dot_product_attention, the prefix
    objective passes one in. The first try said only 'check which tensor is synced or read before this step on
    some steps only, and sync at the same points every step' (passed by the truth's loose words, told wrong)."""
    fix = _doc("r24_tx_ul2_causal_toggle")["headline"]["fix"]
    assert "one way every step" in fix and "Python `if`" in fix and "pred[16,16]" in fix
