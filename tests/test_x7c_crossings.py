"""Crossings, cost and live, round 7 (docs/accuracy.md): the rules it added, each on the real capture it was wrong
on, on small modules or rows of the one rule, and on the look-alikes that share its evidence.

* ``hlodiff/cost/stacked_outputs.py``: a loop's stacked per-iteration output (scan ys) that is only reduced over
  the iterations after the loop holds every iteration's value for a sum (micro-batch gradients averaged after
  ``lax.scan``);
* ``ops_added_every_step`` (``hlodiff/diff/fix_rules.py``, fact ``ops_each_step``): a graph that grows by the same
  ops at every step with no input added runs the same code once more each step (a hook registered in the loop), not
  a carried autograd history;
* ``cache_key_pullback`` (fact ``pullback``, ``hlodiff/explain/jax_pytree_reasons.PULLBACK_NODES``): jax.vjp's pullback
  passed into jit is a new pytree structure at every call."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.cost.loops import contexts
from hlodiff.cost.source import SourceLocator
from hlodiff.cost.stacked_outputs import MIN_STACKED_BYTES, find_reduced_stacks
from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.model import Cause
from hlodiff.dumps.jax_cache_miss import JaxReason
from hlodiff.explain.jax_pytree_reasons import is_pullback
from hlodiff.hlo.parser import parse_module

SCENARIOS = FIXTURES / "scenarios"
COST = SCENARIOS / "cost"


def _cost_head(name: str) -> dict | None:
    folder = COST / name
    argv = ([str(folder / "record")] if (folder / "record").is_dir()
            else [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")])
    return cli_json("cost", *argv, codes=(0,))["headline"]


# -- a stacked loop output reduced after the loop ----------------------------------------------------------------

def test_micro_batch_gradients_stacked_as_scan_outputs_and_averaged_are_told_with_a_running_sum():
    head = _cost_head("x7c_scan_grads_stacked")
    assert (head["kind"], head["reduced"], head["emitted"], head["location"]["line"]) == (
        "loop_buffer_copy", True, False, 27)
    # the whole stack, f32[8,256,256] (8 x 256 x 256 x 4 bytes): held while the loop runs, not per iteration
    assert head["shapes"] == ["f32[8,256,256]"] and head["bytes"] == 8 * 256 * 256 * 4
    assert "running sum" in head["fix"] and "donate" not in head["fix"] and ".at[" not in head["fix"]


def _stack_loop(after: str, k: int = 4, n: int = 256, fused: bool = False) -> str:
    """A while loop carrying a stacked f32[k,n,n] output written one slice f32[1,n,n] per iteration (a value made in
    the iteration), then ``after`` reads the loop's stack ``st`` in the entry (its last line is the ROOT)."""
    write = (f"  ys1 = f32[{k},{n},{n}] fusion(ys, v, i), kind=kLoop, calls=fdus\n" if fused else
             f"  ys1 = f32[{k},{n},{n}] dynamic-update-slice(ys, v, i, z, z)\n")
    fdus = (f"fdus {{\n  a = f32[{k},{n},{n}] parameter(0)\n  b = f32[1,{n},{n}] parameter(1)\n  j = s32[] parameter(2)\n"
            f"  c = s32[] constant(0)\n  ROOT d = f32[{k},{n},{n}] dynamic-update-slice(a, b, j, c, c)\n}}\n\n"
            if fused else "")
    return f"""HloModule jit_step

add {{
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}}

max {{
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}}

fred {{
  q = f32[{k},{n},{n}] parameter(0)
  c0 = f32[] constant(0)
  ROOT r = f32[{n},{n}] reduce(q, c0), dimensions={{0}}, to_apply=add
}}

{fdus}body {{
  p = (s32[], f32[{k},{n},{n}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ys = f32[{k},{n},{n}] get-tuple-element(p), index=1
  z = s32[] constant(0)
  f = f32[] convert(i)
  v = f32[1,{n},{n}] broadcast(f), dimensions={{}}
{write}  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[{k},{n},{n}]) tuple(i1, ys1)
}}

cond {{
  p = (s32[], f32[{k},{n},{n}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  m = s32[] constant({k})
  ROOT lt = pred[] compare(i, m), direction=LT
}}

ENTRY main {{
  s = f32[{k},{n},{n}] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[{k},{n},{n}]) tuple(z, s)
  w = (s32[], f32[{k},{n},{n}]) while(t), condition=cond, body=body
  st = f32[{k},{n},{n}] get-tuple-element(w), index=1
  c0 = f32[] constant(0)
{after}
}}
"""


def _found(text: str) -> list:
    module = parse_module(text)
    ctxs, _ = contexts(module)
    return find_reduced_stacks(module, ctxs, SourceLocator(module))


