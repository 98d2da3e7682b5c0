"""Two runs of one model that differ in a library call's setting (GELU exact vs approximate="tanh", the new-user
review of 2026-11-27, F4): the ops that differ are the story, and the fix sends the user to that call's settings.
Before, a multiply the matcher paired inside the changed region led the report as "takes the same operands in
another order", with the fix "iterate in one fixed order"."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json

RUNS = FIXTURES / "torch_xla" / "gelu_two_runs"


def test_a_changed_activation_is_told_as_the_ops_that_differ():
    doc = cli_json("compare", f"{RUNS}/exact/dump#1", f"{RUNS}/tanh/dump#1")
    first = doc["causes"][0]
    assert first["kind"] == "ops"
    assert "2 erf" in first["summary"] and "2 tanh" in first["summary"]
    assert not first["summary"].startswith(("multiply", "add")) and "another order (+" not in first["summary"]
    assert first["fix_rule"] == "ops_library_setting"
    assert "torch/nn/modules/activation.py" in first["fix"] and "iterate in one fixed order" not in first["fix"]


def test_the_forward_graph_tells_the_same_story_on_the_terminal():
    out = cli("compare", f"{RUNS}/exact/dump#0", f"{RUNS}/tanh/dump#0", codes=(1,)).stdout
    assert "erf" in out and "tanh" in out and "keep its settings the same" in out
    assert "same operands in another order" not in out
