"""New-user review 15, F1, F2, F8 (the reviewer's programs: fixtures/scenarios/torch_xla/rev15_*, dynamo/rev15_*).

F1: a loss scale of 1.0, then 2.0: torch_xla bakes 1.0 as a constant and gives 2.0 the input parameter that already
held another 2.0, so the graphs differed by "3 constants removed" and hlodiff told a Python `if` fixed by
torch.where. F2: accumulation over 2 micro-batches with a sync after each was told as code traced on some steps
(the 0/1-mask fix, at `loss.backward()`), where `hlodiff cost` said "one sync per step, after opt.step()". F8: the
XLA graph a Dynamo recompilation compiled was placed at the first call's line (:10), Dynamo's section at :12.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from live_replay import printed, replay

from hlodiff.diff import diff_modules
from hlodiff.hlo.parser import parse_module

TX = FIXTURES / "scenarios" / "torch_xla"
DYN = FIXTURES / "scenarios" / "dynamo"
BRANCH_WORDS = ("torch.where", "0/1 mask", "decides per step", "a python `if`")
SHARED = "one sync per step, after opt.step()"
"""`hlodiff cost`'s words for the sync that cuts the step, which explain-recompile's accumulation row now says too."""


def _headline(engine_dir, capture: str) -> dict:
    return cli_json("explain-recompile", engine_dir / capture, "--source-map", f"/home/user/project={engine_dir}",
                    codes=(0, 1))


def _causes(left: str, right: str):
    return diff_modules(parse_module(left), parse_module(right)).causes


# -- F1: a baked special scalar read from an input both graphs have -------------------------------------------------

_SCALE = """HloModule m

