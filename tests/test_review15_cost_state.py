"""New-user review 15, F9: `hlodiff cost` on a healthy loop (rev15_tx_stable_item: SGD momentum, one sync, `.item()`
after it) gave no first line and listed the weights and momentum buffers crossing every step like a problem. It
opens with "nothing to act on" and says the state carried from step to step is expected; a run whose boundaries
carry activations or gradients (a mid-step sync) keeps its finding and no such words."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json
from hlodiff.cost.carried_state import STATE_ROLES, roles_state_only, state_only
from hlodiff.cost.crossings import Boundary, BoundaryTensor

COST = FIXTURES / "scenarios" / "cost"


def test_table_rows_are_the_ones_tested():
    assert STATE_ROLES == {"parameter", "optimizer_state"}


def test_a_healthy_loop_has_nothing_to_act_on_and_its_state_is_expected():
    out = cli("cost", str(COST / "rev15_tx_stable_item" / "record")).stdout
    first = out.splitlines()[0]
    assert first.startswith("first: nothing to act on") and "model's state" in first
    assert "4 parameters and 4 optimizer state tensors, 648 B" in first and "(expected)" in first
    held = [line for line in out.splitlines() if " step " in line and "648 B in 8 tensors" in line]
    assert len(held) == 5 and all(line.endswith("carried to the next step: expected)") for line in held)
    assert cli_json("cost", str(COST / "rev15_tx_stable_item" / "record"), codes=(0,))["headline"] is None


def test_lookalike_a_mid_step_sync_keeps_its_finding_and_its_held_gradients_are_not_called_state():
    """xla_sync_after_backward: gradients cross from the backward's graph to the optimizer's within the step."""
    out = cli("cost", str(COST / "xla_sync_after_backward" / "record")).stdout
    lines = out.splitlines()
    assert lines[0].startswith("first: ") and "nothing to act on" not in lines[0]
    gradient_lines = [line for line in lines if "gradient" in line and " -> " in line]
    assert gradient_lines and not any("model's state" in line for line in gradient_lines)


def _boundary(*roles):
    tensors = [BoundaryTensor(i, "f32[4]", 16, role=r) for i, r in enumerate(roles)]
    return Boundary("a#0", "a#1", tensors)


def test_state_only_needs_every_tensor_to_be_state():
    assert state_only(_boundary("parameter", "optimizer_state"))
    assert not state_only(_boundary("parameter", "gradient"))
    assert not state_only(_boundary("parameter", None))  # a tensor of no known role
    assert not state_only(_boundary())  # nothing named
    assert roles_state_only({"parameter": 1}) and not roles_state_only({"parameter": 1, "activation": 2})
