"""hlodiff.dumps side inputs: live-tensor reports and PT_XLA_DEBUG logs, read from real torch_xla 2.9 output.

Inputs: the committed fixtures (fixtures/torch_xla/<scenario>/tensors_report.txt and pt_xla_debug.log, see
fixtures/README.md) and the samples in tests/data/dumps/ (tests/data/dumps/make_samples.py): a report without
XLA_IR_DEBUG, a report with multi-output nodes, and a PT_XLA_DEBUG_LEVEL=2 log captured from a terminal.
"""

from __future__ import annotations

import re

import gzip
from pathlib import Path

import pytest

from helpers import truth_of
from hlodiff.dumps import iter_graphs
from hlodiff.dumps.debug_log import CompilationEvent, ExecutionEvent, iter_debug_events, parse_debug_log, \
    read_compilations
from hlodiff.dumps.tensors_report import IrOperand, parse_ir_node, parse_reports, read_reports
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.model import SourceFrame

from conftest import FIXTURES

DATA = Path(__file__).resolve().parent / "data" / "dumps"
TORCH = FIXTURES / "torch_xla"
SCENARIOS = sorted(p.parent.name for p in TORCH.glob("*/tensors_report.txt")) if TORCH.is_dir() else []
SYNC_FRAME = SourceFrame("/usr/lib/python3.11/site-packages/torch_xla/torch_xla.py", 87, "sync")


def scenario_file(scenario: str, name: str) -> Path:
    path = TORCH / scenario / name
    if not path.is_file():
        pytest.skip(f"fixture {path} not present")
    return path


# ---------------------------------------------------------------------------------------------------------------
# live-tensor reports
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario", SCENARIOS)
def test_reports_follow_the_sync_separators(scenario):
    warnings: list[InputWarning] = []
    reports = read_reports(scenario_file(scenario, "tensors_report.txt"), warnings)
    entries = {e["entry"]: e for e in truth_of(TORCH / scenario)["entries"]}
    assert warnings == []
    # One report per entry, except entries torch_xla writes without the script printing a report first (mask_index:
    # the early graph's entry is written again inside the sync); each report names its entry's step and trigger.
    assert [r.sync for r in reports] == sorted(r.sync for r in reports) and all(r.sync in entries for r in reports)
    assert [(r.get("step"), r.get("trigger")) for r in reports] == [
        (str(entries[r.sync]["step"]), entries[r.sync]["trigger"]) for r in reports]
    assert {str(e["step"]) for e in entries.values()} == {r.get("step") for r in reports}  # every step reported


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_report_tensors_are_consistent(scenario):
    path = scenario_file(scenario, "tensors_report.txt")
    data = path.read_bytes()  # long_run stores it gzipped, as a user may: the reader goes by content
    lines = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode().splitlines()
    reports = read_reports(path)
    assert any(report.tensors for report in reports)  # a sync with nothing pending prints an empty report (fsdp)
    for report in reports:
        for t in report.tensors:
            # SPMD runs (spmd_warmup) name the virtual device SPMD:0
            assert lines[t.line - 1].startswith(f"Tensor: id={t.id}, shape={t.shape_text}, device={t.device},")
            assert t.device in ("CPU:0", "SPMD:0") and t.ir_nodes == len(t.ir) >= 1
            assert [n.index for n in t.ir] == list(range(len(t.ir)))
            assert all(o.node < n.index for n in t.ir for o in n.operands)  # post order
            assert t.roots() and t.roots()[-1] is t.ir[-1] and t.ir[-1].root_index == 0
            assert all(n.attr("xla_shape") for n in t.ir)
            if not t.frames:  # data torch_xla holds with no Python frame at all (look_rnn_carry: the carried state)
                assert len(t.ir) == 1 and t.ir[0].op == "xla::device_data" and t.ir[0].location is None
                continue
            if t.frames[0].function.endswith("_backward"):  # written by an autograd formula: no Python caller
                assert all(f.is_library for f in t.frames)
                continue
            assert t.frames[-1].function == "<module>"
            assert t.frames[-1].file == f"/home/user/project/{scenario}.py"
    # with XLA_IR_DEBUG, nodes carry the user line that made them; backward nodes (traced on the autograd
    # thread, no Python frame) have none
    nodes = [n for r in read_reports(path) for t in r.tensors for n in t.ir]
    assert all(n.location.file == f"{scenario}.py" for n in nodes if n.location and n.op == "xla::device_data"
               and n.location.function == "<module>")
    backward = [n for n in nodes if n.op.endswith("_backward")]
    if scenario in ("steady", "slice_index", "batch_shape", "metric_even_steps", "dtype_zeros_like", "item_partial",
                    "lr_constant"):  # these train with mse_loss / cross_entropy, whose backward ops are named so
        assert backward
    assert all(n.location is None for n in backward)


