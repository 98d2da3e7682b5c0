"""Crossings, cost and live, round 9 (docs/accuracy.md): the rule it added, on the real capture it was wrong on, on
rows of the rule, and on the look-alikes that share its evidence.

* ``round_trip`` on ``read_in_step`` (``hlodiff/cost/round_trips.py``): a value read inside the step that comes back
  to the device at the same line (bare device data made there, of a shape the read graph outputs) and is read by a
  later graph is state carried through the host (``torch.from_numpy(h.cpu().numpy()).to(dev)``): keep it on the
  device (``detach()``), not "read it after the sync" or in a step closure."""

from __future__ import annotations

import pytest

from helpers import cli_json, cost_scenario
from hlodiff.cost.model import GraphCost, Tally
from hlodiff.cost.round_trips import round_trip_reads
from hlodiff.dumps.tensors_report import parse_reports
from hlodiff.hlo.model import SourceFrame





def test_a_state_detached_through_the_host_is_told_to_stay_on_the_device():
    """x9c_hidden_host_detach: the first try said "read the value after the step's sync, or in
    xm.add_step_closure": the state is needed by the next step's graph, not by a log."""
    head = cost_scenario("x9c_hidden_host_detach")["headline"]
    assert (head["kind"], head["location"]["line"], head["round_trip"]) == ("read_in_step", 26, True)
    assert "detach()" in head["fix"] and "add_step_closure" not in head["fix"]
    assert "comes back to the device" in head["summary"]


@pytest.mark.parametrize("name", ["xla_cpu_metric_mid_step", "xla_host_momentum", "x5c_adam_state_host",
                                  "x7c_lars_trust_if", "rev10_tx_item_mid_cost"])
def test_reads_that_stay_on_the_host_keep_their_fix(name):
    head = cost_scenario(name)["headline"]
    assert head["kind"] in ("read_in_step", "held_across_graphs") and not head.get("round_trip")


def test_the_state_kept_on_the_device_is_no_finding():
    assert cost_scenario("x9c_hidden_detach_control")["headline"] is None


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


# -- live: the leftovers of the eleventh stop ------------------------------------------------------------------------

def _told(case_id: str) -> list[str]:
    from live_replay import replay_case

    return [(e.told.fix or "") for e in replay_case(case_id) if e.told is not None]


def test_a_size_of_a_symbolic_graph_waits_while_dynamos_log_may_name_a_guard():
    """d24_prompt_pool_grow: the bridge's graph of the new prompt count came before Dynamo's log said
    `..._size == 1` failed, and live told "traced forward once with a symbolic size ... pad to buckets"."""
    fixes = _told("dynamo/d24_prompt_pool_grow")
    assert not any("buckets" in f for f in fixes)
    assert any("_size" in f for f in fixes)


def test_a_bridge_graph_known_by_its_ops_follows_from_dynamo_with_its_log():
    """d24_seed_in_forward (e-nolog, a Dynamo log): the resume function's graphs, the bridge's own at exit, were
    told live as "drop `dtype=`"."""
    assert not any("dtype=" in f for f in _told("dynamo/d24_seed_in_forward"))


@pytest.mark.parametrize("case_id", ["dynamo/d26_loss_cfg_rebuilt_control", "dynamo/d21_reseed_control"])
def test_a_bridge_known_by_its_ops_from_its_first_compilation_keeps_the_warm_up_quiet(case_id):
    from live_replay import replay_case, score_live

    loud = [e for e in replay_case(case_id) if score_live().shouted(e)]
    assert not loud


def test_a_tail_then_full_batches_is_no_bucket_live():
    """r26_tx_selfpaced_tail: one epoch's tail of 8, then 16 again, was told live "2 sizes that recur (16, 8) ...
    nothing to fix"."""
    assert not any("nothing to fix" in f for f in _told("torch_xla/r26_tx_selfpaced_tail"))


def test_full_batches_after_a_short_one_are_seen_by_dynamos_live_story():
    """lead47_d_filtered_batch (8, 8, 7, 8, 8): live said "the last batch is short" at the end of the run."""
    assert not any("last batch" in f for f in _told("dynamo/lead47_d_filtered_batch"))


@pytest.mark.parametrize("text, frames, bridge", [
    ('%a = f32[2] add(), metadata={source_file="/env/torch_xla/_dynamo/dynamo_bridge.py" source_line=3}', (), True),
    ('%a = f32[2] add(), metadata={source_file="/env/torch/_ops.py" source_line=3}\n'
     '%b = f32[2] mul(), metadata={source_file="/env/torch/_ops.py" source_line=9}', (), True),
    ('%a = f32[2] add(), metadata={source_file="/env/torch/_ops.py" source_line=3}\n'
     '%b = f32[2] mul(), metadata={source_file="/home/u/train.py" source_line=9}', (), False),   # the user's code
    ('%a = f32[2] add()', (), False),                                                             # no metadata
    ('%a = f32[2] add(), metadata={source_file="/env/torch_xla/_dynamo/x.py" source_line=3}', (READ,), False),  # a stack
])
def test_bridge_text_rows(text, frames, bridge):
    from types import SimpleNamespace

    from hlodiff.explain.dynamo_bridge import bridge_text

    assert bridge_text(SimpleNamespace(frames=frames), text) is bridge
