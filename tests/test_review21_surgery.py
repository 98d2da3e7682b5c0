"""Parameters added to a model mid-run (new-user review 21, F2): LoRA adapters wrapped around a layer, or a new
head, are new trained tensors of shapes no earlier step had, told as model surgery (add them before the first step,
or expect this one compilation), not as an embedding resized with spare rows, a value synced on some steps or a size
to pad. One test per row, beside the look-alikes that share its evidence (a resized embedding, a pruning
reparametrization, layers unfrozen, an EMA begun late) and keep their rows; ``compare`` of the same pair agrees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import FIXTURES, cli, explained
from hlodiff.diff.fix_rules import RULES
from hlodiff.dumps.run_folder import discover

SCENARIOS = FIXTURES / "scenarios" / "torch_xla"


def _capture(name: str) -> str:
    mode = json.loads((SCENARIOS / f"{name}.truth.json").read_text())["capture"]
    return str(SCENARIOS / name / {"c": "record", "a": "graphs.hlo.0"}.get(mode, ""))


def _rules(name: str) -> dict[str, str | None]:
    """The fix row of each cause kind of the run's first recompilation (as explain-recompile tells it)."""
    r = explained(discover([_capture(name)], None, None)).recompilations[0]
    return {c.kind: c.fix_rule for c in r.causes}


def test_table_rows_are_the_ones_tested():
    assert {"inputs_params_added", "shape_follows_params_added"} <= {r.name for r in RULES}


@pytest.mark.parametrize("name", ["rev21_tx_lora_added", "rev21_tx_aux_head_added"])
def test_new_trained_parameters_are_model_surgery(name):
    # first try (lora): "a tensor ... made again at another size ... an embedding resized for added tokens ...
    # allocate spare rows"; (aux head): layers unfrozen or a pruning reparametrization's weight_orig and weight_mask
    assert _rules(name)["inputs"] == "inputs_params_added"


def test_the_adapters_shape_change_follows_and_gets_no_padding_plan():
    # first try: "keep sizes fixed (allocate the largest once, mask)", plan "pad 2 up to 32" (the LoRA rank padded
    # to the hidden size)
    r = explained(discover([_capture("rev21_tx_lora_added")], None, None)).recompilations[0]
    shape = next(c for c in r.causes if c.kind == "shape")
    assert shape.fix_rule == "shape_follows_params_added" and shape.plan is None


def _all_rules(name: str) -> set[str | None]:
    return {c.fix_rule for r in explained(discover([_capture(name)], None, None)).recompilations for c in r.causes}


def test_a_resized_embedding_stays_a_resize():
    rules = _all_rules("embed_vocab_grow")  # rows added to a table (50 -> 56), the old ones copied in
    assert "inputs_resized" in rules and not rules & {"inputs_params_added", "shape_follows_params_added"}


@pytest.mark.parametrize("name", [
    "r27_tx_prune_schedule",  # weight_orig / weight_mask: new trained tensors of the weight's own shapes
    "ulmfit_unfreeze",  # layers unfrozen: their weights were inputs already
    "lr_ema_after_warmup",  # an EMA begun late: updated, not trained
    "ema_every4",  # an EMA on some steps
    "review2_moco_queue",  # a queue grown by cat: new shapes each step, carried and read, not parameters added
    "rev4_lr_float",  # the first step's warm-up: a tensor created on the first step, device data from then on
    "x4c_prev_output_control",  # the first backward's gradients kept (zero_grad(set_to_none=False))
    "x6c_window_cat_control",  # a window made on the first step
])
def test_look_alikes_are_not_surgery(name):
    assert not _all_rules(name) & {"inputs_params_added", "shape_follows_params_added"}


def test_compare_of_the_pair_explain_compared_tells_its_story():
    # first try: `compare #0 #3` told "a value computed in the graph on some steps is device data" and "keep sizes
    # fixed", at lines :45/:47, while explain-recompile told the added parameters at :39
    run = _capture("rev21_tx_lora_added")
    out = cli("compare", f"{run}#0", f"{run}#3", codes=(0, 1)).stdout
    assert "parameters added to the model mid-run" in out and "rev21_tx_lora_added.py:39" in out
    assert "synced or read before" not in out and "keep sizes fixed (allocate" not in out
    other = cli("compare", f"{run}#1", f"{run}#3", codes=(0, 1)).stdout  # not explain's pair: the differ's own
    assert "parameters added to the model mid-run" not in other


def test_the_surgery_is_placed_at_the_line_that_made_the_new_parameters():
    # first try: the head added at :30 was placed at opt.step() :39 (the optimizer's new scalars' line)
    for name, line in (("rev21_tx_aux_head_added", 30), ("rev21_tx_lora_added", 39)):
        root = explained(discover([_capture(name)], None, None)).recompilations[0].causes[0]
        assert (root.locations[0].file.rsplit("/", 1)[-1], root.locations[0].line) == (f"{name}.py", line)