def test_report_frames_point_at_the_user_line():
    """lr_constant: the updated parameters' Frames: name the opt.step() line, the recompile's user_line."""
    facts = truth_of(TORCH / "lr_constant")
    reports = read_reports(scenario_file("lr_constant", "tensors_report.txt"))
    lines = {f.line for t in reports[1].tensors for f in t.frames if f.file.endswith("lr_constant.py")}
    assert facts["user_line"] in lines


def test_report_of_a_value_access_holds_only_the_forward():
    reports = read_reports(scenario_file("item_partial", "tensors_report.txt"))
    item = reports[3]
    assert item.get("trigger") == "item" and len(item.tensors) < len(reports[2].tensors)
    ops = {n.op for t in item.tensors for n in t.ir}
    assert "xla::device_data" in ops and "aten::mm" in ops or "aten::addmm" in ops


def test_report_without_ir_debug_has_no_frames_or_locations():
    warnings: list[InputWarning] = []
    reports = read_reports(DATA / "report_no_ir_debug.txt", warnings)
    assert warnings == []
    assert [r.sync for r in reports] == [2, 3] and reports[0].info == ()
    tensors = [t for r in reports for t in r.tensors]
    assert tensors and all(t.frames == () for t in tensors)
    assert all(n.location is None for t in tensors for n in t.ir)
    last = reports[0].tensors[-1].ir[-1]
    assert (last.op, last.is_root, last.root_index, last.attrs) == ("aten::mul", True, 0, (("xla_shape", "f32[1]{0}"),))


def test_bare_report_with_multi_output_nodes():
    [report] = read_reports(DATA / "report_multi_output.txt")
    assert report.sync is None and report.info == ()
    nodes = {n.op: n for t in report.tensors for n in t.ir}
    max_node = nodes["aten::max"]
    assert max_node.shape_text == "(f32[3]{0}, s64[3]{0})"
    assert max_node.attr("num_outputs") == "2" and max_node.attr("xla_shape") == "(f32[3]{0}, s64[3]{0})"
    assert max_node.location == SourceFrame("sample.py", 5, "<module>")
    cast = nodes["xla::cast"]
    assert cast.operands == (IrOperand(max_node.index, 1),) and str(cast.operands[0]) == f"%{max_node.index}.1"
    mul = next(n for t in report.tensors for n in t.ir if n.op == "aten::mul" and n.attr("scope"))
    assert IrOperand(max_node.index, 0) in mul.operands
    lam = next(t for t in report.tensors if any(f.function == "<lambda>" for f in t.frames))
    assert lam.frames[0] == SourceFrame("/home/user/project/sample.py", 8, "<lambda>")


def test_parse_ir_node_rules():
    node = parse_ir_node("  %3 = f32[2]{0} aten::mul(%1, %2.1), dims=(0, 1), location=f@x.py:5, ROOT=2")
    assert node.operands == (IrOperand(1), IrOperand(2, 1))
    assert node.attrs == (("dims", "(0, 1)"),)
    assert (node.location, node.is_root, node.root_index) == (SourceFrame("x.py", 5, "f"), True, 2)
    assert parse_ir_node("  %0 = s64[] xla::device_data()").operands == ()
    for bad in ("  %0 s64[] op()", "  %1 = f32[] aten::neg(%x)", "  %1 = f32[] aten::neg(%0", "  %1 = (f32[] op()"):
        with pytest.raises(ValueError):
            parse_ir_node(bad)


