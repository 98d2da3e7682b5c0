"""torch_xla's own memory figures (the PT_XLA_DEBUG log's Post Compilation Analysis) in `hlodiff cost`, `compare`
and the explain report, checked against XLA's memory-usage report of the same compilations: the fixture scripts
(fixtures/torch_xla/fsdp_linear.py, pipeline.py) keep XLA's report of every compiled module in xla_memory/, module
k being the k-th compilation of the run."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of, xla_bytes
from hlodiff.dumps.torch_xla_memory import ROUNDING_BYTES, gb_to_bytes, memory_of
from hlodiff.dumps.debug_log import parse_debug_log

FSDP = FIXTURES / "torch_xla" / "fsdp_linear"
PIPELINE = FIXTURES / "torch_xla" / "pipeline"
RUNS = [FSDP / "plain", FSDP / "patched", *(PIPELINE / v for v in ("mb1", "mb2", "mb4", "onegraph"))]
DEBUG_LOG_RUN = FIXTURES / "torch_xla" / "debug_log_run"




def xla_reports(folder) -> list[dict]:
    """XLA's figures per compilation, from its memory-usage reports: the total, and the bytes of the parameters
    an output is written into (allocations of a parameter that may live out), from their shapes as XLA's parser
    reads them (the report prints sizes rounded: 1.5KiB)."""
    out = []
    for path in sorted((folder / "xla_memory").glob("module_*-memory-usage-report.txt"),
                       key=lambda p: int(p.name.split(".")[0].split("_")[1])):
        text = path.read_text()
        donated = {m.group(1): xla_bytes(m.group(2)) for m in re.finditer(  # each allocation is listed twice
            r"allocation (\d+): size [^,]+, parameter \d+, shape \|([^|]+)\|[^\n]*maybe-live-out", text)}
        aliased = sum(donated.values())
        out.append({"total": int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1)), "aliased": aliased})
    return out


def test_gb_figures_become_bytes_and_unknown_stays_unknown():
    assert gb_to_bytes("0.001591 GB") == round(0.001591 * (1 << 30))
    assert gb_to_bytes("0.000000 GB") == 0
    assert gb_to_bytes("Unknown  GB") is None and gb_to_bytes("12 MB") is None and gb_to_bytes("") is None
    assert ROUNDING_BYTES == 537  # half of 1e-6 GB, the last digit torch_xla prints


@pytest.mark.parametrize("folder", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_aliased_bytes_and_peak_match_xla_on_every_compilation(folder):
    """Aliased bytes: torch_xla's figure, within its rounding of XLA's own (the saved HLO shows no aliasing).
    Peak: within 10% of XLA's memory-usage report on every graph."""
    doc = cli_json("cost", str(folder), codes=(0,))
    compiled = [g for g in doc["graphs"] if g["compiled"]]
    truth = xla_reports(folder)
    assert len(compiled) == len(truth) > 0
    for graph, xla in zip(compiled, truth):
        assert graph["aliased_source"] == "torch_xla" and graph["aliased_rounding_bytes"] == ROUNDING_BYTES
        assert abs(graph["aliased_bytes"] - xla["aliased"]) <= ROUNDING_BYTES, (graph["ref"], xla)
        assert graph["peak_source"] == "torch_xla"
        assert abs(graph["peak_bytes"] - xla["total"]) <= 0.10 * xla["total"], (graph["ref"], xla)
        assert abs(graph["peak_bytes"] - xla["total"]) <= graph["peak_rounding_bytes"] + 0.10 * xla["total"]
        assert graph["torch_xla"]["graph_hash"] and graph["torch_xla"]["rounding_bytes"] == ROUNDING_BYTES


def test_on_megabyte_graphs_torch_xla_corrects_the_estimate():
    """The optimizer step of fsdp_linear donates its weights: hlodiff's estimate from the saved HLO (no aliasing
    there) is 50% above XLA's figure; torch_xla's is within its rounding of it."""
    doc = cli_json("cost", str(FSDP / "plain"), codes=(0,))
    step = [g for g in doc["graphs"] if g["compiled"]][2]
    xla = xla_reports(FSDP / "plain")[2]
    assert xla["aliased"] > 1_000_000 and abs(step["aliased_bytes"] - xla["aliased"]) <= ROUNDING_BYTES
    assert step["estimated_peak_bytes"] > 1.4 * xla["total"]
    assert abs(step["peak_bytes"] - xla["total"]) <= step["peak_rounding_bytes"]


def test_without_the_log_aliasing_is_unknown_and_the_capture_is_named(tmp_path):
    shutil.copy(FSDP / "plain" / "graphs.hlo.0", tmp_path / "graphs.hlo.0")
    doc = cli_json("cost", str(tmp_path / "graphs.hlo.0"), codes=(0,))
    graph = doc["graphs"][2]
    assert graph["aliased_bytes"] is None and graph["aliased_source"] is None
    assert graph["peak_source"] == "estimate" and graph["torch_xla"] is None
    assert [u["figure"] for u in graph["unknowns"]] == ["aliased_bytes"]
    assert "hlodiff record" in graph["unknowns"][0]["capture"]
    text = cli("cost", str(tmp_path / "graphs.hlo.0")).output
    assert "aliased bytes unknown (?)" in text and "hlodiff record" in text


