"""Crossings, cost and live, round 10 (docs/accuracy.md): the rule it added, on the real capture it was wrong on, on
rows of the rule, and on the look-alikes that share its evidence.

* ``sent_back`` on ``read_in_step`` (``hlodiff/cost/round_trips.py``): after a value read inside the step, the step
  uploads new device data (between the read's line and the sync's) that the sync's graph reads: the host worked out
  from the value what this step needs (hard examples by ``np.argsort`` of the losses), so the fix computes it on the
  device (``torch.topk``), not "read it after the sync", a step closure or ``detach()``."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json, cost_scenario
from hlodiff.cost.model import GraphCost, Tally
from hlodiff.cost.round_trips import sent_back_reads
from hlodiff.dumps.tensors_report import parse_reports
from hlodiff.hlo.model import SourceFrame





def test_hard_examples_picked_on_the_host_are_told_to_be_picked_on_the_device():
    """x10c_ohem_host_argsort: the first try said "the value read decides what is traced after it (2 different
    graphs followed the read) ... torch.where ... a fixed length": the two graphs were SGD momentum's warm-up, and
    the value read comes back as indices this step's backward needs."""
    head = cost_scenario("x10c_ohem_host_argsort")["headline"]
    assert (head["kind"], head["location"]["line"], head["sent_back"]) == ("read_in_step", 21, True)
    assert "topk" in head["fix"] and "add_step_closure" not in head["fix"] and "detach()" not in head["fix"]
    assert "comes back to the device for the same step" in head["summary"]
    assert head["followed_by"] == 1  # the first step's graph (SGD momentum's warm-up) decides nothing


def test_a_branch_taken_once_mid_run_still_decides():
    """rev10_tx_item_mid_cost: the skip branch taken at step 3 only is a second program after the read."""
    assert cost_scenario("rev10_tx_item_mid_cost")["headline"]["followed_by"] == 2


@pytest.mark.parametrize("name", ["xla_cpu_metric_mid_step", "xla_host_momentum", "x5c_adam_state_host",
                                  "x7c_lars_trust_if", "rev10_tx_item_mid_cost", "x9c_hidden_host_detach",
                                  "xla_item_mid_step"])
def test_reads_whose_value_nothing_in_the_step_takes_back_keep_their_fix(name):
    head = cost_scenario(name)["headline"]
    assert head["kind"] in ("read_in_step", "held_across_graphs") and not head.get("sent_back")


@pytest.mark.parametrize("name", ["x10c_ohem_topk_device_control", "x9c_hidden_detach_control",
                                  "xla_metric_after_sync_control"])
def test_the_selection_on_the_device_is_no_finding(name):
    assert cost_scenario(name)["headline"] is None


# -- rows of the rule, on reports written by hand --------------------------------------------------------------------

READ = SourceFrame("/p/train.py", 21, "<module>")
SYNC = SourceFrame("/p/train.py", 25, "<module>")


def _graph(ref: str, trigger: SourceFrame, call: str) -> GraphCost:
    return GraphCost(ref=ref, index=int(ref.rsplit("#", 1)[1]), name=f"SyncTensorsGraph.{ref}", instructions=10,
                     parameters=Tally(1, 4), outputs=Tally(1, 4), aliased_bytes=0, peak_bytes=8,
                     peak_source="estimate", estimated_peak_bytes=8, trigger=trigger, sync_call=call,
                     output_shapes=["f32[64]"])


def _report(tid: int, line: int, reads: str | None, file: str = "/p/train.py", shape: str = "s64[16]") -> str:
    head = "## SYNC 1 trigger=sync" + (f" reads={reads}" if reads is not None else "")
    return (f"{head}\nTensor: id={tid}, shape={shape}{{0}}, device=CPU:0, ir_nodes=1\nFrames:\n"
            f"  <module> ({file}:{line})\nIR {{\n  %0 = {shape}{{0}} xla::device_data(), "
            f"location=<module>@train.py:{line}, xla_shape={shape}{{0}}, ROOT=0\n}}\n\n")


PAIR = [_graph("r#0", READ, "read"), _graph("r#1", SYNC, "sync")]


@pytest.mark.parametrize("text, graphs, found", [
    (_report(15, 22, "1,15"), PAIR, True),                                         # uploaded between, read by the sync
    (_report(15, 18, "1,15"), PAIR, False),                                        # the batch, uploaded above the read
    (_report(15, 21, "1,15"), PAIR, False),                                        # at the read's line: a round trip
    (_report(15, 27, "1,15"), PAIR, False),                                        # below the sync: the next step's
    (_report(15, 22, "1,2"), PAIR, False),                                         # uploaded, not read by the graph
    (_report(15, 22, None), PAIR, False),                                          # no reads=: unknown who took it
    (_report(15, 22, "15", file="/p/data.py"), PAIR, False),                       # another file
    (_report(15, 22, "15"), [_graph("r#0", READ, "sync"), _graph("r#1", SYNC, "sync")], False),  # no read
    (_report(15, 22, "15"), [_graph("a#0", READ, "read"), _graph("b#0", SYNC, "sync")], False),  # two dumps
    (_report(15, 22, "15"), [_graph("r#0", SourceFrame("/p/train.py", 21, "step"), "read"), PAIR[1]], False),
    # the read in another function (an optimizer's step()): its lines and the loop's do not compare
    (_report(15, 22, "15", shape="f32[64]"), PAIR, False),                         # the value read, kept on the device
])
def test_sent_back_rows(text, graphs, found):
    assert (sent_back_reads(graphs, parse_reports(text)) == {"r#0"}) is found


# -- explain: a dtype switched at the second graph is no warm-up ------------------------------------------------------

SCEN = FIXTURES / "scenarios"


@pytest.mark.parametrize("path, pattern, code", [
    # NumPy float64 weights back from the second step on: told "warm-up only" at the first try
    ("torch_xla/x10c_tx_host_class_weights/record", "switched", 1),
    # SGD momentum's state created at the first step (inputs added): a warm-up, as before
    ("cost/x10c_ohem_topk_device_control/record", "warm-up only", 0),
    ("cost/xla_one_sync_control/record", "warm-up only", 0),
    ("cost/rev17_tx_stable_adamw/record", "warm-up only", 0),
    # float64 targets from a NumPy cache from the second epoch on: switched later, as before
    ("torch_xla/rev8_np_cache_f64/graphs.hlo.0", "switched", 1),
])
def test_a_dtype_switch_at_the_second_graph_is_named_a_switch(path, pattern, code):
    doc = cli_json("explain-recompile", str(SCEN / path), codes=(code,))
    assert doc["families"][0]["pattern"]["name"] == pattern
