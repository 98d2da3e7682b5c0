"""Crossings, cost and live, round 5 (docs/accuracy.md): the rules it changed, each on the real capture it was wrong
on, on small modules of the one rule, and on the look-alikes that share its evidence.

* ``history_tensors_joined``: a list of tensors (a gradient history) never emptied, stacked each step: the tensor
  input it adds heads, with no "detach" (the list is detached);
* ``hlodiff/cost/headline._accumulating``: a backward graph handing the next its slice of the batch is no gradient
  accumulation, so gradients kept apart per micro-batch and averaged by the optimizer are held across graphs;
* ``hlodiff/cost/donation.py`` (``LOOP_OPCODES``): a parameter carried through a loop that updates it elementwise
  comes out as its new value (a donated step called in an undonated outer jit);
* ``hlodiff/cost/copies.py`` (``SNAPSHOT_OPCODES``): a carried snapshot replaced whole by another carried buffer on
  one scalar decision is a whole copy per iteration."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from explain_helpers import explain_capture as _explained, fix_rules as _rules
from helpers import cli_json

COST = FIXTURES / "scenarios" / "cost"


def _head_rule(doc: dict) -> str | None:
    head = doc["headline"]
    return next(r["causes"][0]["fix_rule"] for r in doc["recompilations"] if r["graph"] == head["graph"])


def _cost_head(name: str) -> dict | None:
    folder = COST / name
    argv = ([str(folder / "record")] if (folder / "record").is_dir()
            else [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")])
    return cli_json("cost", *argv, codes=(0,))["headline"]


# -- history_tensors_joined ------------------------------------------------------------------------------------------

def test_a_gradient_history_never_reset_heads_with_a_bounded_window_not_detach():
    doc = _explained("scenarios/torch_xla/x5c_grad_list_unreset", codes=(1,))
    assert _head_rule(doc) == "history_tensors_joined"
    fix = doc["headline"]["fix"]
    assert "maxlen" in fix and "f32[64,16]" in fix and "detach" not in fix


@pytest.mark.parametrize("path, rule", [
    ("scenarios/torch_xla/center_no_detach", "history_carried"),     # a carried state: no join of one more item
    ("torch_xla/look_rnn_carry", "history_carried"),
    ("scenarios/torch_xla/loss_history", "history_list_joined"),     # a stacked list of scalars keeps its rows
    ("scenarios/torch_xla/x4c_loss_list_sum", "history_scalars_summed"),  # sum() of scalars: no concatenate
])
def test_look_alikes_of_a_joined_tensor_history_keep_their_rows(path, rule):
    rules = _rules(_explained(path, codes=(1,)))
    assert rule in rules and "history_tensors_joined" not in rules


# -- gradients kept apart per micro-batch ----------------------------------------------------------------------------

def test_gradients_kept_per_micro_batch_and_averaged_by_the_optimizer_are_held_across_graphs():
    head = _cost_head("x5c_grad_list_accum")
    assert (head["kind"], head["role"], head["cut"], head["location"]["line"]) == (
        "held_across_graphs", "gradient", "sync", 24)
    # four micro-batches, each backward's gradients kept apart: the fix accumulates them in p.grad
    assert head["gradient_sources"] == 4 and "into p.grad" in head["fix"] and "1/4" in head["fix"]


def test_gradients_of_one_backward_keep_the_one_sync_fix():
    """xla_sync_after_backward: one backward graph hands its gradients to the optimizer's: nothing kept apart."""
    head = _cost_head("xla_sync_after_backward")
    assert (head["role"], head["gradient_sources"]) == ("gradient", 1)
    assert head["fix"].startswith("one sync per step")


@pytest.mark.parametrize("capture", [COST / "xla_accum_opt_graph_control" / "record",
                                     FIXTURES / "torch_xla" / "accum_sync_micro"])
def test_gradients_accumulated_from_backward_to_backward_stay_no_finding(capture):
    assert cli_json("cost", str(capture), codes=(0,))["headline"] is None


# -- a parameter carried through a loop of train steps ---------------------------------------------------------------

def test_a_donated_step_inside_an_undonated_jit_is_not_donated_at_the_outer_call():
    head = _cost_head("x5c_nested_jit_donate")
    assert (head["kind"], head["module"], head["arguments"], head["location"]["line"]) == (
        "not_donated", "jit_train_k", ["p"], 34)
    assert "donate" in head["fix"]


def test_an_iterate_recomputed_in_the_loop_is_no_update_of_its_input():
    """jax_while_dus_control returns x = tanh(x @ a), carried from its undonated x: no elementwise update of x."""
    assert _cost_head("jax_while_dus_control") is None