@pytest.mark.parametrize("after, found", [
    ("  ROOT r = f32[256,256] reduce(st, c0), dimensions={0}, to_apply=add", True),          # summed over iterations
    ("  ROOT r = f32[256,256] fusion(st), kind=kLoop, calls=fred", True),                    # the sum in a fusion
    ("  ROOT r = f32[4,256] reduce(st, c0), dimensions={1}, to_apply=add", False),           # per iteration: kept
    ("  ROOT r = f32[256,256] reduce(st, c0), dimensions={0}, to_apply=max", False),         # a max: no running sum
    ("  ROOT r = f32[4,256,256] negate(st)", False),                                         # read whole (ys' purpose)
    ("  r = f32[256,256] reduce(st, c0), dimensions={0}, to_apply=add\n"
     "  ROOT u = (f32[256,256], f32[4,256,256]) tuple(r, st)", False),                       # also returned whole
])
def test_only_a_stack_every_use_of_which_sums_the_iterations_is_told(after, found):
    assert bool(_found(_stack_loop(after))) is found


def test_a_stack_written_by_a_fusion_and_summed_is_told():
    after = "  ROOT r = f32[256,256] reduce(st, c0), dimensions={0}, to_apply=add"
    assert len(_found(_stack_loop(after, fused=True))) == 1


def test_a_small_stack_a_metric_per_iteration_is_not_told():
    after = "  ROOT r = f32[8,8] reduce(st, c0), dimensions={0}, to_apply=add"
    assert 4 * 8 * 8 * 4 < MIN_STACKED_BYTES and not _found(_stack_loop(after, n=8))


@pytest.mark.parametrize("name", ["x7c_while_table_carry_control", "jax_layer_stack_ys_control",
                                  "x4c_scan_emits_buffer", "jax_while_dus_control"])
def test_loops_that_keep_or_read_their_stack_are_not_told_reduced(name):
    head = _cost_head(name)
    assert head is None or not head["reduced"]


# -- the same ops added at every step ----------------------------------------------------------------------------

def test_a_hook_registered_every_step_is_told_as_code_run_once_more_not_a_history():
    doc = cli_json("explain-recompile", str(SCENARIOS / "torch_xla" / "x7c_tx_hook_in_loop" / "record"), codes=(1,))
    cause = next(c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "ops")
    assert cause["fix_rule"] == "ops_added_every_step"
    assert "handle.remove()" in cause["fix"] and "detach" not in cause["fix"]


def test_the_hook_removed_every_step_stays_quiet():
    doc = cli_json("explain-recompile", str(SCENARIOS / "torch_xla" / "x7c_tx_hook_removed_control" / "record"),
                   codes=(0,))
    assert doc["headline"] is None


@pytest.mark.parametrize("path", ["scenarios/torch_xla/center_no_detach", "torch_xla/look_rnn_carry"])
def test_a_carried_autograd_history_keeps_its_detach_fix(path):
    doc = cli_json("explain-recompile", str(FIXTURES / path), codes=(1,))
    rules = {c.get("fix_rule") for r in doc["recompilations"] for c in r["causes"]}
    assert "history_carried" in rules and "ops_added_every_step" not in rules


@pytest.mark.parametrize("facts, rule", [
    ({"graph_grows": (183, 199, 214), "ops_each_step": "16, 15"}, "ops_added_every_step"),
    ({"graph_grows": (183, 199, 214)}, "history_carried"),
])
def test_ops_added_every_step_needs_ops_only_growth(facts, rule):
    cause = Cause("ops", "16 instructions added")
    assert decide(cause, FixContext(producer="torch_xla", **facts)).rule.name == rule


# -- jax.vjp's pullback passed into jit --------------------------------------------------------------------------

def test_a_pullback_passed_into_jit_is_told_to_compute_forward_and_backward_in_one_jit():
    doc = cli_json("explain-recompile", str(SCENARIOS / "jax" / "x7c_jx_vjp_fn_arg"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "cache_key" and "value_and_grad" in head["fix"]
    assert "__eq__" not in head["fix"] and "same structure" not in head["fix"]


@pytest.mark.parametrize("text, found", [
    ("* at input path [0][0], now <class 'jax._src.api.VJP'> with pytree metadata (functools.partial("
     "<function _vjp3_callable at 0x7f>, ...", True),
    ("* at input path [0], now <class 'jax._src.tree_util.Partial'> with pytree metadata (functools.partial("
     "<function _vjp_pullback_wrapper at 0x7f>, ...", True),
    ("* at input path [0], now <class '__main__.Batch'> with pytree metadata <__main__.Info object at 0x7f>", False),
])
def test_a_pullback_is_read_from_jaxs_pytree_reason(text, found):
    assert is_pullback(JaxReason("pytree", None, None, None, text)) is found


# -- autograd anomaly mode's NaN checks, followed live -------------------------------------------------------------

def test_a_followed_log_weaves_the_anomaly_checks_as_the_whole_log_read_does():
    from hlodiff.dumps.anomaly_checks import CHECK_KEY
    from hlodiff.dumps.executions import scan_executions
    from hlodiff.dumps.follow import follower_for

    folder = str(SCENARIOS / "torch_xla" / "r17_tx_detect_anomaly")
    whole = [(r.index, r.graph_hash, r.module_number) for r in scan_executions(folder + "/dump", [])]
    follower = follower_for(folder, wait=False)
    followed = follower.poll() + follower.close()
    assert [(r.index, r.graph_hash, r.module_number) for r in followed] == whole
    # the checks are there: more than one record per step (the run's 5 steps), keyed as checks
    assert sum((r.graph_hash or "").startswith(CHECK_KEY) for r in followed) > len(followed) // 2
