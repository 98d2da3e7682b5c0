"""Crossings, cost and live, round 8 (docs/accuracy.md): the rules it added, each on the real capture it was wrong
on, on rows of the one rule, and on the look-alikes that share its evidence.

* ``BoundaryTensor.added_to`` (``hlodiff/cost/boundaries.added_into``): gradients crossing into a graph whose
  backward adds into them (autograd's ``old + new`` of a ``.grad``: the graph reads the tensor, its report no
  longer lists it, its backward makes one of that shape) are accumulation by design, as micro-batches' are: two
  tasks synced apart, each with its own forward, is no finding; a ``retain_graph`` backward across a sync still is,
  now told by the saved activations that cross;
* ``static_redefined_function`` (``hlodiff/diff/fix_rules.py``, fact ``redefined_function``): a static argument
  that is one function made again before each call (a remat policy ``def``ined in the loop)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json, cost_scenario
from hlodiff.diff.value_facts import redefined_function

SCENARIOS = FIXTURES / "scenarios"




# -- gradients a later backward adds into -------------------------------------------------------------------------

def test_two_tasks_synced_apart_each_with_its_forward_is_no_finding():
    """x8c_task_resync_control: the first try told the encoder's gradients handed from task A's graph to task B's
    as 'remove the sync' (a confident wrong answer on a control): task B's backward adds into them."""
    doc = cost_scenario("x8c_task_resync_control")
    assert doc["headline"] is None
    first = doc["boundaries"][0]
    grads = [t for t in first["tensors"] if t["role"] == "gradient"]
    # the encoder's four gradients are added into; head A's two (task B never touches head A) are only read
    assert sorted(t["shape"] for t in grads if t["added_to"]) == ["f32[1024,1024]", "f32[1024,64]", "f32[1024]",
                                                                  "f32[1024]"]
    assert sorted(t["shape"] for t in grads if not t["added_to"]) == ["f32[8,1024]", "f32[8]"]


def test_a_retained_graph_across_a_sync_is_told_by_its_saved_activations():
    head = cost_scenario("x8c_retain_graph_sync")["headline"]
    assert (head["kind"], head["role"], head["location"]["line"]) == ("held_across_graphs", "activation", 26)
    assert "f32[1024,1024]" in head["shapes"] and "f32[256,1024]" in head["shapes"]


@pytest.mark.parametrize("name, kind, role", [
    ("xla_sync_after_backward", "held_across_graphs", "gradient"),    # an optimizer step alone reads them
    ("xla_fwd_bwd_split", "held_across_graphs", "activation"),
    ("x5c_grad_list_accum", "held_across_graphs", "gradient"),        # clones in a list: still listed, not added into
    ("x6c_gan_fake_held", "held_across_graphs", "activation"),
    ("xla_accum_opt_graph_control", None, None),
    ("x7c_ema_own_graph_control", None, None),
])
def test_look_alikes_keep_their_headlines(name, kind, role):
    head = cost_scenario(name)["headline"]
    if kind is None:
        assert head is None
    else:
        assert (head["kind"], head.get("role")) == (kind, role)


# -- a static function made again before each call ----------------------------------------------------------------

@pytest.mark.parametrize("values, name", [
    (("<function policy at 0x7f01>", "<function policy at 0x7f02>"), "policy"),
    (("<function train_step.<locals>.policy at 0x1>", "<function train_step.<locals>.policy at 0x2>",
      "<function train_step.<locals>.policy at 0x3>"), "train_step.<locals>.policy"),
    # every lambda is `<lambda>`: two may be two different functions switched on purpose (eleventh stop's read)
    (("<function <lambda> at 0x1>", "<function <lambda> at 0x2>"), None),
    (("<function step.<locals>.<lambda> at 0x1>", "<function step.<locals>.<lambda> at 0x2>",
      "<function step.<locals>.<lambda> at 0x3>"), None),
    (("<function nothing_saveable at 0x1>", "<function dots_saveable at 0x2>"), None),  # two choices
    (("<function policy at 0x1>",), None),                                             # one object
    (("<function policy at 0x1>", "'relu'"), None),
    (("<__main__.Cfg object at 0x1>", "<__main__.Cfg object at 0x2>"), None),         # static_identity's
])
def test_redefined_function_needs_one_name_at_several_addresses(values, name):
    assert redefined_function(values) == name


def _jax_rules(name: str) -> tuple[set[str], str]:
    folder = SCENARIOS / "jax" / name
    doc = cli_json("explain-recompile", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0, 1))
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}, doc["headline"]["fix"]


def test_a_remat_policy_defined_in_the_loop_is_told_to_be_defined_once():
    rules, fix = _jax_rules("x8c_jx_remat_policy_fresh")
    assert "static_redefined_function" in rules
    assert "once, before the loop" in fix and "`policy`" in fix and "fix its value" not in fix


@pytest.mark.parametrize("name, rule", [
    ("jax_remat_policy_switch", "static_choice"),    # two named policies: a real switch
    ("rev11_jx_static_obj", "static_identity"),      # an object of a class without __eq__
])
def test_static_look_alikes_keep_their_rows(name, rule):
    rules, _ = _jax_rules(name)
    assert rule in rules and "static_redefined_function" not in rules


# -- live: a torch.compile run before (or without) any bridge graph read from a stack ------------------------------

def _live_events(case_id: str) -> tuple[list, object]:
    from live_replay import replay_case, score_live

    return replay_case(case_id), score_live()


def test_the_step_graphs_of_a_function_dynamo_made_no_graph_of_follow_from_its_break_live():
    """d20_layerdrop_random: Dynamo gave the LayerDrop forward up (random.random() in a loop) and no bridge graph
    ever came; live told the first step as a linear layer's warm-up and the third as 'sync at the same points'
    around the break. Now the step graphs wait for Dynamo's log (looked for then) and follow from the break."""
    events, live = _live_events("dynamo/d20_layerdrop_random")
    head = live.first_word(events)
    assert (head.kind, head.told.kind, live._where(head.told)) == ("graph_break", "graph_break",
                                                                    ["d20_layerdrop_random.py", 25])
    assert not [e for e in events if live.shouted(e)]
    follows = [e for e in events if e.kind == "follows"]
    assert follows and all("graph break at d20_layerdrop_random.py:25" in e.told.fix for e in follows)


def test_a_dump_only_torch_compile_run_tells_its_step_graphs_as_the_report_does_live():
    """d21_reseed_control (e-nolog: the bridge is known by its ops alone): the step graphs were shouted live ('a
    value is kept on some steps only'); the report at exit says 'expected if it ran in the first steps'."""
    events, live = _live_events("dynamo/d21_reseed_control")
    assert not [e for e in events if live.shouted(e)]
    assert [e for e in events if e.kind == "follows" and "expected if it ran in the first steps" in e.told.fix]