ENTRY main {{
  p0 = f32[4] parameter(0)
  p1 = f32[] parameter(1)
  {scale}
  b = f32[4] broadcast({operand}), dimensions={{}}
  m = f32[4] multiply(p0, b)
  b2 = f32[4] broadcast(p1), dimensions={{}}
  ROOT a = f32[4] add(m, b2)
}}
"""
BAKED = _SCALE.format(scale="c = f32[] constant(1)", operand="c")
FROM_INPUT = _SCALE.format(scale="", operand="p1")


def test_a_scalar_baked_on_one_side_and_read_from_a_shared_input_on_the_other_is_one_constant_cause():
    (cause,) = _causes(BAKED, FROM_INPUT)
    assert cause.kind == "constant" and cause.baked_value == "1"
    assert "baked into the left graph as a constant" in cause.summary and "input parameter" in cause.summary


def test_the_reverse_a_shared_input_that_became_a_baked_scalar_is_one_constant_cause():
    (cause,) = _causes(FROM_INPUT, BAKED)
    assert cause.kind == "constant" and "became the constant 1" in cause.summary


def test_a_real_branch_that_adds_the_multiply_keeps_its_ops_story():
    # look-alike: the right graph multiplies by the input where the left graph had no multiply at all
    plain = """HloModule m

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[] parameter(1)
  b2 = f32[4] broadcast(p1), dimensions={}
  ROOT a = f32[4] add(p0, b2)
}
"""
    kinds = {c.kind for c in _causes(plain, FROM_INPUT)}
    assert "ops" in kinds and "constant" not in kinds


def test_a_whole_array_constant_read_from_an_input_instead_stays_ops():
    # a constant of 4 values is no Python scalar torch_xla baked: no constant story
    left = """HloModule m

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[4] constant({1, 1, 1, 1})
  m = f32[4] multiply(p0, c)
  ROOT a = f32[4] add(m, p1)
}
"""
    right = left.replace("  c = f32[4] constant({1, 1, 1, 1})\n", "").replace("multiply(p0, c)", "multiply(p0, p1)")
    assert "constant" not in {c.kind for c in _causes(left, right)}


def test_the_loss_scale_is_told_as_a_baked_special_scalar_not_a_python_if():
    doc = _headline(TX, "rev15_tx_lossscale/record")
    head = doc["headline"]
    assert head["kind"] == "constant" and head["location"]["line"] == 13
    assert "0 or 1" in head["fix"] and "device data" in head["fix"]
    assert not any(w in head["fix"].lower() for w in BRANCH_WORDS), head["fix"]


def test_a_code_path_that_changed_keeps_its_story_though_an_operand_moved_between_constant_and_input():
    # look-alike: tasks visited round-robin; one task's graph also reads a baked 1 where another read an input, among
    # heads, inputs and sizes of its own: the rotation is the story, no baked scalar
    head = _headline(TX, "review2_multitask_rr/record")["headline"]
    assert head["kind"] == "inputs" and head["fix"].startswith("expected by design"), head


@pytest.mark.parametrize("capture, kind", [("warmup_from_zero", "constant"), ("grl_lambda_zero/graphs.hlo.0", "constant"),
                                           ("wd_from_zero", "ops")])
def test_special_scalar_look_alikes_keep_their_story(capture, kind):
    # an lr warm-up from 0 and a GRL lambda of 0 were constants already; weight decay of 0 leaves its ops out of the
    # graph (torch.optim skips them): ops added, a real change of what is traced, stays ops
    head = _headline(TX, capture)["headline"]
    assert head["kind"] == kind, head


# -- F2: gradient accumulation with a sync after every micro-batch --------------------------------------------------


@pytest.mark.parametrize("capture, location", [("rev15_tx_grad_accum/record", 13), ("rev15_tx_grad_accum_byhand", 13)])
def test_accumulation_over_two_micro_batches_says_what_cost_says(capture, location):
    head = _headline(TX, capture)["headline"]
    assert head["fix"].startswith("expected: gradient accumulation"), head["fix"]
    assert SHARED in head["fix"]
    assert not any(w in head["fix"].lower() for w in BRANCH_WORDS)
    assert head["location"]["line"] == location  # the `if` that steps the optimizer, not loss.backward() at :12


def test_cost_on_the_same_run_gives_the_same_advice():
    doc = cli_json("cost", TX / "rev15_tx_grad_accum" / "record", codes=(0, 1))
    assert doc["headline"]["kind"] == "held_across_graphs" and SHARED in doc["headline"]["fix"]


@pytest.mark.parametrize("name", ["gan_alternating_control", "if_loss_spike", "optstep_mix_control"])
def test_two_graphs_that_both_run_the_optimizer_are_no_accumulation(name):
    # look-alikes of period 2: an optimizer in both graphs (a GAN's two steps, a branch on the loss, two calls)
    doc = _headline(TX, name)
    for r in doc["recompilations"]:
        assert all(c.get("fix_rule") != "accumulation_cycle" for c in r["causes"]), name


# -- F8: one line for one Dynamo recompilation ----------------------------------------------------------------------


def test_the_xla_graph_of_a_dynamo_recompilation_is_placed_at_the_call_dynamo_names():
    doc = _headline(DYN, "rev15_tc_eval_batch/record")
    assert doc["headline"]["location"]["line"] == 12
    (r,) = doc["recompilations"]
    lines_of = [loc["line"] for loc in r["causes"][0]["locations"]]
    assert lines_of == [12], lines_of  # not the first call's :10, whose stack torch_xla kept on the weights


def test_the_live_line_of_the_bridge_s_graph_names_the_same_call():
    said = printed(replay(DYN / "rev15_tc_eval_batch", "c"))
    bridge = [x for x in said if "the Dynamo bridge compiled again" in x]
    assert bridge and all("rev15_tc_eval_batch.py:12" in x for x in bridge), bridge
    assert not any("rev15_tc_eval_batch.py:10" in x for x in said), said


def test_an_xla_change_inside_the_compiled_function_keeps_its_own_line():
    # look-alike: a mode guard whose XLA graph changed in ops (dropout gone), not in an input: the ops are the
    # compiled function's, not moved to the call :14 that Dynamo names
    doc = _headline(DYN, "rev15_tc_train_eval/record")
    assert doc["headline"]["location"]["line"] == 14
    ops = [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "ops"]
    assert ops and all(c["locations"] and c["locations"][0]["line"] != 14 for c in ops)