def test_report_cut_off_mid_tensor(tmp_path):
    src = scenario_file("steady", "tensors_report.txt")
    text = src.read_text()
    cut = text.index("IR {", text.index("## SYNC 4")) + 200
    path = tmp_path / "tensors_report.txt"
    path.write_text(text[:cut])
    warnings: list[InputWarning] = []
    reports = read_reports(path, warnings)
    full = read_reports(src)
    assert reports[:4] == full[:4]
    assert reports[4].sync == 4 and reports[4].tensors == full[4].tensors[: len(reports[4].tensors)]
    [w] = warnings
    assert w.message.endswith("cut off at end of file; skipped") and w.path == str(path)
    assert text.splitlines()[w.line - 1].startswith("Tensor: id=")


def test_report_foreign_lines_are_silent_and_bad_node_lines_are_skipped(tmp_path):
    src = scenario_file("steady", "tensors_report.txt")
    lines = src.read_text().splitlines(keepends=True)
    sync1 = next(i for i, line in enumerate(lines) if line.startswith("## SYNC 1"))
    node = next(i for i in range(sync1, len(lines)) if lines[i].startswith("  %3 = "))
    lines[node] = lines[node].replace("%3 = ", "%3 == ")  # one unreadable node: its tensor is dropped
    lines.insert(sync1, "some unrelated print\n")
    path = tmp_path / "report.txt"
    path.write_text("".join(lines))
    warnings: list[InputWarning] = []
    reports = read_reports(path, warnings)
    full = read_reports(src)
    assert [w.message for w in warnings] == [  # the program's own print is not a warning
        f"unreadable IR node in tensor id={_tensor_at(lines, node)} (expected '%N = '); tensor skipped"]
    assert len(reports[1].tensors) == len(full[1].tensors) - 1
    assert reports[2:] == full[2:]


def _tensor_at(lines: list[str], index: int) -> int:
    header = next(lines[i] for i in range(index, -1, -1) if lines[i].startswith("Tensor: id="))
    return int(header.split("id=")[1].split(",")[0])


def test_gzip_report(tmp_path):
    src = scenario_file("batch_shape", "tensors_report.txt")
    path = tmp_path / "tensors_report.txt.gz"
    path.write_bytes(gzip.compress(src.read_bytes()))
    assert read_reports(path) == read_reports(src)


def test_parse_reports_from_a_string():
    src = DATA / "report_multi_output.txt"
    assert parse_reports(src.read_text(), path=str(src)) == read_reports(src)


def test_report_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(HlodiffError, match="empty file"):
        read_reports(empty)
    graphs = scenario_file("steady", "graphs.hlo.0")
    with pytest.raises(HlodiffError) as info:
        read_reports(graphs)
    assert (info.value.path, info.value.line) == (str(graphs), 1)
    assert "not a live-tensor report" in info.value.message
    with pytest.raises(HlodiffError, match="no such file"):
        read_reports(tmp_path / "missing.txt")


# ---------------------------------------------------------------------------------------------------------------
# PT_XLA_DEBUG logs
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario", SCENARIOS)
def test_debug_log_compilations_match_truth(scenario):
    warnings: list[InputWarning] = []
    events = list(iter_debug_events(scenario_file(scenario, "pt_xla_debug.log"), warnings))
    facts = truth_of(TORCH / scenario)
    assert warnings == []
    assert all(isinstance(e, CompilationEvent) for e in events)  # level 1: compilations only
    compiled = [facts["entries"][i] for i in facts["compilations"]]
    assert [e.graph_hash for e in events] == [c["graph_hash"] for c in compiled]
    for event, entry in zip(events, compiled):
        user = event.frames[-1]
        assert (user.file, user.function) == (f"/home/user/project/{scenario}.py", "<module>")
        if entry["trigger"] == "sync":  # topk_k syncs through torch_xla.compile, which torch_xla names so
            assert event.cause in ("user torch_xla.sync", "torch_xla.compile") and event.frames[0] == SYNC_FRAME
        else:
            assert event.cause == "most likely user code trying to access tensor value before torch_xla.sync"
            # .item() leaves only the user's frame; print(tensor) also torch's own _tensor_str.py frames
            assert all(f.is_library for f in event.frames[:-1])
        assert event.num_inputs > 0 and event.num_outputs > 0 and not event.frames_truncated
        # torch_xla prints hashes without zero padding: 31 hex digits happen (see the dtype_input fixture)
        assert re.fullmatch(r"[0-9a-f]{28,32}", event.computation_hash) and event.computation_hash != event.graph_hash
        assert set(event.post_compilation) == {"Graph input size", "Graph output size", "Aliased Input size",
                                               "Intermediate tensor size", "Compiled program size"}
        assert 0.0 <= event.size_gb("Graph output size") < 0.001 and event.size_gb("nope") is None


