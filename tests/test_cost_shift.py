"""A loop-carried buffer shifted whole every iteration (a rolling window by ``concatenate``): hlodiff/cost/copies.py's
SHIFT_OPCODES rows, on small modules of the one rule and on the real capture of cost round 2."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.cost.buffer_writes import SHIFT_OPCODES

ROLLING = FIXTURES / "scenarios" / "cost" / "jax_rolling_window_concat"


def _loop(tail_of: str) -> str:
    """A while loop carrying f32[4,2]; its body joins a slice of ``tail_of`` (the carried buffer, or another
    value of its shape) with a new row."""
    return f"""HloModule jit_roll

body {{
  p = (s32[], f32[4,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[4,2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  half = f32[] constant(0.5)
  other = f32[4,2] broadcast(half), dimensions={{}}
  tail = f32[3,2] slice({tail_of}), slice={{[1:4], [0:2]}}
  row = f32[1,2] constant({{ {{1, 2}} }})
  shifted = f32[4,2] concatenate(tail, row), dimensions={{0}}
  ROOT t = (s32[], f32[4,2]) tuple(i1, shifted)
}}

cond {{
  p = (s32[], f32[4,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  b = f32[4,2] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4,2]) tuple(z, b)
  w = (s32[], f32[4,2]) while(t), condition=cond, body=body
  ROOT r = f32[4,2] get-tuple-element(w), index=1
}}
"""


@pytest.mark.parametrize("op", SHIFT_OPCODES)
def test_each_shift_opcode_rewriting_the_carried_buffer_is_a_whole_copy_per_iteration(tmp_path, op):
    path = tmp_path / "roll.hlo"
    path.write_text(_loop("buf").replace(" concatenate(", f" {op}("))
    doc = cli_json("cost", str(path), codes=(0,))
    (lbc,) = doc["graphs"][0]["loop_buffer_copies"]
    assert (lbc["shape"], lbc["count"], lbc["shift"], lbc["bytes_per_iteration"]) == ("f32[4,2]", 1, True, 32)
    assert doc["headline"]["kind"] == "loop_buffer_copy" and "ring buffer" in doc["headline"]["fix"]


def test_a_join_that_reads_no_slice_of_the_carried_buffer_is_no_shift(tmp_path):
    """The body builds a new value of the buffer's size from something else: the buffer is replaced, not moved."""
    path = tmp_path / "replace.hlo"
    path.write_text(_loop("other"))
    doc = cli_json("cost", str(path), codes=(0,))
    assert doc["graphs"][0]["loop_buffer_copies"] == [] and doc["headline"] is None


def test_the_rolling_window_capture_names_the_concatenate_and_a_ring_buffer():
    """Cost round 2's jax_rolling_window_concat: the concatenate fusion and XLA's copy back into the carry, two
    whole f32[256,64] writes per iteration of 48."""
    doc = cli_json("cost", str(ROLLING / "dump"), "--jax-log", str(ROLLING / "stderr.log"), codes=(0,))
    head = doc["headline"]
    assert (head["kind"], head["location"]["line"], head["shift"], head["count"]) == ("loop_buffer_copy", 19, True, 2)
    assert head["bytes"] == 2 * 256 * 64 * 4 * 48
    assert "ring buffer" in head["fix"] and "scan output" not in head["fix"]
