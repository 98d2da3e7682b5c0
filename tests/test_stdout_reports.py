"""Live-tensor reports as users print them (issue 8): stdout logs with the program's own lines between reports, no
``## SYNC`` headers, gzip, thresholds, cut-off runs; and their alignment with the graphs of the run.

Inputs: the real runs of fixtures/torch_xla/{grad_norm_order,autocast_late,lr_zero_one}.py, which print
``_xla_tensors_report(0, device)`` to stdout before each ``torch_xla.sync()`` (stdout.log), see fixtures/README.md.
"""

from __future__ import annotations

import gzip
import re

import pytest

from helpers import cli_json, truth_of
from hlodiff.dumps.report_alignment import GraphOutputs, align_reports, shape_key
from hlodiff.dumps.run_folder import discover
from hlodiff.dumps.tensors_report import iter_reports, parse_reports, read_reports
from hlodiff.errors import HlodiffError, InputWarning
from helpers import explained

from conftest import FIXTURES

TORCH = FIXTURES / "torch_xla"
STDOUT_SCENARIOS = ["grad_norm_order", "autocast_late", "lr_zero_one"]


def _foreign_lines(text: str) -> list[str]:
    report_line = re.compile(r"^(Tensor: id=|Frames:|IR \{|\}|  |$)")
    return [line for line in text.splitlines() if not report_line.match(line)]


@pytest.mark.parametrize("scenario", STDOUT_SCENARIOS)
def test_stdout_log_boundaries_are_found_without_headers(scenario):
    path = TORCH / scenario / "stdout.log"
    text = path.read_text()
    assert "## SYNC" not in text and _foreign_lines(text)  # the real log: no headers, the script's own lines
    warnings: list[InputWarning] = []
    reports = read_reports(path, warnings)
    assert warnings == []  # the program's prints are not warnings
    assert len(reports) == truth_of(TORCH / scenario)["steps"]  # one report printed before each sync
    assert [r.ordinal for r in reports] == list(range(len(reports)))
    lines = text.splitlines()
    for report in reports:
        assert report.sync is None and lines[report.line - 1].startswith("Tensor: id=")
        ids = [t.id for t in report.tensors]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # every tensor of the file is in exactly one report
    assert sum(len(r.tensors) for r in reports) == text.count("\nTensor: id=") + text.startswith("Tensor: id=")


def test_back_to_back_reports_split_on_blank_lines_and_on_ids():
    report = (TORCH / "lr_zero_one" / "stdout.log").read_text().split("\nlr=0.0 ")[0]
    one = report[report.index("Tensor: id="):].rstrip("\n") + "\n"
    assert len(parse_reports(one)) == 1
    # print(report) twice: three blank lines end the first; f.write(report) twice: the ids start over
    assert [len(r.tensors) for r in parse_reports(one + "\n\n\n" + one)] == [9, 9]
    assert [len(r.tensors) for r in parse_reports(one + "\n\n" + one)] == [9, 9]


def test_report_boundary_inside_foreign_text_and_hlodiff_headers_mix():
    log = (TORCH / "autocast_late" / "stdout.log").read_text()
    tagged = (TORCH / "steady" / "tensors_report.txt").read_text()
    reports = parse_reports(log + tagged)
    assert [r.sync for r in reports] == [None] * 4 + list(range(truth_of(TORCH / "steady")["steps"] + 0))


def test_threshold_report_aligns_as_a_subset_of_outputs():
    """With a threshold, small tensors are not listed: the report's tensors are a subsequence of the outputs."""
    full = read_reports(TORCH / "lr_zero_one" / "stdout.log")[1]
    shapes = tuple(shape_key(t.shape_text) for t in full.pending())
    # drop every tensor with fewer than 10 IR nodes, as _xla_tensors_report(10, dev) would
    text = (TORCH / "lr_zero_one" / "stdout.log").read_text()
    start = text.index(f"Tensor: id={full.tensors[0].id},")
    end = text.index("lr=1.0 ")
    kept = [chunk for chunk in text[start:end].split("\n\n\n") if chunk.strip()
            and int(re.search(r"ir_nodes=(\d+)", chunk).group(1)) >= 10]
    [small] = parse_reports("\n\n\n".join(kept) + "\n\n\n")
    assert 0 < len(small.pending()) < len(shapes)
    [alignment] = align_reports([small], [GraphOutputs(("run", 1), shapes)], path="log")
    assert alignment.key == ("run", 1) and "subset" in alignment.how
    for i, tensor in enumerate(small.pending()):
        assert shapes[alignment.outputs[i]] == shape_key(tensor.shape_text)


