"""A constant XLA shares among identical blocks, changed in one block, is told as a changed constant.

Real JAX lowerings (bench/gen_jax_blocks.py's unrolled step, 12 blocks: the same program as the 300K-instruction
benchmark pair, small enough to lower in a test), and the look-alike that shares the evidence (a new constant and
broadcast in one block) but adds an operation: that stays an ops change.
"""

from __future__ import annotations

import importlib.util

import pytest

from conftest import ROOT
from helpers import cli_json

jax = pytest.importorskip("jax", reason="lowering the block pair needs the jax extra")


def _generator():
    """bench/gen_jax_blocks.py loaded from its file: putting bench/ on sys.path would shadow the standard library's
    ``html`` with bench/html.py for every later test."""
    spec = importlib.util.spec_from_file_location("gen_jax_blocks", ROOT / "bench" / "gen_jax_blocks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


step_of = _generator().step_of


def _lower(fn, path):
    import jax.numpy as jnp

    x, ws = jnp.ones((4, 16)), [jnp.ones((16, 16))] * 4
    path.write_text(jax.jit(fn).lower(x, ws).compiler_ir("hlo").as_hlo_text())
    return str(path)


def test_one_blocks_epsilon_is_a_changed_constant_naming_both_values_and_the_block(tmp_path):
    a = _lower(step_of(12, -1, False), tmp_path / "a.hlo")
    b = _lower(step_of(12, 6, False), tmp_path / "b.hlo")
    doc = cli_json("compare", a, b, codes=(1,))
    assert [c["kind"] for c in doc["causes"]] == ["constant"], doc["causes"]
    summary = doc["causes"][0]["summary"]
    assert "1e-05 -> 1e-06" in summary and "the 7th of 12 add instructions" in summary, summary


def test_a_block_that_gains_an_operation_on_a_new_constant_stays_an_ops_change(tmp_path):
    """The same surface evidence (a constant and a broadcast only on the right) with a multiply behind it: the
    traced program changed, not a value."""
    plain = step_of(12, -1, False)

    def scaled(x, ws):
        out, outs = plain(x, ws)
        return out * 3.0, outs

    a = _lower(plain, tmp_path / "a.hlo")
    b = _lower(scaled, tmp_path / "b.hlo")
    doc = cli_json("compare", a, b, codes=(1,))
    kinds = [c["kind"] for c in doc["causes"]]
    assert "constant" not in kinds and "ops" in kinds, doc["causes"]


def test_outputs_swapped_elsewhere_are_a_change_of_their_own_not_a_consequence_of_the_constant(tmp_path):
    """Issue 34's pair in small: one block's epsilon and, apart from it, two outputs swapped. Two roots, each with
    its own fix; the swap is not told as following from the constant."""
    a = _lower(step_of(12, -1, False, every=3), tmp_path / "a.hlo")
    b = _lower(step_of(12, 6, True, every=3), tmp_path / "b.hlo")
    doc = cli_json("compare", a, b, codes=(1,))
    kinds = [c["kind"] for c in doc["causes"]]
    assert kinds == ["constant", "reordered"], doc["causes"]
    reordered = doc["causes"][1]
    assert "follows from" not in reordered["fix"] and "fixed order" in reordered["fix"], reordered["fix"]
