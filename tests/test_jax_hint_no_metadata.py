"""A JAX module with no source line (an eager op JAX ran itself: ``jit_convert_element_type``, ``jit_stage``) is
told as what it is. Before, its hint said "rerun with XLA_HLO_DEBUG=1 (torch_xla) or a JAX that dumps stack
frames" on a JAX run (the new-user review of 2026-11-27, F13): a torch_xla variable, and no JAX that does so."""

from __future__ import annotations

from helpers import FIXTURES, cli


def test_an_eager_jax_op_without_source_lines_gets_a_jax_hint():
    out = cli("explain-recompile", FIXTURES / "jax" / "dtype_int_input" / "dump", codes=(0, 1)).stdout
    block = out[out.index("compiled for another shape (jit_convert_element_type)"):]  # an eager op (review 4, F8)
    assert "JAX wrote no source line into this module" in block
    assert "XLA_HLO_DEBUG" not in out and "torch_xla" not in out
