"""The last read of the twelfth stop (docs/accuracy.md, "The last read"): rules whose evidence test let a
look-alike get their confident fix, each narrowed and shown on the look-alike's evidence.

- ``inputs_trained_from_step`` now needs the fact ``trains`` (:func:`hlodiff.explain.fix_evidence.
  trains_new_tensors`): an EMA of the weights begun after a warm-up and kept every step (lr_ema_after_warmup) has
  the same evidence as layers unfrozen, but adds no weight gradient and its inputs feed only its own update; it
  gets ``inputs_updated_from_step`` ("from step 3 on ... an EMA ... expected"). ``outputs_unfrozen`` (wt-left49,
  the same evidence) needs ``trains`` too.
- ``static_partial`` now needs the partial made again (:func:`hlodiff.explain.fix_context.value_remade`): one miss
  printing the same value on both sides, or more compilations than distinct values. Two partials made once before
  the loop and passed in turn (lr_jx_two_partials) get ``static_partials_kept``.

Inputs: real captures (fixtures/scenarios/<engine>/<name>/) or small unit-level inputs."""

from __future__ import annotations

import pytest

from explain_helpers import explain_capture as _doc, fix_rule_set as _rules
from hlodiff.explain.fix_context import value_remade

_P1 = "functools.partial(<function huber at 0x7f01>, delta=1.0)"
_P2 = "functools.partial(<function huber at 0x7f01>, delta=2.0)"


def test_an_ema_begun_after_warmup_is_not_told_as_tensors_trained_for_good():
    doc = _doc("scenarios/torch_xla/lr_ema_after_warmup")
    rules = _rules(doc)
    assert not rules & {"inputs_trained_from_step", "outputs_unfrozen"} and "inputs_updated_from_step" in rules
    fix = doc["headline"]["fix"]
    assert fix.startswith("from step 3 on") and "EMA" in fix
    assert not any(w in fix for w in ("unfrozen", "prune", "requires_grad", "trained for good"))


def test_unfrozen_layers_and_a_pruning_reparametrization_stay_trained_for_good():
    """Look-alikes the other way: the unfrozen group adds its weight gradient (a dot); prune's weight_orig and mask
    feed the kept forward matmul."""
    assert "outputs_unfrozen" in _rules(_doc("scenarios/torch_xla/ulmfit_unfreeze"))
    assert "inputs_trained_from_step" in _rules(_doc("scenarios/torch_xla/r27_tx_prune_schedule"))


@pytest.mark.parametrize("pair, values, compilations, remade", [
    ((_P1, _P1), (_P1,), 8, True),        # a partial made again each step: the miss prints one value twice
    ((_P1, _P2), (_P1, _P2), 2, False),   # two partials made once, passed in turn: one compilation each
    ((_P1, _P2), (_P1, _P2), 5, True),    # more compilations than values: some value was made again
    ((), (_P1, _P2), 2, False),
])
def test_value_remade_needs_a_repeat_or_more_compilations_than_values(pair, values, compilations, remade):
    assert value_remade(pair, values, compilations) is remade


def test_two_partials_made_once_are_not_told_to_be_made_once():
    doc = _doc("scenarios/jax/lr_jx_two_partials")
    rules = _rules(doc)
    assert "static_partial" not in rules and "static_partials_kept" in rules
    fix = doc["headline"]["fix"]
    assert "made again" not in fix and "before the loop" not in fix and "traced arguments" in fix
    assert "static_partial" in _rules(_doc("scenarios/jax/r27_jx_partial_static_loss"))


# -- cost round trip: only a line that moves the value gets "t.detach() gives the same values" -----------------------

@pytest.mark.parametrize("line, moved", [
    ("h = torch.from_numpy(h.detach().cpu().numpy()).to(dev)", True),
    ("h = torch.tensor(h.cpu().numpy(), device=dev)", True),
    ("h = h.detach().cpu().clone().to(dev, non_blocking=True)", True),
    ("ret = torch.from_numpy(scipy.signal.lfilter([1], [1, -g], rew.cpu().numpy())).to(dev)", False),
    ("ret = torch.from_numpy(rew.cpu().numpy()[::-1].cumsum()).to(dev)", False),
    ("h = torch.from_numpy(np.tanh(h.cpu().numpy())).to(dev)", False),
    ("h = torch.from_numpy(h.cpu().numpy() * 0.5).to(dev)", False),
])
def test_moves_only_reads_the_line(tmp_path, line, moved):
    from hlodiff.dumps.move_line import moves_only

    src = tmp_path / "train.py"
    src.write_text(f"import torch\n{line}\n")
    assert moves_only(str(src), 2) is moved
    assert moves_only(str(tmp_path / "absent.py"), 2) is None


def _cost(name: str, monkeypatch, mapped: bool) -> dict:
    from conftest import FIXTURES
    from helpers import cli_json

    folder = FIXTURES / "scenarios" / "cost"
    if mapped:
        monkeypatch.setenv("HLODIFF_SOURCE_MAP", f"/home/user/project={folder}")
    else:
        monkeypatch.delenv("HLODIFF_SOURCE_MAP", raising=False)
    return cli_json("cost", str(folder / name / "record"), codes=(0,))["headline"]