@pytest.mark.parametrize("scenario", STDOUT_SCENARIOS)
def test_reports_align_with_the_executions_that_followed(scenario):
    """Each report describes the save-file entry of the sync after it: its pending tensors are the outputs."""
    inputs = discover([str(TORCH / scenario / "graphs.hlo.0")], None, None)
    assert inputs.tensors_reports == [str(TORCH / scenario / "stdout.log")]  # found by content, not by name
    from hlodiff.dumps.evidence import GraphProtos, Run, collect_records
    from hlodiff.explain.inventory import summarize
    from hlodiff.explain.live_tensors import aligned_reports

    warnings: list[InputWarning] = []
    graphs = summarize(collect_records(inputs.paths, warnings), keep=True, parse_hits=False, protos=GraphProtos())
    reports, alignments = aligned_reports(Run(inputs=inputs), graphs, warnings)
    compiled = [g for g in graphs if g.compiled]
    assert [g.record.index for g in compiled] == truth_of(TORCH / scenario)["compilations"]
    for graph in compiled:
        alignment = alignments[(graph.record.source, graph.record.index)]
        assert alignment.certain and alignment.how == "order"
        assert alignment.report.ordinal == graph.record.index  # one report per sync, in order
        assert len(alignment.report.pending()) == graph.outputs
    assert warnings == []


def test_gzip_stdout_log_and_an_item_execution_without_a_report(tmp_path):
    """An execution with no report before it (the user printed none) shifts the alignment, which says so."""
    src = TORCH / "lr_zero_one" / "stdout.log"
    reports = read_reports(src)
    gz = tmp_path / "train.log.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    assert read_reports(gz) == reports
    shapes = [tuple(shape_key(t.shape_text) for t in r.pending()) for r in reports]
    graphs = [GraphOutputs(("run", 0), shapes[0]), GraphOutputs(("run", 1), ("f32[]",))]  # an .item() execution
    graphs += [GraphOutputs(("run", i + 1), s) for i, s in enumerate(shapes[1:], start=1)]
    found = list(align_reports(iter_reports(gz, ir="roots"), graphs, path=str(gz)))
    assert [a.key[1] for a in found] == [0, 2, 3, 4, 5]
    assert found[1].how == "order, after 1 executions without a report" and found[1].certain


def test_report_that_fits_no_graph_is_uncertain_and_warned():
    reports = read_reports(TORCH / "lr_zero_one" / "stdout.log")
    graphs = [GraphOutputs(("run", i), ("f32[7]",)) for i in range(5)]
    warnings: list[InputWarning] = []
    found = list(align_reports(reports, graphs, path="stdout.log", warnings=warnings))
    assert all(not a.certain and a.how == "order only" and a.outputs == () for a in found)
    [w] = warnings
    assert "their tensors were not used" in w.message and w.line == reports[0].line


def test_stdout_log_cut_mid_tensor_keeps_complete_reports(tmp_path):
    src = TORCH / "autocast_late" / "stdout.log"
    text = src.read_text()
    big = re.compile(r"^Tensor: id=\d+, .*ir_nodes=\d\d+$", re.M).search(text, text.index("[train] step=2 amp=True"))
    cut = text.index("IR {", big.start()) + 120  # mid-line, inside the IR of a tensor
    path = tmp_path / "stdout.log"
    path.write_text(text[:cut])
    warnings: list[InputWarning] = []
    reports = read_reports(path, warnings)
    full = read_reports(src)
    assert reports[:2] == full[:2] and reports[2].tensors == full[2].tensors[:len(reports[2].tensors)]
    [w] = warnings
    assert w.message.endswith("cut off at end of file; skipped")


