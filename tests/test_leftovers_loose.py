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


# -- a log of guard trees names no function: the summary does not pretend it does ------------------------------------


def test_a_guard_tree_only_log_says_its_function_is_unnamed():
    # TORCH_LOGS=guards: one tree, one compile, no "start compiling f" line to name it
    doc = cli_json("explain-recompile", FIXTURES / "scenarios" / "dynamo" / "d14_late_hook_control", codes=(0,))
    assert doc["summary"].startswith("Dynamo compiled a function its log does not name 1 time;")
    assert "the compiled function" not in doc["summary"]


def test_a_log_naming_its_function_keeps_the_name():
    # the look-alike: the recompiles channel names the frame (dyn_attr_switch compiles `forward`)
    doc = cli_json("explain-recompile", FIXTURES / "scenarios" / "dynamo" / "dyn_attr_switch", codes=(0, 1))
    assert doc["summary"].startswith("Dynamo compiled ") and "does not name" not in doc["summary"]


# -- without Dynamo's log, a retrace's guessed story does not head a change the graphs show ---------------------------

_CPU_SCALAR = FIXTURES / "scenarios" / "dynamo" / "d14_cpu_scalar_control"


def test_a_baked_constant_heads_before_a_bridge_fx_compile_told_without_dynamos_log():
    # the temperature reaches 1.0 at step 10 and the bridge's sync of the call's inputs bakes it (dump#9); the
    # second FX compile (dump#6) is a Dynamo retrace whose reason only Dynamo's log tells. The level-1 log holds
    # compilations only, so the constant's step is not known: its words say so and what to capture to tell
    # (review 11's compilations-only rule), never the FX retrace's guess
    doc = cli_json("explain-recompile", _CPU_SCALAR, codes=(1,))
    head = doc["headline"]
    assert head["graph"].endswith("dump#9") and head["kind"] == "constant"
    assert "cannot tell" in head["fix"] and "PT_XLA_DEBUG_LEVEL=2" in head["fix"]
    assert "torch.where" not in head["fix"] and "Python `if`" not in head["fix"]


def test_the_fx_compiles_story_still_heads_when_nothing_else_changed(tmp_path):
    # the same capture cut before step 10 (its last module left out): only the FX compile's change is left
    import shutil

    shutil.copy(_CPU_SCALAR / "debug.log", tmp_path / "debug.log")
    (tmp_path / "dump").mkdir()
    for module in sorted((_CPU_SCALAR / "dump").iterdir()):
        if not module.name.startswith("module_0009."):
            shutil.copy(module, tmp_path / "dump" / module.name)
    head = cli_json("explain-recompile", tmp_path, codes=(1,))["headline"]
    assert head["kind"] == "ops" and "a Python `if`" in head["fix"]