@pytest.mark.parametrize("mapped", [True, False])
def test_returns_computed_on_the_host_are_not_told_detach_gives_the_same_values(monkeypatch, mapped):
    """lr_reinforce_host_returns: the rewards read and the returns uploaded at one line, same shape, other values."""
    head = _cost("lr_reinforce_host_returns", monkeypatch, mapped)
    assert head["round_trip"] and not head["moved_only"]
    assert "same values" not in head["fix"] and "torch ops on the device" in head["fix"]


def test_state_only_moved_through_the_host_keeps_the_confident_fix(monkeypatch):
    head = _cost("x9c_hidden_host_detach", monkeypatch, True)
    assert head["moved_only"] and "gives the next graph the same values" in head["fix"]


# -- compare-runs: a non-leading dimension is a length only when a kept input shows dimension 0 is the batch ---------

def test_a_time_major_batch_is_not_told_as_a_length_with_a_leading_batch():
    """lr_torch_time_major_batch: s64[35,8] -> s64[35,16], the batch size from argv; no input that kept its shape
    starts with 35, so hlodiff says which dimension changed and gives both readings."""
    from runs_helpers import runs_headline

    fix = runs_headline("lr_torch_time_major_batch")["fix"]
    assert "(batch)" not in fix and "dimension 1 changed" in fix
    assert "batch size" in fix and "pad to a fixed length" in fix
    pad = runs_headline("runs10_pad_longest")["fix"]  # y f32[8,4] kept its shape: dimension 0 is the batch
    assert "pad to a fixed length" in pad and "batch size" not in pad


# -- Dynamo: a freed module's guard does not claim the user turned inlining off ---------------------------------------

def test_a_freed_module_is_not_told_the_user_set_inlining_off():
    """Nothing in the log shows ``inline_inbuilt_nn_modules = False`` was set: it is the default up to torch 2.4
    (a run on torch 2.4 has the same evidence). The fix names the setting to turn on, and reusing one model."""
    from hlodiff.diff.fixes import choose

    text = choose("guard", frozenset({"dynamo", "module_freed"})).text
    assert "inline_inbuilt_nn_modules = True" in text and "default from torch 2.5" in text
    assert "= False makes it" not in text and "leave that setting at its default" not in text
    assert "reuse one model" in text


def test_a_module_backward_hook_may_be_a_librarys():
    """Opacus-style per-sample gradients register the hooks (register_module_full_backward_hook, or on every
    layer): the break's reason is the same; "remove the module hook" alone points at code the user did not write."""
    from hlodiff.diff.fixes import choose

    text = choose("graph_break", frozenset({"dynamo", "op:module_backward_hook"})).text
    assert "the library that registered it" in text and "register_module_full_backward_hook" in text


def test_an_entry_in_run_a_s_listing_may_have_been_removed_before_run_b(tmp_path):
    """runs10_check_contents without its error: the listing beside run A shows the entry after run A, not when run B
    looked; an eviction or a cleanup between the runs has the same evidence."""
    from runs_helpers import compare_runs, copy_runs

    folder = copy_runs("runs10_check_contents", tmp_path)
    log = folder / "run_b" / "stderr.log"
    log.write_text("".join(t for t in log.read_text().splitlines(keepends=True) if "inconsistency" not in t))
    fix = compare_runs(folder)["headline"]["fix"]
    assert "still holds it" not in fix and "removed between the runs" in fix and "eviction" in fix


def _trained_by(name: str) -> list[tuple[int, bool, bool]]:
    """(graph, gradient_added, feeds_step) of each recompilation of a torch_xla scenario that adds tensors it trains
    or updates (``updated_from_step`` rows and ``trains``'s two kinds of evidence)."""
    from helpers import capture_argv, explained
    from hlodiff.dumps.run_folder import discover
    from hlodiff.explain.fix_evidence import gradient_op_added, new_inputs_feed_step

    run = explained(discover(capture_argv(f"scenarios/torch_xla/{name}"), None, None), [])
    return [(r.graph.record.index, gradient_op_added(r), new_inputs_feed_step(r)) for r in run.recompilations]


def test_trains_is_two_kinds_of_evidence_each_its_own_fact():
    """``trains`` holds on a gradient op added (unfrozen layers: ulmfit_unfreeze) or on new inputs that feed the
    step's own work (prune's weight_orig and mask into the kept matmul: r27_tx_prune_schedule, no new dot); an EMA
    begun late has neither; a queue begun late (lr50_tx_queue_begun_late) has both: its new dot reads the queue."""
    assert {(g, f) for _, g, f in _trained_by("ulmfit_unfreeze")} == {(True, False)}
    assert (4, False, True) in _trained_by("r27_tx_prune_schedule")
    assert _trained_by("lr_ema_after_warmup") == [(4, False, False)]
    assert (3, True, True) in _trained_by("lr50_tx_queue_begun_late")
