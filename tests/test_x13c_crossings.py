"""Crossings, cost and live, round 13 (docs/accuracy.md): the two rules it added, on the real captures they were
wrong on, on rows of each rule, and on the look-alikes that share their evidence.

* ``baked_constant`` (``hlodiff/cost/constants.py``): a literal of 1 MiB or more with no metadata of its own in a
  JAX program, an array the jitted function read through its closure: pass it as an argument.
* ``sent_back`` from the pending IR (``hlodiff/cost/round_trips.py``): gradients moved to the CPU for a clip by hand
  and assigned back (``p.grad = g.to(dev)``) are gone as tensors by the sync; only the optimizer's pending update
  still reads them, as ``xla::device_data`` leaves at the upload's line. A read inside a list comprehension
  (``<listcomp>``, Python 3.11) compares lines in the function around it."""

from __future__ import annotations

import pytest

from helpers import cost_scenario
from hlodiff.cost.constants import BAKED_BYTES, baked_constants
from hlodiff.cost.headline import cost_headline
from hlodiff.cost.model import GraphCost, RunCost, Tally
from hlodiff.cost.round_trips import sent_back_reads, upload_files
from hlodiff.cost.source import SourceLocator
from hlodiff.dumps.line_buffer import _root_lines
from hlodiff.dumps.tensors_report import iter_reports, parse_reports
from hlodiff.hlo.model import SourceFrame
from hlodiff.hlo.parser import parse_module


# -- on the captures ---------------------------------------------------------------------------------------------------

def test_a_numpy_array_read_through_the_closure_is_told_to_be_an_argument():
    """x13c_jx_closure_const: no headline at the first try (cost had no finding for a literal)."""
    head = cost_scenario("x13c_jx_closure_const")["headline"]
    assert (head["kind"], head["location"]["line"], head["shapes"]) == ("baked_constant", 17, ["f32[1024,1024]"])
    assert "argument" in head["fix"] and "donat" not in head["fix"] and head["bytes"] == 4 << 20


def test_gradients_clipped_on_the_host_are_told_to_be_clipped_on_the_device():
    """x13c_grads_cpu_clip: the first try told "read the value after the step's sync, or in xm.add_step_closure",
    which cannot work: this step's opt.step() needs the clipped gradients (confident wrong)."""
    head = cost_scenario("x13c_grads_cpu_clip")["headline"]
    assert (head["kind"], head["location"]["line"], head["sent_back"], head["reads"]) == ("read_in_step", 21, True, 4)
    assert "on the device" in head["fix"] and "clip_grad_norm_" in head["fix"] and "add_step_closure" not in head["fix"]
    assert head["summary"].startswith("4 values read at x13c_grads_cpu_clip.py:21")


@pytest.mark.parametrize("name", ["x13c_host_list_tensor_control", "x13c_jx_debug_callback_control",
                                  "x9c_scan_closure_table_control", "jax_train_state_control"])
def test_the_look_alikes_stay_quiet(name):
    assert cost_scenario(name)["headline"] is None


@pytest.mark.parametrize("name", ["xla_cpu_metric_mid_step", "xla_host_momentum", "x5c_adam_state_host",
                                  "x12c_microbatch_loss_cpu", "x11c_loss_every4_mid", "xla_item_mid_step"])
def test_reads_nothing_is_sent_back_from_keep_their_fix(name):
    head = cost_scenario(name)["headline"]
    assert head["kind"] in ("read_in_step", "held_across_graphs") and not head.get("sent_back")


# -- baked_constant, rows on modules written by hand -------------------------------------------------------------------

def _module(name: str, const_meta: str, dims: str) -> str:
    return f"""HloModule {name}

ENTRY %main (x.1: f32[64,{dims.split(',')[0]}]) -> f32[64,{dims.split(',')[1]}] {{
  %x.1 = f32[64,{dims.split(',')[0]}]{{1,0}} parameter(0)
  %constant.5 = f32[{dims}]{{1,0}} constant({{...}}){const_meta}
  ROOT %dot.1 = f32[64,{dims.split(',')[1]}]{{1,0}} dot(%x.1, %constant.5), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(f)/dot_general" source_file="/p/f.py" source_line=17}}
}}
"""


@pytest.mark.parametrize("text, found", [
    (_module("jit_f", "", "1024,1024"), True),                                      # 4 MiB, no metadata: found
    (_module("jit_f", "", "512,256"), False),                                       # 512 KiB: below the size
    (_module("jit_f", ', metadata={op_name="jit(f)/mul" source_file="/p/f.py" source_line=9}', "1024,1024"), False),
    # a literal XLA folded from the user's ops keeps their metadata: not the closure's
])
def test_baked_constant_rows(text, found):
    module = parse_module(text)
    got = baked_constants(module, SourceLocator(module))
    assert bool(got) is found
    if found:
        assert (got[0].shape, got[0].bytes, got[0].location.line) == ("f32[1024,1024]", 4 << 20, 17)
        assert got[0].bytes >= BAKED_BYTES


def _cost(name: str, text: str) -> GraphCost:
    module = parse_module(text)
    return GraphCost(ref=f"d#{name}", index=0, name=name, instructions=3, parameters=Tally(1, 4),
                     outputs=Tally(1, 4), aliased_bytes=0, peak_bytes=8, peak_source="estimate",
                     estimated_peak_bytes=8, baked_constants=baked_constants(module, SourceLocator(module)))


