"""Fixes speak the framework of the run: a JAX run is never told to write `torch.tensor(...)` or use autocast, a
torch_xla run is never told about jnp arrays, static arguments or donate_argnums.

Inputs: every real JAX and torch_xla fixture run, and a real JAX module renamed the way other JAX front ends name
theirs (the framework then shows only in the metadata JAX writes, ``op_name="jit(step)/..."``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import FIXTURES
from hlodiff.diff import diff_modules
from hlodiff.dumps.run_folder import discover
from helpers import explained
from hlodiff.hlo import parse_module

TORCH_WORDS = re.compile(r"\btorch\b|torch\.|autocast|DataLoader|\.item\(\)|xm\.|mark_step|\.to\(device\)|"
                         r"index_select|\bsync\b|permute|\.t\(\)|device tensor|x\.float\(\)|optimizer creates")
JAX_WORDS = re.compile(r"\bjnp\b|jax\.|\bjit\b|jitted|traced (array|argument|int)|static argument|donate_argnums|"
                       r"JAX_|weak type|lax\.|pytree")


def _runs(framework: str) -> list[Path]:
    root = FIXTURES / framework
    found = sorted(p for p in root.rglob("dump") if p.is_dir() and "ranks" not in str(p))
    if framework == "torch_xla":
        found += sorted(p for p in root.rglob("graphs.hlo.0") if "ranks" not in str(p))
    return found


def _texts(path: Path) -> list[str]:
    result = explained(discover([str(path)], None, None), [])
    return [t for r in result.recompilations for c in r.causes for t in (c.fix, c.hint) if t]


@pytest.mark.parametrize("framework, foreign", [("jax", TORCH_WORDS), ("torch_xla", JAX_WORDS)], ids=["jax", "torch_xla"])
def test_every_fix_of_a_real_run_speaks_its_framework(framework, foreign):
    runs = _runs(framework)
    assert len(runs) >= 10
    wrong = [(str(p.relative_to(FIXTURES)), t) for p in runs for t in _texts(p) if foreign.search(t)]
    assert wrong == []


def test_jax_dtype_change_is_not_called_autocast():
    texts = _texts(FIXTURES / "jax" / "dtype_reductions" / "dump")
    assert texts and not any("autocast" in t for t in texts)
    assert any("compute dtype" in t for t in texts)


def test_a_baked_constant_of_a_renamed_jax_module_gets_the_jax_fix():
    """recompile_shape's static `scale` 2.0 -> 3.0 is a baked constant; with the module named `main` (not
    `jit_step`) the fix still says to pass a traced jnp array, not `torch.tensor(...)`."""
    dump = FIXTURES / "jax" / "recompile_shape" / "dump"
    texts = [(dump / f"module_000{n}.jit_step.before_optimizations.txt").read_text() for n in (2, 4)]
    renamed = [parse_module(re.sub(r"^HloModule jit_step", "HloModule main", t, count=1)) for t in texts]
    assert renamed[0].name == "main"
    cause = next(c for c in diff_modules(*renamed).causes if c.kind == "constant")
    assert "torch" not in cause.fix and "traced argument" in cause.fix and "jnp" in cause.fix
