"""An opcode this hlodiff does not know (a newer XLA's) is read as written and said once, by every command that
reads graphs: `inspect` and `explain-recompile` as well as `compare` and `fingerprint`.

Input: the real JAX dump fixtures/jax/recompile_shape/dump (three jit_step modules), copied with its `tanh`
instructions given an opcode no XLA has (`frobnicate`) -- a programmatic edit standing in for a newer XLA."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli

MESSAGE = "unknown opcode(s) frobnicate: read as written (a newer XLA?)"


@pytest.fixture
def dump(tmp_path):
    src = FIXTURES / "jax" / "recompile_shape" / "dump"
    out = tmp_path / "dump"
    out.mkdir()
    for path in sorted(src.glob("module_*.before_optimizations.txt")):
        text = path.read_text()
        assert " tanh(" in text
        (out / path.name).write_text(text.replace(" tanh(", " frobnicate("))
    return out


@pytest.mark.parametrize("command", ["inspect", "explain-recompile", "fingerprint"])
def test_unknown_opcode_is_warned_once_in_the_json_warnings(dump, command):
    result = cli(command, str(dump), "--json")
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.output)
    said = [w for w in doc["warnings"] if "frobnicate" in w]
    # three modules use it: said once, naming the first
    assert said == [f"{dump / 'module_0000.jit_step.before_optimizations.txt'}: warning: {MESSAGE}"]


def test_unknown_opcode_is_said_on_the_terminal_by_inspect_and_explain(dump):
    for command in ("inspect", "explain-recompile"):
        result = cli(command, "-q", str(dump))
        assert result.output.count(MESSAGE) == 1, (command, result.output)
