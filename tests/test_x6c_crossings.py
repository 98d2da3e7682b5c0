"""Crossings, cost and live, round 6 (docs/accuracy.md): the rules it changed, each on the real capture it was wrong
on, on small modules or rows of the one rule, and on the look-alikes that share its evidence.

* ``hlodiff/cost/copies.py`` (``ONE_HOT_WRITE_OPCODES``): a carried buffer written one position at a time by adding
  a one-hot product over all of it is rewritten whole every iteration (Flax's early decode cache);
* ``hlodiff/cost/roles.saved_activation``: a forward's tensors that a graph running a later phase made (a GAN's
  generator beside the discriminator's update) and that only autograd holds when a later graph's backward reads
  them are activations held across graphs."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.cost.roles import BACKWARD, FORWARD, OPTIMIZER, role_of, saved_activation

COST = FIXTURES / "scenarios" / "cost"


def _cost_head(name: str) -> dict | None:
    folder = COST / name
    argv = ([str(folder / "record")] if (folder / "record").is_dir()
            else [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")])
    return cli_json("cost", *argv, codes=(0,))["headline"]


def test_a_one_hot_cache_write_in_a_decode_loop_is_a_whole_rewrite_per_iteration():
    head = _cost_head("x6c_onehot_cache_write")
    assert (head["kind"], head["one_hot"], head["masked"], head["location"]["line"]) == (
        "loop_buffer_copy", True, False, 21)
    assert ".at[t].set" in head["fix"] and "ring buffer" not in head["fix"] and "donate" not in head["fix"]
    # 256 iterations x f32[256,128] (256 * 128 * 4 bytes): the multiply_add fusion read by eye in the while body
    assert head["bytes"] == 256 * 256 * 128 * 4


def _add_loop(update: str) -> str:
    """A loop carrying buf f32[4,2]: buf = add(buf, update), the update built from the counter i and a row."""
    return f"""HloModule jit_decode

body {{
  p = (s32[], f32[4,2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  row = f32[2] get-tuple-element(p), index=2
  io = s32[4] iota(), iota_dimension=0
  bi = s32[4] broadcast(i), dimensions={{}}
  eq = pred[4] compare(io, bi), direction=EQ
  oh = f32[4] convert(eq)
  c2 = s32[] constant(2)
  bc = s32[4] broadcast(c2), dimensions={{}}
  eqc = pred[4] compare(io, bc), direction=EQ
  ohc = f32[4] convert(eqc)
  v = f32[4] constant({{1, 2, 3, 4}})
  {update}
  new = f32[4,2] add(buf, prod)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], f32[2]) tuple(i1, new, row)
}}