def test_a_log_without_reports_is_an_error_not_a_traceback(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("epoch 0 loss 1.0\nepoch 1 loss 0.5\n")
    with pytest.raises(HlodiffError, match="not a live-tensor report"):
        read_reports(path)


def test_roots_only_reading_keeps_frames_and_root_ops():
    path = TORCH / "grad_norm_order" / "stdout.log"
    full, light = read_reports(path), list(iter_reports(path, ir="roots"))
    assert len(full) == len(light)
    for a, b in zip(full, light):
        assert [t.id for t in a.tensors] == [t.id for t in b.tensors]
        assert [t.frames for t in a.tensors] == [t.frames for t in b.tensors]
        assert [t.roots() for t in a.tensors] == [t.roots() for t in b.tensors]
        assert sum(len(t.ir) for t in b.tensors) < sum(len(t.ir) for t in a.tensors)


def test_explain_recompile_traces_a_torch_frame_to_the_users_line_through_the_stdout_log():
    """lr 0 then 1: the HLO names torch/optim/sgd.py; the live tensors printed to stdout name opt.step()."""
    truth = truth_of(TORCH / "lr_zero_one")
    warnings: list[InputWarning] = []
    run = explained(discover([str(TORCH / "lr_zero_one" / "graphs.hlo.0")], None, None), warnings)
    first = run.recompilations[0]
    assert first.causes[0].kind == truth["cause"]
    assert [(f.file.rsplit("/", 1)[-1], f.line) for f in first.causes[0].locations] == \
        [(truth["user_file"], truth["user_line"])]
    assert warnings == []


def test_explain_recompile_run_dir_finds_the_stdout_log_by_content(tmp_path):
    """A run folder as users leave it: the save file and `python train.py > train.out`, under any name."""
    run = tmp_path / "run"
    run.mkdir()
    for name in ("graphs.hlo.0", "truth.json"):
        (run / name).write_bytes((TORCH / "autocast_late" / name).read_bytes())
    (run / "train.out").write_bytes((TORCH / "autocast_late" / "stdout.log").read_bytes())
    (run / "notes.txt").write_text("lr sweep, second try\n")  # sniffed, not a report: ignored
    doc = cli_json("explain-recompile", str(run), codes=(1,))
    assert doc["inputs"]["tensors_reports"] == [str(run / "train.out")]
    assert doc["warnings"] == []
    truth = truth_of(TORCH / "autocast_late")
    [recompilation] = doc["recompilations"]
    assert recompilation["live_tensors"]  # the outputs got their tensors from the stdout log
    dtype = next(c for c in recompilation["causes"] if c["kind"] == truth["cause"])
    assert {"file": "/home/user/project/autocast_late.py", "line": truth["user_line"], "function": "<module>"} \
        in dtype["locations"]


def test_a_log_kept_plain_and_gzipped_is_read_once_and_paths_print_as_typed(tmp_path, monkeypatch):
    """``stdout.log`` beside ``stdout.log.gz`` (a copy kept compressed): the plain one is read, once, with a warning
    (read twice, its reports would be aligned twice); run from the folder, paths print without ``./``."""
    src = TORCH / "autocast_late"
    (tmp_path / "graphs.hlo.0").write_bytes((src / "graphs.hlo.0").read_bytes())
    (tmp_path / "stdout.log").write_bytes((src / "stdout.log").read_bytes())
    (tmp_path / "stdout.log.gz").write_bytes(gzip.compress((src / "stdout.log").read_bytes()))
    monkeypatch.chdir(tmp_path)
    doc = cli_json("explain-recompile", "graphs.hlo.0", codes=(1,))
    assert doc["inputs"]["tensors_reports"] == ["stdout.log"]
    assert doc["warnings"] == ["stdout.log.gz: warning: stdout.log is beside it: read that one only "
                               "(the same log compressed?)"]
    assert doc["recompilations"][0]["live_tensors"]


def test_roots_only_streaming_matches_the_full_reader_on_cut_and_gzip_logs(tmp_path):
    src = TORCH / "grad_norm_order" / "stdout.log"
    text = src.read_text()
    cut = text.index("  %20 = ", text.index("step 1 loss")) + 10  # mid-line inside an IR block
    for name, data in (("cut.log", text[:cut].encode()), ("whole.log.gz", gzip.compress(src.read_bytes()))):
        path = tmp_path / name
        path.write_bytes(data)
        full_w: list[InputWarning] = []
        light_w: list[InputWarning] = []
        full, light = read_reports(path, full_w), list(iter_reports(path, light_w, ir="roots"))
        assert [[(t.id, t.frames, t.roots()) for t in r.tensors] for r in full] == \
            [[(t.id, t.frames, t.roots()) for t in r.tensors] for r in light]
        assert [w.message for w in full_w] == [w.message for w in light_w]


def test_roots_only_streaming_keeps_the_line_limit(tmp_path, monkeypatch):
    path = tmp_path / "stdout.log"
    text = (TORCH / "lr_zero_one" / "stdout.log").read_text()
    at = text.index("  %3 = ")
    path.write_text(text[:at] + "  %3 = " + "x" * (5 << 20) + "\n" + text[at:])  # longer than a read chunk
    monkeypatch.setenv("HLODIFF_MAX_LINE_BYTES", "4096")
    with pytest.raises(HlodiffError, match="line too long") as info:
        list(iter_reports(path, ir="roots"))
    assert info.value.path == str(path)
