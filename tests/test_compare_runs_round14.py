"""compare-runs rules learned from the fourteenth blind round across a persistent cache
(fixtures/scenarios/runs/runs14_*): one test per row, beside the look-alikes that share the row's evidence but one
fact and must keep the answer they had."""

from __future__ import annotations

from runs_helpers import runs_headline as _head
from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.render.across_runs_fixes import ACROSS_RUNS_RULES, GRAPH_FIXES


def test_table_row_is_the_one_tested():
    assert ACROSS_RUNS_RULES["outputs_jax"] == "outputs_across_runs"
    assert "{summary}" in GRAPH_FIXES["outputs_across_runs"]


# -- outputs that differ between two runs: another program, not a function's calls ---------------------------------

def test_outputs_added_between_runs_are_another_program_not_a_call_returning_other_values():
    # first try: "the function returns other values on some calls (a metric, a log): return the same outputs every
    # call"; run B chose AdamW on the command line, whose moments the step carries in and out (SGD carries none)
    head = _head("runs14_jx_optimizer_adamw")
    assert head["verdict"] == "miss_hlo_differs"
    assert "another program" in head["fix"] and "optimizer" in head["fix"]
    assert "expected once if the change was deliberate" in head["fix"]
    assert "on some calls" not in head["fix"] and "every call" not in head["fix"]


def test_the_within_run_row_keeps_its_words():
    # explain-recompile compares two calls of one process: there a function returning other values on some calls
    # is the story, and the across-runs table is compare-runs' only
    assert "return the same outputs every call" in RULES_BY_NAME["outputs_jax"].text


def test_lookalikes_with_outputs_or_inputs_changed_keep_their_rows():
    # a loss term added (ops and outputs) and another model size (inputs): their own across-runs words
    assert "traced inside library code" in _head("runs12_torch_label_smoothing")["fix"]
    assert "not a first-step warm-up" in _head("runs13_torch_cli_layers")["fix"]
    assert "another program" not in _head("runs12_layernorm_added")["fix"]
