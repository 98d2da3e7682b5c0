"""JAX runs told in story order: the recompilation to act on first, eager operations (compiled once per shape
outside jit) after it, no line for a function that compiled once, and a summary that fits two lines."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from helpers import FIXTURES
from hlodiff.dumps.run_folder import discover
from helpers import explained
from hlodiff.render.explain_recompile import render_explanation

JAX_RUNS = sorted(p.parent.name for p in (FIXTURES / "jax").glob("*/dump"))


def _report(name: str, width: int = 100) -> list[str]:
    explanation = explained(discover([str(FIXTURES / "jax" / name / "dump")], None, None), [])
    out = io.StringIO()
    render_explanation(Console(file=out, width=width, color_system=None), explanation)
    return out.getvalue().splitlines()


def test_the_real_recompilation_comes_before_eager_ops():
    lines = _report("debug_print", width=1000)  # the fix line unwrapped: the patterns follow it
    heads = [line for line in lines if " recompiled (" in line or " compiled for another shape (" in line]
    assert [re.search(r"(?:recompiled|another shape) \((\w+)\)", h).group(1) for h in heads] == [
        "jit_f", "jit_broadcast_in_dim"]
    assert "recompiled (jit_f)" in heads[0]  # the eager op's block says what it is: compiled for another shape
    listed = [line.strip() for line in lines[:lines.index("")] if line.startswith("  ")]  # the patterns
    assert listed[0].startswith("2 compilations of jit_f") and listed[-1].startswith("eager op: jit_broadcast_in_dim")


@pytest.mark.parametrize("name", ["debug_print", "eager_init", "optional_key", "dtype_reductions"])
def test_no_line_for_a_function_compiled_once(name):
    assert not [line for line in _report(name) if re.search(r"steady: \S+ compiled once in 1 graph", line)]


@pytest.mark.parametrize("name", JAX_RUNS)
def test_summary_fits_two_lines_at_100_columns(name):
    lines = _report(name)
    summary = []
    for line in lines:
        if not line or line.startswith(("fix:", "  ")):
            break
        summary.append(line)
    assert 1 <= len(summary) <= 2, summary