def test_a_log_given_with_debug_log_is_read(tmp_path):
    (tmp_path / "dump").mkdir()
    (tmp_path / "logs").mkdir()
    shutil.copy(FSDP / "patched" / "graphs.hlo.0", tmp_path / "dump" / "graphs.hlo.0")
    shutil.copy(FSDP / "patched" / "pt_xla_debug.log", tmp_path / "logs" / "my.log")
    doc = cli_json("cost", str(tmp_path / "dump" / "graphs.hlo.0"), "--debug-log", str(tmp_path / "logs" / "my.log"),
                   codes=(0,))
    assert {g["peak_source"] for g in doc["graphs"]} == {"torch_xla"}
    patched = cli_json("cost", str(FSDP / "patched"), codes=(0,))
    assert doc["graphs"][2]["aliased_bytes"] == patched["graphs"][2]["aliased_bytes"]


def test_xla_report_beside_the_module_wins_over_torch_xla():
    """debug_log_run: XLA dump with memory-usage reports and the PT_XLA_DEBUG log: XLA's total is the peak, the
    optimized module's input_output_alias the aliasing; torch_xla's figures are still carried."""
    doc = cli_json("cost", str(DEBUG_LOG_RUN / "dump"), codes=(0,))
    for graph in doc["graphs"]:
        assert graph["peak_source"] == "xla" and graph["peak_rounding_bytes"] == 0
        assert graph["aliased_source"] == "hlo" and graph["aliased_bytes"] > 0
        assert graph["torch_xla"] is not None  # joined by graph hash
        assert abs(graph["aliased_bytes"] - graph["torch_xla"]["aliased_bytes"]) <= ROUNDING_BYTES


def test_compare_and_the_explain_report_use_the_same_figures(tmp_path):
    ref = str(FSDP / "plain" / "graphs.hlo.0")
    graphs = cli_json("cost", ref, codes=(0,))["graphs"]
    result = cli("compare", f"{ref}#0", f"{ref}#2", "--json", "--cost")
    cost = json.loads(result.output)["cost"]
    assert cost["peak_source"] == {"left": "torch_xla", "right": "torch_xla"}
    assert cost["left"]["peak_bytes"] == graphs[0]["peak_bytes"]
    assert cost["right"]["peak_bytes"] == graphs[2]["peak_bytes"]
    assert cost["delta"]["aliased_bytes"] == graphs[2]["aliased_bytes"] - graphs[0]["aliased_bytes"]
    text = cli("compare", f"{ref}#0", f"{ref}#2", "--cost").output
    assert "peak bytes" in text and "(torch_xla ±" in text
    html = tmp_path / "run.html"
    cli("explain-recompile", str(FSDP / "plain"), "--html", str(html))
    page = html.read_text()
    assert "Post Compilation Analysis" in page and "(torch_xla)" in page


def test_boundary_total_is_unknown_from_printed_reports():
    """Without reads= (what `hlodiff record` adds to each report), the tensors named are a part of what crossed:
    the total is null and the capture that gives it is named; the named bytes stay available."""
    doc = cli_json("cost", str(PIPELINE / "mb2"), codes=(0,))
    assert doc["run"]["boundary_bytes"] is None and doc["run"]["named_boundary_bytes"] > 0
    assert [u["figure"] for u in doc["unknowns"]] == ["boundary_bytes"]
    assert "hlodiff record" in doc["unknowns"][0]["capture"]
    assert "the run's total may be more" in cli("cost", str(PIPELINE / "mb2")).output


def test_boundary_total_is_given_when_every_report_has_reads(tmp_path):
    folder = tmp_path / "mb2"
    shutil.copytree(PIPELINE / "mb2", folder)
    probes = truth_of(folder)["probes"]
    report = folder / "tensors_report.txt"
    report.write_text(re.sub(r"^## SYNC (\d+)(.*)$",
                             lambda m: f"## SYNC {m[1]}{m[2]} reads={','.join(map(str, probes[int(m[1])]['reads']))}",
                             report.read_text(), flags=re.M))
    doc = cli_json("cost", str(folder / "graphs.hlo.0"), codes=(0,))
    assert doc["unknowns"] == [] and doc["run"]["boundary_bytes"] == doc["run"]["named_boundary_bytes"] > 0


def test_a_cut_post_compilation_block_gives_no_figure():
    text = (FSDP / "patched" / "pt_xla_debug.log").read_text()
    cut = text[:text.index("Post Compilation Analysis: Graph output size")]
    warnings = []
    events = parse_debug_log(cut, warnings=warnings)
    assert memory_of(events[-1], "log") is None
    assert any("cut off" in w.message for w in warnings)


def test_the_explain_report_reads_a_log_given_with_debug_log(tmp_path):
    (tmp_path / "dump").mkdir()
    (tmp_path / "logs").mkdir()
    shutil.copy(FSDP / "plain" / "graphs.hlo.0", tmp_path / "dump" / "graphs.hlo.0")
    shutil.copy(FSDP / "plain" / "pt_xla_debug.log", tmp_path / "logs" / "mine.log")
    page = tmp_path / "run.html"
    cli("explain-recompile", str(tmp_path / "dump" / "graphs.hlo.0"), "--html", str(page))
    assert "(torch_xla)" not in page.read_text() and "(estimate)" in page.read_text()
    log = str(tmp_path / "logs" / "mine.log")
    cli("explain-recompile", str(tmp_path / "dump" / "graphs.hlo.0"), "--debug-log", log, "--html", str(page))
    assert "(torch_xla)" in page.read_text()
