"""A loop-carried buffer written one position at a time through a mask over all of it (``jnp.where(rows == t, row,
buf)``): hlodiff/cost/copies.py's MASKED_WRITE_OPCODES rows, their look-alikes (a mask from data, a branch computed
whole), on small modules of the one rule and on the real captures of cost round 3."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json, cost_of_text
from hlodiff.cost.buffer_writes import MASKED_WRITE_OPCODES

COST = FIXTURES / "scenarios" / "cost"


def _loop(op: str, position: str = "i", written: str = "rowb", fused: bool = False) -> str:
    """A while loop carrying f32[4,2] and a s32[4,1] iota; its body writes ``written`` where ``iota == position``
    (broadcast), by ``op``, unfused or as a fusion's root."""
    mask = ("  pos = s32[4,1] broadcast({position}), dimensions={{}}\n"
            "  eq = pred[4,1] compare(rows, pos), direction=EQ\n"
            "  flat = pred[4] bitcast(eq)\n"
            "  m = pred[4,2] broadcast(flat), dimensions={{0}}\n")
    if fused:
        write = (f"fused {{\n  fb = f32[4,2] parameter(0)\n  frow = f32[2] parameter(1)\n  rows = s32[4,1] parameter(2)\n"
                 f"  fi = s32[] parameter(3)\n{mask.format(position='fi')}"
                 f"  rowb = f32[4,2] broadcast(frow), dimensions={{1}}\n"
                 f"  ROOT s = f32[4,2] {op}(m, rowb, fb)\n}}\n\n")
        body_write = "  new = f32[4,2] fusion(buf, row, rows, i), kind=kLoop, calls=fused\n"
    else:
        write = ""
        body_write = (mask.format(position=position) + "  rowb = f32[4,2] broadcast(row), dimensions={1}\n"
                      f"  new = f32[4,2] {op}(m, {written}, buf)\n")
    # the buffer donated, as in the real capture: an undonated one carried through a loop that writes into it is
    # a not_donated finding of its own (crossings round 5), which is not this rule's
    return f"""HloModule jit_fill, input_output_alias={{ {{}}: (0, {{}}, may-alias) }}

{write}body {{
  p = (s32[], f32[4,2], s32[4,1]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  rows = s32[4,1] get-tuple-element(p), index=2
  k = s32[] constant(2)
  row = f32[2] constant({{1, 2}})
  whole = f32[4,2] exponential(buf)
{body_write}  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], s32[4,1]) tuple(i1, new, rows)
}}

cond {{
  p = (s32[], f32[4,2], s32[4,1]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  z = s32[] constant(0)
  r0 = s32[4,1] iota(), iota_dimension=0
  t = (s32[], f32[4,2], s32[4,1]) tuple(z, b, r0)
  w = (s32[], f32[4,2], s32[4,1]) while(t), condition=cond, body=body
  ROOT r = f32[4,2] get-tuple-element(w), index=1
}}
"""




@pytest.mark.parametrize("op", MASKED_WRITE_OPCODES)
@pytest.mark.parametrize("fused", [False, True])
def test_each_masked_write_of_one_position_rewrites_the_carried_buffer_whole(tmp_path, op, fused):
    doc = cost_of_text(tmp_path, _loop(op, fused=fused), "fill.hlo")
    (lbc,) = doc["graphs"][0]["loop_buffer_copies"]
    assert (lbc["shape"], lbc["masked"], lbc["shift"], lbc["bytes_per_iteration"]) == ("f32[4,2]", True, False, 32)
    head = doc["headline"]
    assert head["kind"] == "loop_buffer_copy" and head["masked"]
    assert ".at[t].set" in head["fix"] and "ring buffer" not in head["fix"]


@pytest.mark.parametrize("lookalike", [
    {"position": "k"},            # a mask from a constant (`tokens == eos`): data, not the position being written
    {"written": "whole"},         # a branch computed whole (an RNN's where(mask, h_new, h)): the work itself
])
def test_a_mask_from_data_or_a_whole_new_value_is_no_finding(tmp_path, lookalike):
    doc = cost_of_text(tmp_path, _loop("select", **lookalike), "fill.hlo")
    assert doc["graphs"][0]["loop_buffer_copies"] == [] and doc["headline"] is None


def test_the_masked_row_capture_names_the_where_and_an_indexed_write():
    """Cost round 3's jax_masked_row_update: the select fusion over the whole f32[512,64] buffer, 512 iterations."""
    d = COST / "jax_masked_row_update"
    head = cli_json("cost", str(d / "dump"), "--jax-log", str(d / "stderr.log"), codes=(0,))["headline"]
    assert (head["kind"], head["location"]["line"], head["masked"]) == ("loop_buffer_copy", 21, True)
    assert head["bytes"] == 512 * 64 * 4 * 512


def test_a_stencil_rewriting_every_cell_is_no_finding():
    """Cost round 3's control jax_scan_stencil_control: rolls (slices joined) feed arithmetic over every cell; XLA's
    copy of the new field into the carry is a double buffer no user change removes."""
    d = COST / "jax_scan_stencil_control"
    assert cli_json("cost", str(d / "dump"), "--jax-log", str(d / "stderr.log"), codes=(0,))["headline"] is None
