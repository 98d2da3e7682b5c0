"""Leftovers of the session's rounds: words and exit status that disagreed, a step said where none is known, a
compiled function left unnamed, and a bridge compile's guessed story heading a baked constant. Each is a general
rule, tested here against the look-alikes sharing its evidence."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli, cli_json


# -- static_flag: "expected ... nothing to fix" and the exit status agree -------------------------------------------


@pytest.mark.parametrize("folder", ["jax/train_flag", "scenarios/jax/r14_jx_debug_print_flag"])
def test_a_static_bool_flag_with_one_graph_per_value_is_expected_and_exits_0(folder):
    # a Python `if` reads the flag, so it must stay static: train and eval each compile once, nothing to fix
    result = cli("explain-recompile", FIXTURES / folder, "--json")
    assert result.exit_code == 0, result.output
    doc = cli_json("explain-recompile", FIXTURES / folder, codes=(0,))
    fix = doc["recompilations"][0]["causes"][0]["fix"]
    assert fix.startswith("expected") and "nothing to fix" in fix and "static" in fix


@pytest.mark.parametrize("folder,words", [
    ("jax/scan_length", "must stay static"),        # a static int setting the loop length: reduce its values
    ("jax/static_argument", "keep it out of"),      # a static int the program never reads: not static at all
])
def test_other_static_arguments_still_ask_a_change(folder, words):
    doc = cli_json("explain-recompile", FIXTURES / folder, codes=(1,))
    fix = doc["headline"]["fix"]
    assert words in fix and not fix.startswith("expected")
