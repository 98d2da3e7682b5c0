"""Odd but real-world input: negative dimensions, byte-order marks, CR line endings, unreadable modules.

Each gives the right graphs (with a warning where something was skipped) or a one-line error; never silently
fewer graphs.
"""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from helpers import FIXTURES
from hlodiff.cli import main

METRIC = FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0"
JAX_DUMP = FIXTURES / "jax" / "recompile_shape" / "dump"
JAX_MODULE = JAX_DUMP / "module_0002.jit_step.before_optimizations.txt"


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200"})


def error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and ": error: " in lines[0], result.stderr
    return lines[0]


def test_negative_dimension_is_a_located_error(tmp_path):
    text = JAX_MODULE.read_text()
    lines = text.splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if "%x.1 = f32[6,8]" in line)
    lines[n] = lines[n].replace("f32[6,8]", "f32[-6,8]", 1)
    path = tmp_path / "neg.hlo"
    path.write_text("".join(lines))
    result = run("inspect", path)
    assert result.exit_code == 2
    line = error_line(result)
    assert line.startswith(f"{path}:{n + 1}:") and "bad dimension '-6'" in line