cond {{
  p = (s32[], f32[4,2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  r = f32[2] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[4,2], f32[2]) tuple(z, b, r)
  w = (s32[], f32[4,2], f32[2]) while(t), condition=cond, body=body
  ROOT o = f32[4,2] get-tuple-element(w), index=1
}}
"""


_ROW = "br = f32[4,2] broadcast(row), dimensions={1}\n  "


@pytest.mark.parametrize("update, told", [
    # one_hot(i)[:, None] * row: one position written by rewriting the whole buffer
    (_ROW + "bo = f32[4,2] broadcast(oh), dimensions={0}\n  prod = f32[4,2] multiply(bo, br)", True),
    # a one-hot of a constant position (a fixed slot): no position that moves with the loop
    (_ROW + "bo = f32[4,2] broadcast(ohc), dimensions={0}\n  prod = f32[4,2] multiply(bo, br)", False),
    # outer(v, row) of two computed vectors (fast weights): every element changes, the work itself
    (_ROW + "bv = f32[4,2] broadcast(v), dimensions={0}\n  prod = f32[4,2] multiply(bv, br)", False),
])
def test_only_an_add_of_a_position_one_hot_product_is_a_one_hot_write(tmp_path, update, told):
    path = tmp_path / "run.hlo"
    path.write_text(_add_loop(update))
    doc = cli_json("cost", str(path), codes=(0,))
    found = [c for c in doc["graphs"][0]["loop_buffer_copies"] if c["one_hot"]]
    assert bool(found) is told
    if told:
        assert (found[0]["shape"], found[0]["bytes_per_iteration"], found[0]["tuple_index"]) == ("f32[4,2]", 32, 1)


@pytest.mark.parametrize("name", ["x6c_fast_weights_control", "jax_scan_stencil_control", "jax_while_dus_control",
                                  "x4c_fori_read_then_write_control"])
def test_look_alike_loops_stay_quiet(name):
    assert _cost_head(name) is None


def test_a_masked_row_write_keeps_its_own_words():
    head = _cost_head("jax_masked_row_update")
    assert (head["masked"], head["one_hot"]) == (True, False)


@pytest.mark.parametrize("made_in, read_in, own, held_by_name, saved", [
    (OPTIMIZER, OPTIMIZER, FORWARD, False, True),    # G's activations made beside D's update, read by G's backward
    (BACKWARD, BACKWARD, FORWARD, False, True),      # ... beside a backward
    (OPTIMIZER, OPTIMIZER, FORWARD, True, False),    # a forward value the program keeps by name (previous output)
    (OPTIMIZER, OPTIMIZER, BACKWARD, False, False),  # a gradient accumulated into: not an activation
    (OPTIMIZER, OPTIMIZER, OPTIMIZER, False, False), # optimizer state
    (FORWARD, BACKWARD, FORWARD, False, False),      # a forward graph's own: ROLE_RULES decide
    (OPTIMIZER, FORWARD, FORWARD, False, False),     # read by a forward alone: no backward reads it
])
def test_a_saved_activation_is_a_forward_tensor_only_autograd_holds(made_in, read_in, own, held_by_name, saved):
    assert saved_activation(made_in, read_in, own, held_by_name) is saved


def test_a_saved_activation_is_an_activation_unless_a_parameter_holds_it():
    assert role_of(OPTIMIZER, OPTIMIZER, saved=True) == "activation"
    assert role_of(OPTIMIZER, OPTIMIZER, is_parameter=True, saved=True) == "parameter"


def test_a_gans_generator_batch_held_across_the_updates_sync_is_a_finding():
    head = _cost_head("x6c_gan_fake_held")
    assert (head["kind"], head["role"], head["cut"], head["location"]["line"]) == (
        "held_across_graphs", "activation", "sync", 26)
    assert "one sync per step" in head["fix"] and "detach" not in head["fix"]


@pytest.mark.parametrize("name", ["x6c_gan_recompute_control", "xla_teacher_sync_control", "xla_one_sync_control",
                                  "x5c_skip_nonfinite_control", "xla_accum_opt_graph_control"])
def test_look_alike_crossings_stay_quiet(name):
    assert _cost_head(name) is None


@pytest.mark.parametrize("capture", ["x4c_prev_output_control", "review2_moco_queue", "x6c_preds_cat_epoch"])
def test_what_a_whole_steps_graph_hands_the_next_step_is_no_saved_activation(capture):
    """The previous step's output, a negatives queue grown by torch.cat, an epoch's predictions: forward tensors no
    name holds at the next sync (the variable was reassigned), read by the next run of the same sync's graph: carried
    from step to step, not held inside a step cut in two (the first version of the rule told all three)."""
    doc = cli_json("cost", str(FIXTURES / "scenarios" / "torch_xla" / capture / "record"), codes=(0,))
    assert doc["headline"] is None


# -- an eval step concatenating onto the argument it hands back (JAX) -------------------------------------------

from hlodiff.diff.matchers import _argument_name  # noqa: E402
from hlodiff.explain.buckets import verdict  # noqa: E402

SCENARIOS = FIXTURES / "scenarios"


@pytest.mark.parametrize("metadata, name", [
    ('{op_name="preds"}', "preds"),                                        # JAX's argument name
    ('{op_name="params[\'w\']"}', "params['w']"),                          # a pytree leaf
    ('{op_name="jit(f)/concatenate" source_file="f.py" source_line=3}', None),  # an op, not an argument
    ('{op_type="aten__cat" op_name="aten__cat"}', None),                   # torch_xla
    (None, None),
])
def test_a_parameter_pairs_by_its_jax_argument_name_only(metadata, name):
    assert _argument_name(metadata) == name


@pytest.mark.parametrize("concatenated, found", [(True, "preallocate"), (False, "expected")])
def test_sizes_new_at_every_compilation_are_growth_when_the_graph_concatenates(concatenated, found):
    # 0, 8, ..., 40, compilations only (JAX): all multiples of 8 read as buckets unless the graph grows them itself
    values = tuple((v, 1) for v in range(0, 48, 8))
    assert verdict(values, [v for v, _ in values], "compilations", concatenated=concatenated) == found


def test_an_eval_step_concatenating_onto_its_argument_grows_and_is_no_bucket():
    doc = cli_json("explain-recompile", str(SCENARIOS / "jax" / "x6c_jx_preds_concat_eval"), codes=(1,))
    head = doc["headline"]
    cause = next(r["causes"][0] for r in doc["recompilations"] if r["graph"] == head["graph"])
    assert (cause["kind"], cause["fix_rule"]) == ("shape", "shape_growing_concat_jax")
    assert "bucket" not in cause["fix"] and "preallocate" in cause["fix"]
    # each compilation told against the first (its empty i32[0]): the sizes are that start and each one after it
    assert "(0, 8, 16, 24, 32, 40)" in cause["fix"]


@pytest.mark.parametrize("path, codes", [("jax/jax_dp_buckets_control", (0,)), ("jax/jax_bucket_pad", (0, 1))])
def test_bucketed_jax_runs_keep_their_verdict(path, codes):
    doc = cli_json("explain-recompile", str(SCENARIOS / path), codes=codes)
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"]]
    assert not any("grows by concatenation" in f for f in fixes)
