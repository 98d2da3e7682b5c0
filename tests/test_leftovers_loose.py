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


# -- a step is said only when the capture knows the steps ----------------------------------------------------------


def _ops_cause():
    from hlodiff.diff.model import Cause

    return Cause("ops", "3 instructions added (add, multiply, select)")


def test_a_graph_index_is_no_step_in_a_capture_of_compilations_only():
    # PT_XLA_DEBUG_LEVEL=1 or a dump alone: the family's second graph is its second compilation, whatever step ran it
    from hlodiff.diff.fixes import FixContext, decide

    fix = decide(_ops_cause(), FixContext(producer="torch_xla", variant_steps=(1,), compilations_only=True)).text
    assert "step 1" not in fix and "ran on some steps" in fix


def test_a_step_is_said_where_executions_were_seen():
    # the look-alike with the executions (PT_XLA_DEBUG_LEVEL=2, a record): position 1 is step 1
    from hlodiff.diff.fixes import FixContext, decide

    fix = decide(_ops_cause(), FixContext(producer="torch_xla", variant_steps=(1,))).text
    assert "this graph ran on step 1)" in fix


@pytest.mark.parametrize("compilations_only,words", [(False, "from step 3 on"),
                                                     (True, "from the step that compiled it on")])
def test_from_which_step_a_switch_stays_is_said_only_when_known(compilations_only, words):
    from hlodiff.diff.fix_facts import evidence
    from hlodiff.diff.fixes import FixChoice, FixContext
    from hlodiff.diff.fix_rules import RULES_BY_NAME

    ctx = FixContext(producer="torch_xla", variant_steps=(3,), compilations_only=compilations_only)
    args = evidence(_ops_cause(), ctx).args
    assert words in FixChoice(RULES_BY_NAME["ops_switched_on"], args).text
