"""Crossings round 11 (blind): a loop body that reads its carried buffer's old value beside writing it in place
(hlodiff/cost/stale_reads.py): found on small modules of the one rule and its look-alikes (a read the write needs,
autodiff's own backward loop), and on the real captures, where the look-alikes keep their words."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json, cost_of_text

COST = FIXTURES / "scenarios" / "cost"
BWD = ', metadata={op_name="jit(f)/transpose(jvp())/while/body/dot_general"}'


def _loop(read: str = "stale", marker: str = "") -> str:
    """A donated while loop carrying f32[4,2] (copied, then written one row in place) and a query f32[2]. ``stale``:
    an attention reads the old buffer and feeds only the query, not the write; ``feeds``: what reads the old buffer
    computes the row written."""
    if read == "stale":
        rows = "  row = f32[1,2] constant({{1, 2}})\n"
        q_next = "  q1 = f32[2] dot(att, buf), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
    else:
        rows = ("  r2 = f32[2] dot(att, buf), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                "  row = f32[1,2] reshape(r2)\n")
        q_next = "  q1 = f32[2] negate(q)\n"
    return f"""HloModule jit_run, input_output_alias={{ {{1}}: (1, {{}}, may-alias) }}

body {{
  p = (s32[], f32[4,2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  q = f32[2] get-tuple-element(p), index=2
  c = f32[4,2] copy(buf)
  z = s32[] constant(0)
  att = f32[4] dot(buf, q), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}{marker}
{rows}  new = f32[4,2] dynamic-update-slice(c, row, i, z){marker}
{q_next}  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], f32[2]) tuple(i1, new, q1)
}}

cond {{
  p = (s32[], f32[4,2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  q0 = f32[2] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[4,2], f32[2]) tuple(z, b, q0)
  w = (s32[], f32[4,2], f32[2]) while(t), condition=cond, body=body
  ROOT r = f32[4,2] get-tuple-element(w), index=1
}}
"""




def test_a_read_of_the_old_buffer_the_write_does_not_need_is_why_it_is_copied(tmp_path):
    doc = cost_of_text(tmp_path, _loop("stale"))
    (lbc,) = doc["graphs"][0]["loop_buffer_copies"]
    assert lbc["stale_read"] and not lbc["emitted"] and not lbc["shift"]
    head = doc["headline"]
    assert head["kind"] == "loop_buffer_copy" and head["stale_read"]
    assert "read the updated buffer" in head["fix"] and "scan output" not in head["fix"]
    assert "old value" in head["summary"]


def test_a_read_that_computes_the_row_written_is_no_stale_read(tmp_path):
    doc = cost_of_text(tmp_path, _loop("feeds"))
    (lbc,) = doc["graphs"][0]["loop_buffer_copies"]
    assert not lbc["stale_read"]
    assert "read the updated buffer" not in doc["headline"]["fix"]


def test_autodiffs_own_read_of_the_old_buffer_is_no_stale_read(tmp_path):
    # the backward of an in-place write reads the cotangent's slice and zeroes it: no line of the user's reads it
    doc = cost_of_text(tmp_path, _loop("stale", BWD))
    (lbc,) = doc["graphs"][0]["loop_buffer_copies"]
    assert not lbc["stale_read"]


def _capture(name: str) -> dict:
    folder = COST / name
    if not (folder / "dump").is_dir():
        pytest.skip(f"{name} is not captured")
    return cli_json("cost", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0,))


def test_the_decode_attending_over_the_cache_before_its_write_is_told_to_read_the_updated_one():
    head = _capture("x11c_fori_attend_old_cache")["headline"]
    assert head["kind"] == "loop_buffer_copy" and head["stale_read"]
    assert head["location"]["line"] == 21 and "read the updated buffer" in head["fix"]


@pytest.mark.parametrize("name, words", [
    ("jax_layer_stack_carry", "scan output (ys)"),          # the stack's backward loop: autodiff's read
    ("x4c_scan_emits_buffer", "only the new row"),
    ("jax_masked_row_update", "buf.at[t].set(row)"),
    ("jax_rolling_window_concat", "ring buffer"),
    ("x5c_best_snapshot_copy", "best step's index"),
    ("x6c_onehot_cache_write", "one_hot"),
])
def test_the_other_loop_copies_keep_their_words(name, words):
    head = _capture(name)["headline"]
    assert head["kind"] == "loop_buffer_copy" and not head["stale_read"] and words in head["fix"]


@pytest.mark.parametrize("name", ["x4c_fori_read_then_write_control", "jax_while_dus_control",
                                  "x8c_scan_table_donated_control"])
def test_the_in_place_controls_stay_quiet(name):
    assert _capture(name)["headline"] is None


def _live(case_id: str) -> list[str]:
    from live_replay import printed, replay_case

    engine, name = case_id.split("/")
    if not (FIXTURES / "scenarios" / engine / name).is_dir():
        pytest.skip(f"{case_id} is not captured")
    return printed(replay_case(case_id))


def test_a_read_every_4th_step_whose_step_graph_is_cached_is_told_live():
    # the read's graph is the only new one (the rest of the step is the usual graph, a cache hit): held until that
    # hit, then explained beside it as at exit, not taken for the first graph of a family of its own
    said = _live("torch_xla/x11c_tx_gradnorm_every4_mid")
    first = next(x for x in said if "recompiled" in x)
    assert "step 3" in first and "partial at x11c_tx_gradnorm_every4_mid.py:22" in first, said
    assert any("add_step_closure" in x for x in said), said


def test_a_host_kv_cache_of_one_size_stays_quiet_live():
    said = _live("torch_xla/x11c_tx_kv_host_fixed_control")
    assert not any("recompiled" in x for x in said), said


def test_a_run_that_reads_early_every_step_keeps_one_story_live():
    # the look-alike: best_loss_min's every step is cut (min() on a device tensor); its later cuts are compared with
    # each other as before, not told as "an input arrives with another dtype" (x.double()) of their own
    said = _live("torch_xla/best_loss_min")
    assert not any("dtype at" in x and "with it" not in x for x in said), said
    assert not any("x.double()" in x for x in said), said
