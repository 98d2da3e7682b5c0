"""A constant XLA shares among identical blocks, changed in one block, is told as a changed constant.

Real JAX lowerings (bench/gen_jax_blocks.py's unrolled step, 12 blocks: the same program as the 300K-instruction
benchmark pair, small enough to lower in a test), and the look-alike that shares the evidence (a new constant and
broadcast in one block) but adds an operation: that stays an ops change.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from helpers import cli_json

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                                reason="lowering the block pair needs the jax extra")

_LOWER = """
import runpy, sys, jax, jax.numpy as jnp
step_of = runpy.run_path(sys.argv[1])["step_of"]
blocks, eps_block, every = (int(a) for a in sys.argv[2:5])
swap, scaled, out = sys.argv[5] == "1", sys.argv[6] == "1", sys.argv[7]
plain = step_of(blocks, eps_block, swap, every)
fn = (lambda x, ws: (lambda o: (o[0] * 3.0, o[1]))(plain(x, ws))) if scaled else plain
open(out, "w").write(jax.jit(fn).lower(jnp.ones((4, 16)), [jnp.ones((16, 16))] * 4).compiler_ir("hlo").as_hlo_text())
"""


def _lower(path, blocks, eps_block, swap, every=500, scaled=False) -> str:
    """bench/gen_jax_blocks.py's step lowered to HLO text in a child process: JAX's threads stay out of this one,
    which later tests fork (explain/parallel.py)."""
    subprocess.run([sys.executable, "-c", _LOWER, str(ROOT / "bench" / "gen_jax_blocks.py"), str(blocks),
                    str(eps_block), str(every), "1" if swap else "0", "1" if scaled else "0", str(path)],
                   check=True, timeout=300, env={"JAX_PLATFORMS": "cpu", **os.environ})
    return str(path)


def test_one_blocks_epsilon_is_a_changed_constant_naming_both_values_and_the_block(tmp_path):
    a = _lower(tmp_path / "a.hlo", 12, -1, False)
    b = _lower(tmp_path / "b.hlo", 12, 6, False)
    doc = cli_json("compare", a, b, codes=(1,))
    assert [c["kind"] for c in doc["causes"]] == ["constant"], doc["causes"]
    summary = doc["causes"][0]["summary"]
    assert "1e-05 -> 1e-06" in summary and "the 7th of 12 add instructions" in summary, summary


def test_a_block_that_gains_an_operation_on_a_new_constant_stays_an_ops_change(tmp_path):
    """The same surface evidence (a constant and a broadcast only on the right) with a multiply behind it: the
    traced program changed, not a value."""
    a = _lower(tmp_path / "a.hlo", 12, -1, False)
    b = _lower(tmp_path / "b.hlo", 12, -1, False, scaled=True)
    doc = cli_json("compare", a, b, codes=(1,))
    kinds = [c["kind"] for c in doc["causes"]]
    assert "constant" not in kinds and "ops" in kinds, doc["causes"]


def test_outputs_swapped_elsewhere_are_a_change_of_their_own_not_a_consequence_of_the_constant(tmp_path):
    """Issue 34's pair in small: one block's epsilon and, apart from it, two outputs swapped. Two roots, each with
    its own fix; the swap is not told as following from the constant."""
    a = _lower(tmp_path / "a.hlo", 12, -1, False, every=3)
    b = _lower(tmp_path / "b.hlo", 12, 6, True, every=3)
    doc = cli_json("compare", a, b, codes=(1,))
    kinds = [c["kind"] for c in doc["causes"]]
    assert kinds == ["constant", "reordered"], doc["causes"]
    reordered = doc["causes"][1]
    assert "follows from" not in reordered["fix"] and "fixed order" in reordered["fix"], reordered["fix"]