@pytest.mark.parametrize("name, kind", [("jit_f", "baked_constant"), ("SyncTensorsGraph.9", None)])
def test_only_jax_programs_are_told_a_baked_literal(name, kind):
    """torch_xla uploads tensors as device data: a literal in its graph is no closure of the user's."""
    head = cost_headline(RunCost([_cost(name, _module(name, "", "1024,1024"))]))
    assert (head.kind if head is not None else None) == kind


# -- sent_back from the pending IR's device-data leaves -----------------------------------------------------------------

READ = SourceFrame("/p/train.py", 21, "<listcomp>")
LOOP = SourceFrame("/p/train.py", 12, "<module>")
SYNC = SourceFrame("/p/train.py", 27, "<module>")


def _graph(ref: str, trigger: SourceFrame, call: str, stack: tuple = ()) -> GraphCost:
    return GraphCost(ref=ref, index=int(ref.rsplit("#", 1)[1]), name=f"SyncTensorsGraph.{ref}", instructions=10,
                     parameters=Tally(1, 4), outputs=Tally(1, 4), aliased_bytes=0, peak_bytes=8,
                     peak_source="estimate", estimated_peak_bytes=8, trigger=trigger, sync_call=call,
                     output_shapes=["f32[10]"], stack=stack or (trigger,))


def _report(line: int, shape: str = "f32[256,64]", function: str = "<module>") -> str:
    """The sync's report: the updated weight pending, reading a device-data leaf made at ``line``."""
    return ("## SYNC 4 trigger=sync reads=35,31\nTensor: id=35, shape=f32[256,64]{1,0}, device=CPU:0, ir_nodes=3\n"
            "Frames:\n  <module> (/p/train.py:26)\nIR {\n"
            f"  %0 = {shape} xla::device_data(), location={function}@train.py:{line}, xla_shape={shape}\n"
            "  %1 = f32[256,64]{1,0} xla::device_data(), location=convert@module.py:1357, xla_shape=f32[256,64]{1,0}\n"
            "  %2 = f32[256,64]{1,0} aten::add(%1, %0), location=step@sgd.py:375, xla_shape=f32[256,64]{1,0}, ROOT=0\n"
            "}\n\n")


IN_COMP = [_graph("r#0", READ, "read", (READ, SourceFrame("/p/train.py", 21, "<module>"))), _graph("r#1", SYNC, "sync")]


@pytest.mark.parametrize("text, graphs, found", [
    (_report(25), IN_COMP, True),                                   # uploaded between the read and the sync, pending
    (_report(18), IN_COMP, False),                                  # the batch, above the read
    (_report(28), IN_COMP, False),                                  # below the sync
    (_report(25, shape="f32[]"), IN_COMP, False),                   # a Python number in an op: no upload of the host's
    (_report(25, shape="f32[10]"), IN_COMP, False),                 # the read graph's own output, kept on the device
    (_report(25, function="helper"), IN_COMP, False),               # another function's line
    (_report(25), [_graph("r#0", READ, "read", (READ,)), IN_COMP[1]], False),  # no frame around the comprehension
])
def test_sent_back_from_pending_ir_rows(text, graphs, found):
    assert (sent_back_reads(graphs, parse_reports(text)) == {"r#0"}) is found


def test_reading_roots_and_data_keeps_the_leaves_the_rule_needs(tmp_path):
    path = tmp_path / "tensors_report.txt"
    path.write_text(_report(25))
    for ir, leaves in (("roots", 0), ("roots+data", 2)):
        (report,) = iter_reports(path, [], ir=ir)
        assert sum(n.op == "xla::device_data" for n in report.tensors[0].ir) == leaves
        assert [n.op for n in report.tensors[0].roots()] == ["aten::add"]
    assert sent_back_reads(IN_COMP, iter_reports(path, [], ir="roots+data")) == {"r#0"}


def test_marked_lines_come_in_order_once():
    buf = b"  %0 = a xla::device_data(), ROOT=0\n  %1 = b op()\n  %2 = c xla::device_data()\n"
    assert _root_lines(buf, 0, len(buf), (b"ROOT=", b"xla::device_data(")) == [
        b"  %0 = a xla::device_data(), ROOT=0\n", b"  %2 = c xla::device_data()\n"]
    assert _root_lines(buf, 0, len(buf)) == [b"  %0 = a xla::device_data(), ROOT=0\n"]


def test_only_the_read_files_leaves_are_kept(tmp_path):
    """A big model's pending tensors each read every parameter: the reader keeps only leaves made in the files of the
    read-and-sync windows (here train.py; module.py's convert is left out)."""
    path = tmp_path / "tensors_report.txt"
    path.write_text(_report(25))
    (report,) = iter_reports(path, [], ir="roots+data", data_files=frozenset({"train.py"}))
    assert [n.location.line for n in report.tensors[0].ir if n.op == "xla::device_data"] == [25]
    (report,) = iter_reports(path, [], ir="roots+data", data_files=frozenset({"other.py"}))
    assert [n.op for n in report.tensors[0].ir] == ["aten::add"]
    assert upload_files(IN_COMP) == {"train.py"}
