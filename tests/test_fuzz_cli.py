"""Mutated real dumps through the whole command: a result or a one-line error, never a traceback (exit 3)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import FIXTURES, cli
from test_fuzz_parser import mutate, mutation

SOURCES = [(FIXTURES / "torch_xla" / name / "graphs.hlo.0").read_text()
           for name in ("metric_even_steps", "lr_constant")]
SOURCES.append((FIXTURES / "jax" / "recompile_shape" / "dump" / "module_0002.jit_step.before_optimizations.txt")
               .read_text())


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.integers(0, len(SOURCES) - 1), st.lists(mutation, min_size=1, max_size=3),
       st.sampled_from(["inspect", "compare", "fingerprint"]))
def test_mutated_dump_never_crashes_the_cli(index, steps, command):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graphs.hlo.0"
        path.write_text(mutate(SOURCES[index], steps))
        result = cli(command, str(path))
        assert result.exit_code in (0, 1, 2), result.output
        assert "Traceback" not in result.output and "internal error" not in result.output
        if result.exit_code == 2:
            errors = [line for line in result.output.splitlines() if ": error: " in line]
            assert len(errors) == 1
