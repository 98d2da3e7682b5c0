"""Crossings, cost and live, round 9 (docs/accuracy.md): the rule it added, on the real capture it was wrong on, on
rows of the rule, and on the look-alikes that share its evidence.

* ``round_trip`` on ``read_in_step`` (``hlodiff/cost/round_trips.py``): a value read inside the step that comes back
  to the device at the same line (bare device data made there, of a shape the read graph outputs) and is read by a
  later graph is state carried through the host (``torch.from_numpy(h.cpu().numpy()).to(dev)``): keep it on the
  device (``detach()``), not "read it after the sync" or in a step closure."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.cost.model import GraphCost, Tally
from hlodiff.cost.round_trips import round_trip_reads
from hlodiff.dumps.tensors_report import parse_reports
from hlodiff.hlo.model import SourceFrame

COST = FIXTURES / "scenarios" / "cost"


def _cost(name: str) -> dict:
    folder = COST / name
    argv = ([str(folder / "record")] if (folder / "record").is_dir()
            else [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")])
    return cli_json("cost", *argv, codes=(0,))


def test_a_state_detached_through_the_host_is_told_to_stay_on_the_device():
    """x9c_hidden_host_detach: the first try said "read the value after the step's sync, or in
    xm.add_step_closure": the state is needed by the next step's graph, not by a log."""
    head = _cost("x9c_hidden_host_detach")["headline"]
    assert (head["kind"], head["location"]["line"], head["round_trip"]) == ("read_in_step", 26, True)
    assert "detach()" in head["fix"] and "add_step_closure" not in head["fix"]
    assert "comes back to the device" in head["summary"]


@pytest.mark.parametrize("name", ["xla_cpu_metric_mid_step", "xla_host_momentum", "x5c_adam_state_host",
                                  "x7c_lars_trust_if", "rev10_tx_item_mid_cost"])
def test_reads_that_stay_on_the_host_keep_their_fix(name):
    head = _cost(name)["headline"]
    assert head["kind"] in ("read_in_step", "held_across_graphs") and not head.get("round_trip")


def test_the_state_kept_on_the_device_is_no_finding():
    assert _cost("x9c_hidden_detach_control")["headline"] is None


# -- rows of the rule, on reports written by hand --------------------------------------------------------------------

READ = SourceFrame("/p/train.py", 26, "<module>")


def _read_graph(shapes=("f32[32,256]",), trigger=READ, call="read") -> GraphCost:
    return GraphCost(ref="r#0", index=0, name="SyncTensorsGraph.1", instructions=10, parameters=Tally(1, 4),
                     outputs=Tally(1, 4), aliased_bytes=0, peak_bytes=8, peak_source="estimate",
                     estimated_peak_bytes=8, trigger=trigger, sync_call=call, output_shapes=list(shapes))


def _report(sync: int, tid: int, line: int = 26, shape: str = "f32[32,256]", reads: str | None = None) -> str:
    head = f"## SYNC {sync} trigger=sync" + (f" reads={reads}" if reads is not None else "")
    return (f"{head}\nTensor: id={tid}, shape={shape}{{1,0}}, device=CPU:0, ir_nodes=1\nFrames:\n"
            f"  <module> (/p/train.py:{line})\nIR {{\n  %0 = {shape}{{1,0}} xla::device_data(), "
            f"location=<module>@train.py:{line}, xla_shape={shape}{{1,0}}, ROOT=0\n}}\n\n")


@pytest.mark.parametrize("text, graph, found", [
    (_report(1, 299, reads="1,2") + _report(3, 1009, reads="299"), _read_graph(), True),   # read by the next step
    (_report(1, 299) + _report(3, 1009), _read_graph(), True),                              # no reads=: listed
    (_report(1, 299, reads="1,2") + _report(3, 1009, reads="5"), _read_graph(), False),    # never read again
    (_report(1, 299, line=40, reads="1") + _report(3, 7, line=99, reads="299"), _read_graph(), False),  # uploaded elsewhere
    (_report(1, 299, shape="f32[10]", reads="1") + _report(3, 7, line=99, reads="299"), _read_graph(), False),  # other shape
    (_report(1, 299, reads="1") + _report(3, 7, line=99, reads="299"), _read_graph(call="sync"), False),  # not a read
])
def test_round_trip_rows(text, graph, found):
    assert (round_trip_reads([graph], parse_reports(text)) == {"r#0"}) is found