def _train_loop(update: str) -> str:
    """An undonated f32[4,2] carried through a while loop whose body computes its next value by ``update``."""
    return f"""HloModule jit_train_k

body {{
  p = (s32[], f32[4,2], f32[2,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  w = f32[4,2] get-tuple-element(p), index=1
  a = f32[2,2] get-tuple-element(p), index=2
  d = f32[4,2] dot(w, a), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  new = f32[4,2] {update}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], f32[2,2]) tuple(i1, new, a)
}}

cond {{
  p = (s32[], f32[4,2], f32[2,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  w0 = f32[4,2] parameter(0)
  a0 = f32[2,2] parameter(1)
  z = s32[] constant(0)
  c = f32[4,2] copy(w0)
  t = (s32[], f32[4,2], f32[2,2]) tuple(z, c, a0)
  loop = (s32[], f32[4,2], f32[2,2]) while(t), condition=cond, body=body
  ROOT r = f32[4,2] get-tuple-element(loop), index=1
}}
"""


@pytest.mark.parametrize("update, told", [("subtract(w, d)", True),   # w - g: the carried weight updated
                                          ("tanh(d)", False)])         # recomputed from a matmul: an iterate
def test_a_loop_result_is_its_inputs_new_value_only_when_the_body_updates_it(tmp_path, update, told):
    path = tmp_path / "run.hlo"
    path.write_text(_train_loop(update))
    doc = cli_json("cost", str(path), codes=(0,))
    undonated = doc["graphs"][0]["undonated"]
    assert bool(undonated) is told
    if told:
        assert (undonated[0]["parameter"], undonated[0]["shape"]) == (0, "f32[4,2]")


# -- a snapshot of the loop's buffer -------------------------------------------------------------------------------

def test_a_best_so_far_snapshot_of_the_loop_buffer_is_a_whole_copy_per_iteration():
    head = _cost_head("x5c_best_snapshot_copy")
    assert (head["kind"], head["snapshot"], head["masked"], head["location"]["line"]) == (
        "loop_buffer_copy", True, False, 22)
    assert "index" in head["fix"] and "after the loop" in head["fix"] and "ring buffer" not in head["fix"]
    # 128 iterations x f32[128,256] (128 * 256 * 4 bytes), read by eye in the optimized module's while body
    assert head["bytes"] == 128 * 128 * 256 * 4


def _select_loop(other: str, pred: str) -> str:
    """A loop carrying buf (one row written in place) and snap: snap = select(pred, other, snap)."""
    return f"""HloModule jit_decode

body {{
  p = (s32[], f32[4,2], f32[4,2], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  snap = f32[4,2] get-tuple-element(p), index=2
  s = f32[] get-tuple-element(p), index=3
  z = s32[] constant(0)
  row = f32[1,2] constant({{{{1, 2}}}})
  new = f32[4,2] dynamic-update-slice(buf, row, i, z)
  h = f32[4,2] tanh(buf)
  zero = f32[] constant(0)
  gt = pred[] compare(s, zero), direction=GT
  m = pred[4,2] {pred}
  snap1 = f32[4,2] select(m, {other}, snap)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], f32[4,2], f32[]) tuple(i1, new, snap1, s)
}}

cond {{
  p = (s32[], f32[4,2], f32[4,2], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  sn = f32[4,2] parameter(1)
  sc = f32[] parameter(2)
  z = s32[] constant(0)
  t = (s32[], f32[4,2], f32[4,2], f32[]) tuple(z, b, sn, sc)
  w = (s32[], f32[4,2], f32[4,2], f32[]) while(t), condition=cond, body=body
  ROOT r = f32[4,2] get-tuple-element(w), index=2
}}
"""


@pytest.mark.parametrize("other, pred, snapshot", [
    ("new", "broadcast(gt), dimensions={}", True),          # snap = where(score > best, buf, snap)
    ("h", "broadcast(gt), dimensions={}", False),           # a value computed in the iteration: the work itself
    ("new", "compare(new, h), direction=GT", False),         # a mask per element (an RNN's where(mask, h_new, h))
])
def test_only_a_carried_buffer_taken_whole_on_a_scalar_decision_is_a_snapshot(tmp_path, other, pred, snapshot):
    path = tmp_path / "run.hlo"
    path.write_text(_select_loop(other, pred))
    doc = cli_json("cost", str(path), codes=(0,))
    found = [c for c in doc["graphs"][0]["loop_buffer_copies"] if c["snapshot"]]
    assert bool(found) is snapshot
    if snapshot:
        assert (found[0]["shape"], found[0]["bytes_per_iteration"], found[0]["tuple_index"]) == ("f32[4,2]", 32, 2)


@pytest.mark.parametrize("name", ["jax_scan_stencil_control", "jax_while_dus_control", "x5c_skip_nonfinite_control"])
def test_look_alike_controls_stay_quiet(name):
    assert _cost_head(name) is None


def test_a_masked_row_write_keeps_its_own_words():
    head = _cost_head("jax_masked_row_update")
    assert head["masked"] and not head["snapshot"]
