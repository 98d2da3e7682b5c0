"""Donations JAX's log says it could not use (``Some donated buffers were not usable: float32[256,32], ...``), which
the optimized module does not show: read in hlodiff/dumps/jax_log.py, matched to the module's parameters in
hlodiff/cost/donation.py (cost round 2's jax_donate_batch)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.cost.donation import UnusableDonation, told_unusable
from hlodiff.cost.figures import Tally
from hlodiff.cost.model import GraphCost
from hlodiff.dumps.jax_arrays import JAX_DTYPES, unusable_arrays
from hlodiff.dumps.jax_log import read_jax_log
from hlodiff.hlo.shapes import parse_shape

CASES = FIXTURES / "scenarios" / "cost"
WARNING = ("/usr/lib/python3.11/site-packages/jax/_src/interpreters/mlir.py:1365: UserWarning: Some donated buffers "
           "were not usable: {}.\n")
COMPILING = ("Compiling jit(step) with global shapes and types (ShapedArray(float32[8,4]),). Argument mapping: "
             "(UnspecifiedValue,).\n")
FINISHED = "Finished XLA compilation of jit(step) in 0.1 sec\n"


@pytest.mark.parametrize("jax_name, xla_name", sorted(JAX_DTYPES.items()))
def test_each_jax_dtype_is_spelled_as_xla_spells_it(jax_name, xla_name):
    (array,) = unusable_arrays(f"{jax_name}[2, 3]")
    assert array == f"{xla_name}[2,3]"
    assert parse_shape(array).element_type == xla_name


def test_older_jax_names_arrays_as_shaped_arrays():
    assert unusable_arrays("ShapedArray(float32[256,32]), ShapedArray(int32[])") == ("f32[256,32]", "s32[]")


@pytest.mark.parametrize("lines, expected", [
    ([COMPILING, WARNING.format("float32[256,32]"), FINISHED], [("f32[256,32]",)]),      # while compiling
    ([WARNING.format("float32[256,32]"), COMPILING, FINISHED], [("f32[256,32]",)]),      # before its Compiling
    ([COMPILING, FINISHED, WARNING.format("float32[4]"), COMPILING, FINISHED], [(), ("f32[4]",)]),  # the next one
])
def test_the_warning_belongs_to_the_compilation_it_is_printed_for(tmp_path, lines, expected):
    path = tmp_path / "stderr.log"
    path.write_text("".join(lines))
    assert [c.unusable_donations for c in read_jax_log(str(path)).compilations] == expected


def _graph(**kw) -> GraphCost:
    return GraphCost(ref="d#0", index=0, name="jit_step", instructions=3, parameters=Tally(3, 4),
                     outputs=Tally(2, 4), aliased_bytes=0, peak_bytes=8, peak_source="estimate",
                     estimated_peak_bytes=8, parameter_shapes=["f32[32,16]", "f32[256,32]", "f32[256,16]"],
                     output_shapes=["f32[32,16]", "f32[]"], **kw)


def test_the_log_names_donations_the_header_did_not():
    found = told_unusable(_graph(), ("f32[256,32]", "f32[256,16]"))
    assert [(u.parameter, u.shape, u.bytes, u.mismatch) for u in found] == \
        [(1, "f32[256,32]", 32768, None), (2, "f32[256,16]", 16384, None)]


def test_a_donation_the_header_told_is_not_counted_twice():
    told = UnusableDonation(1, "f32[256,32]", 32768)
    assert told_unusable(_graph(unusable_donations=[told]), ("f32[256,32]",)) == [told]


def test_an_array_no_parameter_has_is_left_out():
    assert told_unusable(_graph(), ("f32[7]",)) == []


def test_the_batch_donated_with_the_weights_heads_with_donate_only():
    """jax_donate_batch: x and y donated with w; only w can be written into; the module has no donor for x, y."""
    case = CASES / "jax_donate_batch"
    head = cli_json("cost", str(case / "dump"), "--jax-log", str(case / "stderr.log"), codes=(0,))["headline"]
    assert (head["kind"], head["count"], head["shapes"], head["location"]["line"]) == \
        ("donation_unusable", 2, ["f32[256,32]", "f32[256,16]"], 25)
    assert "donate only" in head["fix"] and "add donate_argnums" not in head["fix"]
