"""New-user review 19, F1: `hlodiff cost` on a record of gradient accumulation with a sync after every micro-batch
said "nothing held across a sync inside the step" above a list of gradients held across those very syncs. The
hops are accumulation's own design (pytorch/xla#1367, #3593: the sync per micro-batch keeps the graph and its
memory that of one micro-batch), so there is still no finding, but the first line now names them; a mid-step sync
that holds gradients for an optimizer graph of its own keeps its finding."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json
from hlodiff.cost.accumulated import ACCUMULATED_PHASES, accumulated_gradients
from hlodiff.cost.crossings import Boundary, BoundaryTensor
from hlodiff.cost.model import RunCost

COST = FIXTURES / "scenarios" / "cost"
ACCUM = FIXTURES / "torch_xla" / "accum_sync_micro" / "record"


def test_table_rows_are_the_ones_tested():
    assert ACCUMULATED_PHASES == {("backward", "backward"), ("backward", "optimizer")}


def test_an_accumulating_record_names_its_gradients_in_the_first_line():
    out = cli("cost", str(ACCUM)).stdout
    first = out.splitlines()[0]
    assert first.startswith("first: nothing to act on: the gradients each backward graph hands the next")
    assert "nothing held across a sync" not in first and "pytorch/xla#1367" in first
    assert "gradient" in out.split("held across graph boundaries, per step", 1)[1]  # what follows agrees
    assert cli_json("cost", str(ACCUM), codes=(0,))["headline"] is None  # still no finding


def test_lookalike_a_sync_after_the_backward_keeps_its_finding():
    out = cli("cost", str(COST / "xla_sync_after_backward" / "record")).stdout
    assert "nothing to act on" not in out.splitlines()[0] and "accumulated" not in out.splitlines()[0]


def test_lookalike_a_healthy_loop_still_says_its_state_is_expected():
    first = cli("cost", str(COST / "rev15_tx_stable_item" / "record")).stdout.splitlines()[0]
    assert "model's state" in first and "accumulated" not in first


def _run(*hops):
    boundaries = [Boundary(f"d#{i}", f"d#{i + 1}", [BoundaryTensor(10 * i + k, shape, 64, role="gradient")
                                                    for k, shape in enumerate(shapes)],
                           source_phase=src, target_phase=dst) for i, (src, dst, shapes) in enumerate(hops)]
    return RunCost(graphs=[], boundaries=boundaries)


def test_backward_to_backward_gradients_the_optimizer_reads_are_accumulated():
    run = _run(("backward", "backward", ["f32[4,4]"]), ("backward", "optimizer", ["f32[4,4]"]))
    acc = accumulated_gradients(run)
    assert acc is not None and (acc.count, acc.bytes, acc.hops) == (1, 64, 2)


def test_gradients_into_the_optimizer_alone_are_no_accumulation():
    assert accumulated_gradients(_run(("backward", "optimizer", ["f32[4,4]"]))) is None


def test_a_backward_handing_a_shape_the_optimizer_never_reads_is_no_accumulation():
    # a slice of the batch computed in the first micro-batch's graph (x5c_grad_list_accum's look-alike)
    assert accumulated_gradients(_run(("backward", "backward", ["f32[8]"]),
                                      ("backward", "optimizer", ["f32[4,4]"]))) is None

