"""New-user review 10 (2026-11-27), torch_xla and JAX findings F2, F3, F4, F7, F8, each on the reviewer's program
captured as a scenario (fixtures/scenarios/*/rev10_*) and on the look-alikes whose answer must not move."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json, explained
from hlodiff.dumps.run_folder import discover
from hlodiff.explain.after_reads import read_chose_ops

SCEN = FIXTURES / "scenarios"
ITEM = SCEN / "torch_xla" / "rev10_tx_item_mid" / "record"


def _head(path) -> list[str]:
    return cli("explain-recompile", str(path), codes=(0, 1)).output.split("\n\n", 1)[0].splitlines()


def _family(path, key_part: str):
    run = explained(discover([str(path)], None, None), [])
    return next(f for f in run.families if key_part in f.key)


# -- F2: a branch on .item() mid-step, step 0's second graph, a split step that differs once --------------------

def test_a_branch_on_an_item_read_is_told_torch_where_not_pad():
    """tx_item_mid: `if norm.item() / 1024.0 > 1e5:` skips the step on a spike; the graphs after the read differ by
    the branch (the optimizer's update gone), never by a size: the fix is the branch on the device."""
    first, fix = _head(ITEM)[:2]
    assert "torch.where" in fix and ".item()" in fix
    assert "pad to the maximum" not in fix and "bucket" not in fix
    # the branch lines: scale halved (:15) on the spike, p.grad.div_ / opt.step() (:19, :20) on the other steps;
    # the first step's pending initialisation (:5, :7, above the read) is no branch
    assert "differing at rev10_tx_item_mid.py:15, 19, 20 (lines traced on some steps only)" in fix


def test_the_graphs_after_a_read_decide_branch_or_size_by_the_sizes_they_use():
    assert read_chose_ops(_family(ITEM, "rev10_tx_item_mid.py:22"))
    # look-alike: trim_padding's `x[:, :int(lengths.max())]` (a size taken from the read): the size fix stays
    trim = SCEN / "torch_xla" / "trim_padding" / "graphs.hlo.0"
    assert not read_chose_ops(_family(trim, "trim_padding.py:22"))
    fix = _head(trim)[1]
    assert "pad to a fixed length" in fix and "torch.where" not in fix and "differing at" not in fix
    # look-alike: if_loss_spike's `if loss > 4.0: loss = loss * 0.1` names its one branch line
    spike = _head(SCEN / "torch_xla" / "if_loss_spike")[1]
    assert "differing at if_loss_spike.py:15 (lines traced on some steps only)" in spike


def test_a_split_step_that_differs_once_is_one_off_and_step_0_s_second_graph_is_named():
    first = _head(ITEM)[0]
    assert "one-off: each step (sync at rev10_tx_item_mid.py:22) is split in two by an early read at " \
           "rev10_tx_item_mid.py:14" in first
    assert "graph 7 of 12 (#6)" in first and "no fixed order" not in first and "recurring" not in first
    # review 20, F2: the first step's second graph is a first compilation, not counted as a recompilation
    assert "2 recompilations (the first step's second graph is a first compilation, an early read cut the step)" in first
    doc = cli_json("explain-recompile", str(ITEM), codes=(1,))
    assert doc["families"][0]["pattern"]["name"] == "one-off"
    # look-alikes: a plain split stays split (every step the same pair), and its one recompilation is the same aside
    plain = _head(SCEN / "cost" / "xla_item_mid_step" / "record")[0]
    assert "split: each step" in plain and "0 recompilations (the first step's second graph is a first compilation" in plain
    adam = _head(SCEN / "torch_xla" / "rev5_item_clip_adam")[0]
    assert "split: each step" in adam and "one-off" not in adam


# -- F3: cost at the step's only sync, a loss scale carried from step to step ---------------------------------------

def test_cost_does_not_ask_to_remove_the_step_s_only_sync():
    doc = cli_json("cost", str(SCEN / "cost" / "rev10_tx_item_mid_cost" / "record"), codes=(0,))
    head = doc["headline"]
    assert (head["kind"], head["location"]["line"], head["followed_by"]) == ("read_in_step", 14, 2)
    assert "torch.where" in head["fix"] and "remove the sync" not in head["fix"]
    assert "activations" not in head["summary"]


def test_look_alikes_keep_their_cost_findings():
    """A sync inside the forward still hands activations to the backward (one step); a read whose one program
    follows it every step is still moved after the sync."""
    fwd = cli_json("cost", str(SCEN / "cost" / "xla_sync_in_forward" / "record"), codes=(0,))["headline"]
    assert fwd["kind"] == "held_across_graphs" and fwd["role"] == "activation"
    item = cli_json("cost", str(SCEN / "cost" / "xla_item_mid_step" / "record"), codes=(0,))["headline"]
    assert item["followed_by"] == 1 and "add_step_closure" in item["fix"]


# -- F4: compare's outputs beside a constant ----------------------------------------------------------------------

def test_outputs_of_another_number_do_not_follow_from_a_constant():
    out = cli("compare", f"{ITEM}#1", f"{ITEM}#7", codes=(1,)).output
    outputs = out.split("  outputs", 1)[1].split("  aliasing", 1)[0]
    assert "follows from the constant change" not in outputs
    assert "another number of outputs" in outputs and "torch.where" in outputs


def test_outputs_that_change_type_with_autocast_still_follow_it():
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "autocast_late"), codes=(0, 1))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "outputs"}
    assert "outputs_follow" in rules and "outputs_other_values" not in rules


# -- F7: the lr advice of eager torch_xla and torch.compile, each saying why the other differs -----------------------

def test_eager_lr_advice_says_why_torch_compile_differs():
    fix = _head(SCEN / "torch_xla" / "rev10_tx_warmup_lr" / "record")[1]
    assert "not a tensor lr" in fix and "under torch.compile it is the other way round" in fix


def test_torch_compile_number_advice_says_why_eager_differs():
    doc = cli_json("explain-recompile", str(SCEN / "dynamo" / "dyn_sched_lr"), codes=(1,))
    fix = doc["headline"]["fix"]
    assert "pass it as a tensor" in fix and "without torch.compile, torch_xla passes such a number as device data" in fix


# -- F8: a sharding without annotation ------------------------------------------------------------------------------

def test_an_unannotated_sharding_is_named_before_the_arrow():
    out = cli("explain-recompile", str(SCEN / "jax" / "rev10_jx_sharding"), codes=(1,)).output
    assert "%params__w1__.1: none (no sharding annotation) -> {replicated}" in out
    assert ":  -> " not in out
