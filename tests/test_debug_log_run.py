"""A run captured the way torch_xla users capture it without hlodiff: an XLA dump folder (graphs that compiled) and a
PT_XLA_DEBUG_LEVEL=2 log they named themselves (fixtures/torch_xla/debug_log_run, made by the script beside it).
Together they are read like a `hlodiff record` folder: every execution, cache hits included."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

from helpers import FIXTURES, cli_json, truth_of
from hlodiff.dumps import detect_kind, iter_graphs
from hlodiff.dumps.executions import log_beside


RUN = FIXTURES / "torch_xla" / "debug_log_run"
TRUTH = truth_of(RUN)


def test_the_log_beside_the_dump_gives_every_execution_and_the_alternation():
    assert log_beside(str(RUN / "dump")) == str(RUN / "debug.log")
    assert detect_kind(RUN / "dump") == "executions"
    graphs = list(iter_graphs(RUN / "dump"))
    assert len(graphs) == TRUTH["steps"] and [g.index for g in graphs] == list(range(TRUTH["steps"]))
    doc = cli_json("explain-recompile", RUN / "dump", codes=(1,))
    assert f"alternating: sync at {TRUTH['user_file']}:{TRUTH['sync_line']}" in doc["summary"]
    assert "(A,B,A,B,A,B)" in doc["summary"]
    cause = doc["recompilations"][0]["causes"][0]
    assert cause["kind"] == TRUTH["cause"] and cause["fix"]
    assert TRUTH["user_line"] in [loc["line"] for loc in cause["locations"]]
    assert cli_json("explain-recompile", RUN, codes=(1,)) == doc  # the run folder stands for the dump inside it


def test_without_the_log_the_dump_shows_its_compilations_only(tmp_path):
    shutil.copytree(RUN / "dump", tmp_path / "dump")
    assert log_beside(str(tmp_path / "dump")) is None and detect_kind(tmp_path / "dump") == "xla_dump"
    assert len(list(iter_graphs(tmp_path / "dump"))) == 2
    assert "(A,B,A,B,A,B)" not in cli_json("explain-recompile", tmp_path / "dump", codes=(1,))["summary"]


def test_a_log_that_does_not_match_the_dump_is_not_joined(tmp_path):
    """A log of another run (here: cut after its first compilation, so it holds one compilation for two modules)
    is not paired with the modules; the dump is read as its compilations, and the run still explains."""
    shutil.copytree(RUN / "dump", tmp_path / "dump")
    text = (RUN / "debug.log").read_text()
    second = text.index("Compilation Analysis: Compilation Cause", text.index("Compilation Analysis: Compilation Cause") + 1)
    (tmp_path / "debug.log").write_text(text[:second])
    assert log_beside(str(tmp_path / "dump")) is None
    assert len(list(iter_graphs(tmp_path / "dump"))) == 2
    cli_json("explain-recompile", tmp_path / "dump", codes=(1,))
    assert (tmp_path / "debug.log").read_text() == text[:second]  # inputs are never modified


def test_a_gzipped_log_is_read_too(tmp_path):
    import gzip

    shutil.copytree(RUN / "dump", tmp_path / "dump")
    (tmp_path / "debug.log.gz").write_bytes(gzip.compress((RUN / "debug.log").read_bytes()))
    assert log_beside(str(tmp_path / "dump")) == str(tmp_path / "debug.log.gz")
    assert len(list(iter_graphs(tmp_path / "dump"))) == TRUTH["steps"]


@pytest.mark.xla
@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla is not installed")
def test_the_fixture_script_captures_the_same_run_again(tmp_path):
    """Real torch_xla, captured with the user's own flags: the fresh capture explains as the committed one does."""
    proc = subprocess.run([sys.executable, str(FIXTURES / "torch_xla" / "debug_log_run.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fresh = cli_json("explain-recompile", tmp_path, codes=(1,))
    committed = cli_json("explain-recompile", RUN, codes=(1,))
    assert fresh["summary"].replace(str(tmp_path), "RUN") == committed["summary"].replace(str(RUN), "RUN")


def test_a_module_cut_off_by_a_killed_run_is_counted_not_fatal(tmp_path):
    """XLA was writing the second compilation's module when the run died: every execution of the first module is
    still explained, the cut one is named once in a warning and in `unread`, and the exit status is 1 (it did
    compile again: a CI check must not pass it as stable)."""
    shutil.copytree(RUN, tmp_path / "run")
    (cut,) = (tmp_path / "run" / "dump").glob("module_0001.*before_optimizations.txt")
    text = cut.read_text()
    cut.write_text(text[:len(text) // 2])
    doc = cli_json("explain-recompile", str(tmp_path / "run"), codes=(1,))
    assert doc["unread"] == [f"{tmp_path / 'run' / 'dump'}#1"]
    assert "1 more compilation whose HLO was cut off (module 1, not read)" in doc["summary"]
    assert len(doc["graphs"]) == TRUTH["steps"] // 2  # the executions of module 0
    (warning,) = [w for w in doc["warnings"] if "module 1 skipped" in w]
    assert "(and the 3 executions that ran it)" in warning


def test_a_recording_lends_its_protos_stacks_to_every_execution():
    """`hlodiff record` dumps HLO protos beside the text; a recording's executions read them like a dump folder's
    modules do (they were ignored, and causes inside torch said to dump the proto that was there)."""
    protos = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "record_adamw"))["inputs"]["hlo_protos"]
    assert [p.rsplit("/", 1)[1] for p in protos] == ["module_0000.SyncTensorsGraph.136.before_optimizations.hlo.pb",
                                                     "module_0001.SyncTensorsGraph.120.before_optimizations.hlo.pb"]


def test_cost_reads_the_optimized_modules_and_xla_s_total_of_torch_xla_s_xla():
    """The XLA inside torch_xla 2.9 writes `Total bytes used: N` (JAX's writes `Total bytes: N`): that total is the
    peak, marked xla, for the optimized module a dump with its debug log is costed on."""
    import re

    doc = cli_json("cost", str(RUN))
    assert len(doc["graphs"]) == TRUTH["steps"] and not doc["warnings"]
    for graph in doc["graphs"][:2]:
        number = int(graph["ref"].rsplit("#", 1)[1])
        (report,) = (RUN / "dump").glob(f"module_000{number}.*cpu_after_optimizations-memory-usage-report.txt")
        total = int(re.match(r"Total bytes used: (\d+)", report.read_text()).group(1))
        assert (graph["peak_bytes"], graph["peak_source"]) == (total, "xla")
        (optimized,) = (RUN / "dump").glob(f"module_000{number}.*cpu_after_optimizations.txt")
        assert graph["instructions"] == sum(1 for line in optimized.read_text().splitlines() if " = " in line)
