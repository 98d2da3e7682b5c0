"""Crossings round 12 (blind): a loop body that hands its carried buffer's old value on whole in a second element of
the carry beside writing it in place (hlodiff/cost/stale_reads.py, ``kept_in_carry``): found on small modules of the
one rule and its look-alikes (a slot holding only a row of the old buffer, autodiff's own write), and on the real
captures, where the other loop copies keep their words and the in-place controls stay quiet."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json, cost_of_text

COST = FIXTURES / "scenarios" / "cost"
BWD = ', metadata={op_name="jit(f)/transpose(jvp())/while/body/dynamic_update_slice"}'


def _loop(kept: str = "whole", marker: str = "") -> str:
    """A donated while loop carrying f32[4,2] (copied, then written one row in place) and a second f32[4,2] slot.
    ``whole``: the second slot gets the buffer from before the write; ``row``: it gets a copy of the old buffer's
    first row only, broadcast (a value computed from it, not the buffer); ``fresh``: it gets the written buffer."""
    second = {"whole": "buf", "row": "wide", "fresh": "new"}[kept]
    reads = ("  first = f32[1,2] slice(buf), slice={[0:1], [0:2]}\n"
             "  wide = f32[4,2] broadcast(first), dimensions={0,1}\n") if kept == "row" else ""
    return f"""HloModule jit_run, input_output_alias={{ {{1}}: (1, {{}}, may-alias) }}

body {{
  p = (s32[], f32[4,2], f32[4,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  c = f32[4,2] copy(buf)
  z = s32[] constant(0)
{reads}  row = f32[1,2] constant({{{{1, 2}}}})
  new = f32[4,2] dynamic-update-slice(c, row, i, z){marker}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], f32[4,2]) tuple(i1, new, {second})
}}

cond {{
  p = (s32[], f32[4,2], f32[4,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4,2], f32[4,2]) tuple(z, b, b)
  w = (s32[], f32[4,2], f32[4,2]) while(t), condition=cond, body=body
  ROOT r = f32[4,2] get-tuple-element(w), index=1
}}
"""




def test_the_old_buffer_carried_beside_its_write_is_why_it_is_copied(tmp_path):
    doc = cost_of_text(tmp_path, _loop("whole"))
    lbc = doc["graphs"][0]["loop_buffer_copies"][0]
    assert lbc["kept_old"] and not lbc["stale_read"] and not lbc["emitted"] and not lbc["shift"]
    head = doc["headline"]
    assert head["kind"] == "loop_buffer_copy" and head["kept_old"]
    assert "carry only what the later use needs" in head["fix"] and "scan output" not in head["fix"]
    assert "second element of the loop's carry" in head["summary"]


@pytest.mark.parametrize("kept", ["row", "fresh"])
def test_a_slot_holding_a_value_of_the_old_buffer_or_the_new_one_is_not_the_old_buffer_kept(tmp_path, kept):
    doc = cost_of_text(tmp_path, _loop(kept))
    assert doc["graphs"][0]["loop_buffer_copies"]  # the copy is found; only its reason differs
    assert not any(c["kept_old"] for c in doc["graphs"][0]["loop_buffer_copies"])
    assert "carry only what the later use needs" not in (doc["headline"] or {}).get("fix", "")


def test_autodiffs_own_write_is_left_out(tmp_path):
    doc = cost_of_text(tmp_path, _loop("whole", BWD))
    assert not any(c["kept_old"] for c in doc["graphs"][0]["loop_buffer_copies"])


def _capture(name: str) -> dict:
    folder = COST / name
    if not (folder / "dump").is_dir():
        pytest.skip(f"{name} is not captured")
    return cli_json("cost", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0,))


def test_the_solver_keeping_its_history_before_the_write_is_told_to_carry_only_what_the_log_needs():
    head = _capture("x12c_while_prev_copy_log")["headline"]
    assert head["kind"] == "loop_buffer_copy" and head["kept_old"] and not head["stale_read"]
    assert head["location"]["line"] == 25 and "scan output" not in head["fix"]


@pytest.mark.parametrize("name, words", [
    ("jax_layer_stack_carry", "scan output (ys)"),
    ("x4c_scan_emits_buffer", "only the new row"),
    ("jax_masked_row_update", "buf.at[t].set(row)"),
    ("jax_rolling_window_concat", "ring buffer"),
    ("x5c_best_snapshot_copy", "best step's index"),
    ("x6c_onehot_cache_write", "one_hot"),
    ("x11c_fori_attend_old_cache", "read the updated buffer"),
])
def test_the_other_loop_copies_keep_their_words(name, words):
    head = _capture(name)["headline"]
    assert head["kind"] == "loop_buffer_copy" and not head["kept_old"] and words in head["fix"]


@pytest.mark.parametrize("name", ["x4c_fori_read_then_write_control", "jax_while_dus_control",
                                  "x8c_scan_table_donated_control", "x7c_while_table_carry_control"])
def test_the_in_place_controls_stay_quiet(name):
    assert _capture(name)["headline"] is None
