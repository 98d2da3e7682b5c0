"""What round 27 (docs/accuracy.md, "Round 27") changed, shown on the real runs it was made for and on the real
look-alikes that share their evidence.

- ``static_partial`` (fact ``partial_values``, :func:`hlodiff.diff.value_facts.partial_objects`): a static argument
  that is a ``functools.partial`` made again before each call. Every partial of one function and arguments prints
  the same, so the default-repr fact (``static_identity``) and a "new value" cannot say why it misses; the fix is to
  make the partial once, or pass ``jax.tree_util.Partial`` as an ordinary argument.
- ``prune_combine_masks`` (:data:`hlodiff.diff.library_reads.LIBRARY_READS`): a second prune of one weight cuts the
  step with a boolean index inside ``torch.nn.utils.prune``; ``partial_mask_index`` ("apply the mask as values with
  torch.where") no longer answers a cut a library row names, since the index is not the user's to change.
- ``inputs_trained_from_step`` (facts ``updated_in_place`` and ``stays``): weight-sized tensors read and rewritten
  from one step on while the graph before never comes back (a pruning reparametrization, layers unfrozen) are new
  trained tensors for good, not "an EMA updated on some steps only"; ema_every4's EMA, whose graph without it comes
  back, keeps ``inputs_updated_some_steps``.

Inputs: real captures only (fixtures/scenarios/<engine>/<name>/)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_capture as _doc, fix_rule_set as _rules
from hlodiff.diff.value_facts import partial_objects


@pytest.mark.parametrize("values, expected", [
    (("functools.partial(<function huber at 0x7f01>, delta=1.0)",) * 3, True),     # one repr, many partials
    (("functools.partial(<function huber at 0x7f01>, delta=1.0)",
      "functools.partial(<function huber at 0x7f01>, delta=0.5)"), True),          # an argument changes too
    (("<__main__.Cfg object at 0x1>", "<__main__.Cfg object at 0x2>"), False),     # static_identity's
    (("<function policy at 0x1>", "<function policy at 0x2>"), False),             # static_redefined_function's
    (("functools.partial(<function huber at 0x7f01>, delta=1.0)", "0.5"), False),  # not every value a partial
    ((), False),
])
def test_partial_objects_is_every_value_a_functools_partial(values, expected):
    assert partial_objects(values) is expected


def test_a_partial_made_each_step_and_passed_static_is_told_to_be_made_once():
    doc = _doc("scenarios/jax/r27_jx_partial_static_loss")
    head = doc["headline"]
    assert head["kind"] == "static_argument" and head["location"]["line"] == 31
    assert "functools.partial" in head["fix"] and "compared by identity" in head["fix"]
    assert "once, before the loop" in head["fix"] and "jax.tree_util.Partial" in head["fix"]
    assert "static_partial" in _rules(doc)


@pytest.mark.parametrize("path, rule", [
    ("scenarios/jax/rev11_jx_static_obj", "static_identity"),                     # an object without __eq__
    ("scenarios/jax/x8c_jx_remat_policy_fresh", "static_redefined_function"),     # a def made again
    ("scenarios/jax/jax_remat_policy_switch", "static_choice"),                   # two named functions
])
def test_static_look_alikes_keep_their_rows(path, rule):
    rules = _rules(_doc(path))
    assert rule in rules and "static_partial" not in rules


def test_a_partial_wrapping_the_jitted_step_is_still_no_finding():
    """jax_partial_per_step_control: a new partial each step around the jitted function, not passed static."""
    assert _doc("scenarios/jax/jax_partial_per_step_control")["headline"] is None


def test_a_second_prune_cut_is_named_as_torch_s_not_a_mask_index_to_rewrite():
    doc = _doc("scenarios/torch_xla/r27_tx_prune_schedule")
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "partial"]
    assert fixes and all("torch.nn.utils.prune" in f and "torch.where" not in f for f in fixes)
    assert "partial_library_read" in _rules(doc) and "partial_mask_index" not in _rules(doc)


@pytest.mark.parametrize("path", [
    "scenarios/torch_xla/review_bool_index", "scenarios/torch_xla/r25_tx_mlm_mask_assign",
])
def test_a_users_own_boolean_index_keeps_the_mask_as_values_fix(path):
    assert "partial_mask_index" in _rules(_doc(path))


def test_live_waits_before_calling_a_change_seen_once_a_periodic_update():
    """r27_tx_prune_schedule live: step 4's graph reads and rewrites the pruning mask and weight_orig, weight-shaped
    tensors, as every step after it does. Told at once, "updated in place on step 4 only (an EMA of the weights)" was
    a claim about steps not yet run; the fix now waits for the next steps, and no line before the report at exit
    calls it an EMA on step 4 alone."""
    from live_replay import printed, replay_case

    said = printed(replay_case("torch_xla/r27_tx_prune_schedule"))
    assert any("step 4 recompiled" in line and "told once the next steps show" in line for line in said)
    assert not any("on step 4 only" in line or "an EMA of the weights" in line for line in said)


@pytest.mark.parametrize("case", ["torch_xla/ema_every4", "torch_xla/rev11_tx_ema_control"])
def test_live_still_tells_a_periodic_ema_update(case):
    """Look-alikes: an EMA of the weights folded into the step every few steps is still told so, once the steps
    showed it come back (ema_every4), and the EMA control stays quiet."""
    from live_replay import printed, replay_case

    said = printed(replay_case(case))
    if case.endswith("ema_every4"):
        assert any("an EMA of the weights" in line for line in said)
    else:
        assert not any("an EMA of the weights" in line and "fix:" in line for line in said)


def test_weights_trained_for_good_from_a_step_are_not_an_ema():
    doc = _doc("scenarios/torch_xla/r27_tx_prune_schedule")
    rules = _rules(doc)
    assert "inputs_trained_from_step" in rules and "inputs_updated_some_steps" not in rules
    head = _doc("scenarios/torch_xla/ulmfit_unfreeze")["headline"]
    assert head["fix"].startswith("from step 2 on") and "requires_grad_(True)" in head["fix"]
    assert "an EMA" not in head["fix"]


def test_a_periodic_ema_keeps_its_row():
    """ema_every4: the EMA joins the step on steps 3 and 7, the graph without it comes back in between."""
    rules = _rules(_doc("scenarios/torch_xla/ema_every4"))
    assert "inputs_updated_some_steps" in rules and "inputs_trained_from_step" not in rules
