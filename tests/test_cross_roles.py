"""The role of a tensor crossing between graphs, one test per row of hlodiff/cost/roles.py's tables (issue 32)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.cost.boundaries import frozen_graphs
from hlodiff.cost.roles import (BACKWARD, FORWARD, FROZEN_FORWARD_ROLE, OPTIMIZER, PHASE_FRAMES, ROLE_RULES,
                                graph_phase, role_of, tensor_phase)
from hlodiff.dumps.tensors_report import IrNode, LiveTensor
from hlodiff.hlo.model import SourceFrame

SITE = "/usr/lib/python3.11/site-packages"
USER = SourceFrame("/home/user/project/train.py", 12, "<module>")


def tensor(*frames: SourceFrame, ops=("aten::mm",), root_located=True) -> LiveTensor:
    """A report entry; its root node has a location when traced with source lines (the frames' innermost)."""
    last = len(ops) - 1
    ir = tuple(IrNode(i, "f32[4]", op, (), frames[0] if frames and root_located and i == last else None, i == last,
                      None) for i, op in enumerate(ops))
    return LiveTensor(7, "f32[4]{0}", "CPU:0", len(ops), tuple(frames), ir)


# what each row means in a real program (the rows must not drift from what they are for)
MEANING = {
    (FORWARD, BACKWARD): "activation",
    (BACKWARD, BACKWARD): "gradient",
    (FORWARD, OPTIMIZER): "activation",
    (BACKWARD, OPTIMIZER): "gradient",
    (OPTIMIZER, FORWARD): "parameter",
    (OPTIMIZER, BACKWARD): "parameter",
    (OPTIMIZER, OPTIMIZER): "optimizer_state",
    (FORWARD, FORWARD): "other",
}


@pytest.mark.parametrize("row", ROLE_RULES, ids=lambda r: f"{r[0]}->{r[1]}")
def test_each_role_rule(row):
    made_in, read_in, role = row
    assert MEANING[(made_in, read_in)] == role
    assert role_of(made_in, read_in) == role


def test_every_rule_is_covered():
    assert {(a, b) for a, b, _ in ROLE_RULES} == set(MEANING)


def test_optimizer_output_a_forward_also_reads_is_a_parameter():
    """The weights SGD wrote cross into the next optimizer step too; that step is not what makes them state."""
    assert role_of(OPTIMIZER, OPTIMIZER, read_by_model=True) == "parameter"
    assert role_of(OPTIMIZER, OPTIMIZER, read_by_model=False) == "optimizer_state"


def test_an_optimizer_output_an_nn_parameter_held_is_a_parameter():
    """A whole step in one graph (the forward cut off by `.item()` before it) reads the weights and the momenta
    alike, as an optimizer graph: the weights are told apart by the ids `nn.Parameter` objects held (record's
    `params=`); what no parameter held, read by the optimizer alone, stays state (review F8)."""
    assert role_of(OPTIMIZER, OPTIMIZER, is_parameter=True) == "parameter"
    assert role_of(OPTIMIZER, OPTIMIZER, is_parameter=False) == "optimizer_state"


def test_a_pair_no_row_names_is_other():
    assert role_of(BACKWARD, FORWARD) == "other"
    assert role_of(OPTIMIZER, None) == "other"


@pytest.mark.parametrize("row", PHASE_FRAMES, ids=lambda r: f"{r[0]}{r[1] or ''}")
def test_each_phase_frame_rule(row):
    marker, function, phase = row
    frame = SourceFrame(f"{SITE}{marker}{'' if marker.endswith('.py') else 'x.py'}", 10, function or "step")
    assert tensor_phase(tensor(frame, USER)) == phase


def test_custom_autograd_function_forward_is_not_a_backward():
    """A custom autograd.Function's forward runs through torch/autograd/function.py: still the forward."""
    frame = SourceFrame(f"{SITE}/torch/autograd/function.py", 575, "apply")
    assert tensor_phase(tensor(frame, USER)) == FORWARD


def test_phase_without_frames():
    assert tensor_phase(tensor(ops=("xla::device_data", "aten::threshold_backward"))) == BACKWARD
    assert tensor_phase(tensor(ops=("aten::mm",))) is None


def test_frames_of_an_older_node_do_not_make_a_forward():
    """Traced without lines, the root has no location and the frames printed are an older node's: no phase."""
    assert tensor_phase(tensor(USER, root_located=False)) is None
    optimizer = SourceFrame(f"{SITE}/torch/optim/sgd.py", 90, "_single_tensor_sgd")
    assert tensor_phase(tensor(optimizer, USER, root_located=False)) == OPTIMIZER


def test_graph_phase_is_the_latest():
    forward = tensor(USER)
    backward = tensor(SourceFrame(f"{SITE}/torch/_tensor.py", 625, "backward"), USER)
    assert graph_phase([forward, backward]) == BACKWARD
    assert graph_phase([forward]) == FORWARD
    assert graph_phase([tensor()]) is None


@pytest.mark.parametrize("read_in", [BACKWARD, OPTIMIZER, FORWARD])
def test_what_a_forward_of_untrained_weights_hands_on_is_data(read_in):
    """FROZEN_FORWARD_ROLE: a teacher under no_grad synced apart (cost round 3): no gradient reaches its graph."""
    assert role_of(FORWARD, read_in, from_frozen=True) == FROZEN_FORWARD_ROLE == "other"


def test_only_a_forward_is_frozen():
    assert role_of(OPTIMIZER, FORWARD, from_frozen=True) == "parameter"
    assert role_of(BACKWARD, OPTIMIZER, from_frozen=True) == "gradient"


@pytest.mark.parametrize("weights_read, params_seen, frozen", [
    # the teacher (graph 0) reads weights 1-4, kept by every later report; the student's 5-8 get new ids
    ({0: {1, 2}, 2: {1, 2}}, [(0, {1, 2, 5}), (1, {1, 2, 50}), (2, {1, 2, 50}), (3, {1, 2, 96})], {0, 2}),
    # a forward of trained weights (xla_fwd_bwd_split): its weights get new ids at the step's optimizer
    ({0: {1, 2}, 2: {60, 61}}, [(0, {1, 2}), (1, {60, 61}), (2, {60, 61}), (3, {130, 131})], set()),
    # no weight changes anywhere (no training run): nothing is said
    ({0: {1, 2}}, [(0, {1, 2}), (1, {1, 2})], set()),
    # the run's last report: no later report to show its weights kept
    ({3: {1, 2}}, [(0, {1, 2, 5}), (1, {1, 2, 50}), (3, {1, 2, 96})], set()),
])
def test_a_graph_is_frozen_when_every_later_report_keeps_the_weights_it_read(weights_read, params_seen, frozen):
    assert frozen_graphs(weights_read, params_seen) == frozen


def test_the_teacher_capture_has_no_held_activations_and_the_split_forward_still_has():
    cost = FIXTURES / "scenarios" / "cost"
    teacher = cli_json("cost", str(cost / "xla_teacher_sync_control" / "record"), codes=(0,))
    assert teacher["headline"] is None
    assert {t["role"] for b in teacher["boundaries"] if b["from_phase"] == "forward" for t in b["tensors"]} == {"other"}
    split = cli_json("cost", str(cost / "xla_fwd_bwd_split" / "record"), codes=(0,))
    assert (split["headline"]["kind"], split["headline"]["role"]) == ("held_across_graphs", "activation")
