"""A loop-carried buffer written whole into the loop's stacked output every iteration (a scan whose body returns its
carried buffer as ys): hlodiff/cost/copies.py's ``_writes_whole_into``, its look-alikes (a row emitted, the buffer
written once after the loop), on small modules of the one rule and on the real captures of crossings round 4."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json, cost_of_text

COST = FIXTURES / "scenarios" / "cost"


def _loop(emitted: str = "new", fused: bool = False) -> str:
    """A while loop carrying f32[4,2] (written one row in place) and a stacked f32[4,4,2] output into whose row i
    it writes ``emitted`` (the updated buffer, or the row: f32[1,2]), unfused or as a fusion's root."""
    shape = "f32[1,4,2]" if emitted == "new" else "f32[1,1,2]"
    if fused:
        fusion = (f"fused {{\n  fys = f32[4,4,2] parameter(0)\n  fv = {shape[:-1].replace('[1,', '[')}] parameter(1)\n"
                  f"  fi = s32[] parameter(2)\n  fz = s32[] constant(0)\n  fb = {shape} bitcast(fv)\n"
                  f"  ROOT d = f32[4,4,2] dynamic-update-slice(fys, fb, fi, fz, fz)\n}}\n\n")
        write = f"  ys1 = f32[4,4,2] fusion(ys, {emitted}, i), kind=kLoop, calls=fused\n"
    else:
        fusion = ""
        write = (f"  e = {shape} bitcast({emitted})\n"
                 f"  ys1 = f32[4,4,2] dynamic-update-slice(ys, e, i, z, z)\n")
    # the stacked output donated: an undonated one carried through a loop that writes into it is a not_donated
    # finding of its own (crossings round 5), which is not this rule's
    return f"""HloModule jit_run, input_output_alias={{ {{}}: (1, {{}}, may-alias) }}

{fusion}body {{
  p = (s32[], f32[4,2], f32[4,4,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  ys = f32[4,4,2] get-tuple-element(p), index=2
  z = s32[] constant(0)
  row = f32[1,2] constant({{{{1, 2}}}})
  new = f32[4,2] dynamic-update-slice(buf, row, i, z)
{write}  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,2], f32[4,4,2]) tuple(i1, new, ys1)
}}

cond {{
  p = (s32[], f32[4,2], f32[4,4,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  s = f32[4,4,2] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[4,2], f32[4,4,2]) tuple(z, b, s)
  w = (s32[], f32[4,2], f32[4,4,2]) while(t), condition=cond, body=body
  ROOT r = f32[4,4,2] get-tuple-element(w), index=2
}}
"""




@pytest.mark.parametrize("fused", [False, True])
def test_a_carried_buffer_written_whole_into_the_stacked_output_is_a_copy_per_iteration(tmp_path, fused):
    doc = cost_of_text(tmp_path, _loop(fused=fused))
    (lbc,) = doc["graphs"][0]["loop_buffer_copies"]
    assert (lbc["shape"], lbc["emitted"], lbc["shift"], lbc["masked"], lbc["bytes_per_iteration"]) == (
        "f32[4,2]", True, False, False, 32)
    head = doc["headline"]
    assert head["kind"] == "loop_buffer_copy" and head["emitted"]
    assert "only the new row" in head["fix"] and "ring buffer" not in head["fix"]


@pytest.mark.parametrize("fused", [False, True])
def test_a_row_emitted_as_the_stacked_output_is_no_finding(tmp_path, fused):
    """scan's own idiom (ys = the row): the stacked output grows by a row, nothing is copied whole."""
    doc = cost_of_text(tmp_path, _loop(emitted="row", fused=fused))
    assert doc["graphs"][0]["loop_buffer_copies"] == [] and doc["headline"] is None


def test_the_scan_emitting_its_buffer_capture_names_the_scan_and_the_row_fix():
    """Crossings round 4's x4c_scan_emits_buffer: f32[64,256] written into the f32[64,64,256] ys, 64 iterations."""
    d = COST / "x4c_scan_emits_buffer"
    head = cli_json("cost", str(d / "dump"), "--jax-log", str(d / "stderr.log"), codes=(0,))["headline"]
    assert (head["kind"], head["location"]["line"], head["emitted"]) == ("loop_buffer_copy", 24, True)
    assert head["bytes"] == 64 * 256 * 4 * 64


def test_a_buffer_read_whole_then_written_in_place_is_no_finding():
    """Round 4's control x4c_fori_read_then_write_control: the read is scheduled before the in-place write."""
    d = COST / "x4c_fori_read_then_write_control"
    assert cli_json("cost", str(d / "dump"), "--jax-log", str(d / "stderr.log"), codes=(0,))["headline"] is None