def test_debug_log_links_to_the_save_file():
    for scenario in SCENARIOS:
        hashes = {r.graph_hash: r for r in iter_graphs(scenario_file(scenario, "graphs.hlo.0"))}
        for event in read_compilations(scenario_file(scenario, "pt_xla_debug.log")):
            assert len(hashes[event.graph_hash].root_hashes) == event.num_outputs


def test_level2_terminal_log():
    """Level 2 adds executions (cache hits included); stdout prints interleave; frames stop after 3."""
    warnings: list[InputWarning] = []
    events = list(iter_debug_events(DATA / "pt_xla_debug_level2_terminal.log", warnings))
    assert warnings == []
    kinds = [type(e).__name__[0] for e in events]
    assert kinds == ["C", "E"] * 6
    for compile_, execute in zip(events[::2], events[1::2]):
        assert (compile_.graph_hash, compile_.graph_name, compile_.cause) == \
               (execute.graph_hash, execute.graph_name, execute.cause)
        assert isinstance(execute, ExecutionEvent) and not execute.unexpected
    assert [e.graph_name for e in events[::2]] == [None, "train_step_clear_pending", "train_step"] * 2
    assert events[2].cause == "torch_xla.compile clear the pending graph prior calling the target function"
    assert events[4].cause == "torch_xla.compile"
    assert events[2].frames_truncated and len(events[2].frames) == 3
    assert events[0].frames == (SourceFrame("/home/user/project/sample.py", 18, "<module>"),)
    assert not events[0].frames_truncated
    named = {r.graph_hash: r.graph_name for r in iter_graphs(DATA / "named_graphs.hlo.0")}
    assert all(named[e.graph_hash] == e.graph_name for e in events)


def test_debug_log_cut_off(tmp_path):
    src = DATA / "pt_xla_debug_level2_terminal.log"
    text = src.read_text()
    cut = text.index("Number of Graph Inputs", text.index("train_step\n"))
    path = tmp_path / "debug.log"
    path.write_text(text[:cut])
    warnings: list[InputWarning] = []
    events = list(iter_debug_events(path, warnings))
    assert events == list(iter_debug_events(src))[:4]
    [w] = warnings
    assert w.message == "Compilation Analysis: block cut off at end of file; skipped"
    assert text.splitlines()[w.line - 1].startswith("Compilation Analysis: ====")


def test_parse_debug_log_from_captured_text():
    src = scenario_file("item_partial", "pt_xla_debug.log")
    assert parse_debug_log(src.read_text(), path=str(src)) == list(iter_debug_events(src))


def test_debug_log_errors(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    with pytest.raises(HlodiffError, match="empty file"):
        list(iter_debug_events(empty))
    report = scenario_file("steady", "tensors_report.txt")
    with pytest.raises(HlodiffError, match=r"no PT_XLA_DEBUG analysis found") as info:
        list(iter_debug_events(report))
    assert (info.value.path, info.value.line) == (str(report), 1)


def _one_node_report(node: str) -> str:
    return (f"## SYNC 0\nTensor: id=7, shape=f32[], device=CPU:0, ir_nodes=1\nIR {{\n  %0 = f32[] {node}, "
            "xla_shape=f32[], ROOT=0\n}\n\n\n")


@pytest.mark.parametrize("node, pending", [
    ("prim::Constant()", True),          # cross_entropy's total weight: an output of the coming graph
    ("xla::device_data()", False),       # computed data read as it is: no output
])
def test_a_tensor_of_one_ir_node_is_pending_unless_it_is_bare_device_data(node, pending):
    """torch_xla makes every live tensor that is not bare device data an output, a one-node constant too: counted
    as data, the forward graph's report of cost/xla_loss_log_sync had one output fewer than its graph and was not
    aligned, so nothing crossing out of it was named."""
    (report,) = parse_reports(_one_node_report(node))
    assert [t.id for t in report.pending()] == ([7] if pending else [])
    assert report.tensors[0].is_device_data is (not pending)
