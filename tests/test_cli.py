"""The hlodiff command as a user runs it: output, exit status, one-line errors, stable JSON."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys

import pytest

from helpers import FIXTURES, cli, cli_json

BATCH = str(FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0")
METRIC = str(FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0")
JAX_DUMP = str(FIXTURES / "jax" / "recompile_shape" / "dump")


def test_version_and_help_have_examples():
    assert cli("--version").output.strip() == "hlodiff, version 0.1.0"
    for command in ("inspect", "compare", "fingerprint"):
        out = cli(command, "--help").output
        assert "Example" in out and f"hlodiff {command}" in out


def test_inspect_marks_compilations_and_cache_hits():
    result = cli("inspect", BATCH)
    assert result.exit_code == 0
    assert "6 graphs in" in result.output and "2 compilations" in result.output
    assert result.output.count("hit of #0") == 4
    assert "batch_shape.py:33" in result.output


def test_inspect_json_is_documented_shape_and_deterministic():
    first = cli("inspect", "--json", BATCH, JAX_DUMP)
    second = cli("inspect", "--json", BATCH, JAX_DUMP)
    assert first.exit_code == 0 and first.output == second.output
    doc = json.loads(first.output)
    assert doc["schema"] == "hlodiff.inspect/1"
    graphs = doc["graphs"]
    assert [g["compiled"] for g in graphs[:6]] == [True, False, False, False, False, True]
    assert graphs[1]["cache_hit_of"] == BATCH + "#0"
    assert graphs[0]["trigger"] == {"file": "/home/user/project/batch_shape.py", "line": 33, "function": "<module>"}
    assert graphs[0]["parameters"]["count"] == 5 and graphs[0]["outputs"]["count"] == 7
    assert [g["kind"] for g in graphs[6:]] == ["xla_dump"] * 3 and all(g["compiled"] for g in graphs[6:])


def test_inspect_takes_the_run_folder_explain_recompile_takes(tmp_path):
    """A run folder (the save file with its logs beside it, as the README's capture by hand lays it out) is what
    explain-recompile is pointed at; inspect lists its graphs as it lists the save file's. A folder holding no
    dump stays a one-line error."""
    run = FIXTURES / "torch_xla" / "metric_even_steps"
    assert cli("explain-recompile", str(run)).exit_code in (0, 1)
    folder = cli_json("inspect", str(run), codes=(0,))
    assert folder["graphs"] == cli_json("inspect", METRIC, codes=(0,))["graphs"]
    assert [g["compiled"] for g in folder["graphs"]] == [True, True, False, False, False, False]
    (tmp_path / "notes.txt").write_text("no dump here\n")
    empty = cli("inspect", str(tmp_path))
    assert empty.exit_code == 2 and empty.output.count("\n") == 1 and "error:" in empty.output


def test_compare_two_refs_exit_status_like_diff():
    same = cli("compare", BATCH + "#0", BATCH + "#1")
    assert same.exit_code == 0 and "equal after normalization" in same.output
    different = cli("compare", BATCH + "#4", BATCH + "#5")
    assert different.exit_code == 1
    assert "shape" in different.output and "batch_shape.py:27" in different.output


def test_compare_dump_reports_each_change_once():
    result = cli("compare", METRIC)
    assert result.exit_code == 1
    # A,B,A,B,A,B: B is new once; the later switches are cache hits of graphs already compared (review F7)
    assert "6 graphs, 1 change (each new graph against the previous distinct graph" in result.output
    assert result.output.count("1 output removed") == 1 and "1 output added" not in result.output


def test_compare_json_contract():
    result = cli("compare", "--json", METRIC + "#0", METRIC + "#1")
    doc = json.loads(result.output)
    assert doc["schema"] == "hlodiff.compare/1"
    assert doc["equal"] is False
    (cause,) = doc["causes"]
    assert set(cause) >= {"kind", "summary", "locations", "instructions"}
    assert cause["kind"] == "outputs"
    assert cause["locations"] == [{"file": "/home/user/project/metric_even_steps.py", "line": 32,
                                   "function": None}]
    assert {"left", "right"} <= set(cause["instructions"][0])


def test_no_normalize_turns_a_pass_off():
    result = cli("compare", "--json", "--no-normalize", "dead-code", BATCH + "#0", BATCH + "#1")
    doc = json.loads(result.output)
    assert doc["equal"] is True and not any(i["pass"] == "dead_code" for i in doc["ignored"])


def test_fingerprint_equal_for_cache_hits_and_text_is_readable():
    lines = cli("fingerprint", BATCH).output.splitlines()
    prints = [line.split()[0] for line in lines]
    assert len(set(prints[:5])) == 1 and prints[5] != prints[0]
    text = cli("fingerprint", "--text", BATCH + "#0").output
    assert "ENTRY %main {" in text and "metadata" not in text


@pytest.mark.parametrize("make,expected", [
    (lambda d: d / "missing.hlo", r"missing\.hlo: error: "),
    (lambda d: _write(d / "empty.hlo", b""), r"empty\.hlo(:1)?: error: "),
    (lambda d: _write(d / "bin.hlo", bytes(range(256)) * 4), r"bin\.hlo(:\d+)?: error: "),
    (lambda d: _write(d / "broken.hlo", b"HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] add(a, a\n"),
     r"broken\.hlo:5:\d+: error: "),
    (lambda d: (d / "emptydir").mkdir() or d / "emptydir", r"emptydir: error: no dump here"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, make, expected):
    path = make(tmp_path)
    result = cli("inspect", str(path))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and re.search("(^|/)" + expected, lines[0]), result.output
    assert "Traceback" not in result.output


def test_unknown_graph_ref_names_the_range():
    result = cli("compare", BATCH + "#9", BATCH + "#0")
    assert result.exit_code == 2
    assert "no graph #9: there are 6 graphs (#0 to #5)" in result.output


def test_graph_ref_that_is_not_a_number_says_so_not_no_such_file():
    result = cli("compare", BATCH + "#last", BATCH + "#0")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"{BATCH}: error: '#last' is not a graph number: name a graph as {BATCH}#N (#0 the first, #-1 the last)"]


def test_dump_cut_mid_write_keeps_complete_graphs_with_a_warning(tmp_path):
    text = open(BATCH).read()
    cut = tmp_path / "graphs.hlo.0"
    cut.write_text(text[: text.rindex("## END_GRAPH") - 300])
    before = cut.read_bytes()
    result = cli("inspect", str(cut))
    assert result.exit_code == 0
    assert "5 graphs" in result.output and "warning: graph 5 cut off mid-write" in result.output
    assert cut.read_bytes() == before  # input files are never modified


def test_gzip_dump_reads_like_the_plain_one(tmp_path):
    gz = tmp_path / "graphs.hlo.0.gz"
    gz.write_bytes(gzip.compress(open(BATCH, "rb").read()))
    plain = cli_json("fingerprint", BATCH)["graphs"]
    packed = cli_json("fingerprint", str(gz))["graphs"]
    assert [g["fingerprint"] for g in plain] == [g["fingerprint"] for g in packed]


def test_installed_console_script_runs(tmp_path):
    exe = shutil.which("hlodiff", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe, "the hlodiff console script is installed beside python"
    proc = subprocess.run([exe, "compare", BATCH + "#4", BATCH + "#5"], capture_output=True, text=True)
    assert proc.returncode == 1 and "input shape changed" in proc.stdout and proc.stderr == ""


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_record_refuses_a_folder_it_did_not_create(tmp_path):
    keep = tmp_path / "xla_dump" / "notes.txt"
    keep.parent.mkdir()
    keep.write_text("mine")
    (tmp_path / "graphs.hlo.0").write_text("mine too")
    result = cli("record", "--out", str(tmp_path), "--", "true")
    assert result.exit_code == 2 and "did not record" in result.output
    assert keep.read_text() == "mine" and (tmp_path / "graphs.hlo.0").read_text() == "mine too"


def test_pipes_are_refused_not_waited_on(tmp_path):
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = cli("inspect", str(fifo))
    assert result.exit_code == 2 and "not a regular file" in result.output


def test_dump_folder_with_a_module_cut_mid_write_keeps_the_others(tmp_path):
    import shutil as sh

    folder = tmp_path / "dump"
    sh.copytree(JAX_DUMP, folder)
    last = folder / "module_0004.jit_step.before_optimizations.txt"
    last.write_text(last.read_text()[:900])
    result = cli("inspect", str(folder))
    assert result.exit_code == 0
    assert "2 graphs" in result.output and "module 4 skipped" in result.output


def test_dump_folder_warns_when_a_module_falls_back_to_optimized_hlo(tmp_path):
    import shutil as sh

    folder = tmp_path / "dump"
    sh.copytree(JAX_DUMP, folder)
    (folder / "module_0002.jit_step.before_optimizations.txt").write_text("")
    result = cli("explain-recompile", str(folder))
    assert "module 2 has no readable before_optimizations text; using cpu_after_optimizations" in result.output


def test_a_stray_latin1_byte_in_a_path_is_text_not_binary(tmp_path):
    data = open(BATCH, "rb").read().replace(b"/home/user/project/", b"/home/us\xe9r/project/", 1)
    path = tmp_path / "graphs.hlo.0"
    path.write_bytes(data)
    result = cli("inspect", str(path))
    assert result.exit_code == 0 and "6 graphs" in result.output


def test_record_help_says_what_it_captures_and_its_exit_status():
    """`record --help` describes the capture record makes now, and that its status is the command's."""
    text = " ".join(cli("record", "--help").output.split())
    for said in ("PT_XLA_DEBUG_LEVEL=2", "xla_dump/", "compile_times.tsv", "hlodiff-record.json",
                 "at the first sync and at the sync after each compilation", "Exit status: the command's own",
                 "With --json, stdout holds only the JSON document"):
        assert said in text, said


def test_compare_of_a_torch_xla_graph_and_a_jax_function_warns_that_they_are_unrelated():
    torch_graph = f"{FIXTURES / 'torch_xla' / 'steady' / 'graphs.hlo.0'}#0"
    jax_graph = f"{FIXTURES / 'jax' / 'weak_type' / 'dump'}#0"
    result = cli("compare", torch_graph, jax_graph, "--json")
    assert result.exit_code == 1
    (warning,) = json.loads(result.output)["warnings"]
    assert "different frameworks (torch_xla IrToHlo" in warning and "jax jit_step" in warning
    same = cli("compare", torch_graph, torch_graph.replace("#0", "#1"), "--json")
    assert not any("different frameworks" in w for w in json.loads(same.output)["warnings"])
