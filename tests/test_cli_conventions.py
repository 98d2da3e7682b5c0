"""CLI conventions a user meets in the first minutes: bare `hlodiff` helps, `-` is standard input, tables fit 80
columns without splitting a location, exit statuses tell expected warm-up from a real recompilation, `record
--json` always prints a document, progress shows on a terminal only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import FIXTURES, run_hlodiff
from test_progress import _run_on_terminal

ITEM = str(FIXTURES / "torch_xla" / "item_partial" / "graphs.hlo.0")
WARMUP = str(FIXTURES / "torch_xla" / "momentum_warmup" / "graphs.hlo.0")
SETUP = str(FIXTURES / "torch_xla" / "setup_accumulate" / "graphs.hlo.0")
BIG = FIXTURES / "big"


def test_bare_hlodiff_prints_the_help():
    proc = run_hlodiff()
    out = proc.stdout
    assert proc.returncode == 0 and out.startswith("Usage: ") and "COMMAND [ARGS]" in out
    assert "explain-recompile" in out and "\\n" not in out and "error" not in proc.stderr


def _cells(text: str) -> list[list[str]]:
    """The cells of each body row of the first table in ``text`` (rows drawn with │)."""
    return [[c.strip() for c in line.split("│")] for line in text.splitlines() if "│" in line]


@pytest.mark.parametrize("command", ["inspect", "cost"])
def test_tables_fit_80_columns_without_splitting_a_location(command):
    wide = run_hlodiff(command, ITEM, columns=200).stdout
    narrow = run_hlodiff(command, ITEM, columns=80).stdout
    assert all(len(line) <= 80 for line in narrow.splitlines() if "│" in line or "┃" in line)
    whole = {c for row in _cells(wide) for c in row}
    for row in _cells(narrow):
        for cell in row:  # a whole cell of the wide table, whole words of one (wrapped), or its end after "…"
            assert not cell or any(f" {cell} " in f" {w} " for w in whole) or (
                cell.startswith("…") and any(w.endswith(cell[1:]) for w in whole)), cell
    headers = [h.strip() for line in narrow.splitlines() if "┃" in line for h in line.split("┃")]
    wide_headers = {h.strip() for line in wide.splitlines() if "┃" in line for h in line.split("┃")}
    assert headers and set(headers) <= wide_headers  # no header cut in two ("output" / "s")
    assert "item_partial.py:36" in narrow or re.search(r"…\w*\.py:36", narrow)
    if set(headers) != wide_headers:
        assert "left out at 80 columns" in narrow  # a dropped column is said, never silent


def test_references_of_two_dumps_stay_whole_at_80_columns():
    item, steady = "fixtures/torch_xla/item_partial/graphs.hlo.0", "fixtures/torch_xla/steady/graphs.hlo.0"
    out = run_hlodiff("inspect", item, steady, cwd=FIXTURES.parent, columns=80).stdout
    refs = [row[0] for row in _cells(out)]
    assert refs[0] == item + "#0" and refs[-1].startswith(steady + "#")  # which dump a graph is from: kept whole
    assert "left out at 80 columns" in out and all(len(line) <= 80 for line in out.splitlines() if "│" in line)


def test_dash_reads_standard_input():
    data = open(ITEM, "rb").read()
    piped = run_hlodiff("inspect", "-", stdin=data, columns=200, text=False)
    named = run_hlodiff("inspect", ITEM, columns=200, text=False)
    assert piped.returncode == 0
    assert piped.stdout.decode().replace("7 graphs in -", "") == named.stdout.decode().replace(f"7 graphs in {ITEM}", "")
    explained = json.loads(run_hlodiff("explain-recompile", "-", "--json", stdin=data, text=False).stdout)
    assert explained["inputs"]["dumps"] == ["-"] and explained["recompilations"][0]["graph"] == "-#3"
    broken = run_hlodiff("compare", "-", ITEM + "#0", text=False,
                         stdin=b"HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  r = f32[2] nope(")
    assert broken.returncode == 2 and broken.stderr.decode().startswith("-:5:")


def test_compare_ends_its_process_quickly_with_everything_written_and_cleaned_up(tmp_path):
    """``compare`` leaves without freeing its graphs one object at a time: the whole document still arrives, the
    status is the verdict, and standard input's temporary copy is still removed."""
    data = open(ITEM, "rb").read()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    piped = run_hlodiff("compare", "--json", "--", "-#0", "-#3", stdin=data, env=env, text=False)
    named = run_hlodiff("compare", ITEM + "#0", ITEM + "#3", "--json", text=False)
    assert piped.returncode == named.returncode == 1 and piped.stderr == b""
    # the same differences; the named file's live-tensor report beside it also gives their user lines (review 19,
    # F7: compare locates as explain-recompile does), which a piped copy has no folder to find
    told = [[(c["kind"], c["summary"]) for c in json.loads(r.stdout)["causes"]] for r in (piped, named)]
    assert told[0] == told[1] != []
    assert list(tmp_path.glob("hlodiff-stdin-*")) == []


def test_exit_status_separates_expected_warm_up_from_a_recompilation():
    assert run_hlodiff("explain-recompile", WARMUP, "-q").returncode == 0  # warm-up only: expected
    assert run_hlodiff("explain-recompile", WARMUP, "--warmup", "0").returncode == 1  # no warm-up allowed
    assert run_hlodiff("explain-recompile", WARMUP, "--warmup", "2").returncode == 0
    one_off = run_hlodiff("explain-recompile", ITEM, "--json")
    assert one_off.returncode == 1 and json.loads(one_off.stdout)["unexpected"] == [ITEM + "#3"]
    # setup is expected, and so is its loop: gradient accumulation cycling with the optimizer step (review F0)
    assert run_hlodiff("explain-recompile", SETUP).returncode == 0
    assert run_hlodiff("explain-recompile", "/nonexistent/graphs.hlo.0").returncode == 2


def test_record_json_prints_a_document_when_nothing_was_captured(tmp_path):
    proc = run_hlodiff("record", "--out", "run", "--json", "--", sys.executable, "-c", "print('no graphs')",
                       cwd=tmp_path)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["exit_status"] == 0 and doc["graphs"] == []
    assert "produced no graph" in doc["error"] and "no graphs" in proc.stderr
    missing = run_hlodiff("record", "--out", "run2", "--json", "--", "no-such-command-hlodiff", cwd=tmp_path)
    doc = json.loads(missing.stdout)
    assert missing.returncode == 2 and doc["exit_status"] is None and "cannot run" in doc["error"]


def test_compare_of_big_graphs_shows_progress_on_a_terminal_only():
    left, right = str(BIG / "transformer24.hlo.gz"), str(BIG / "transformer24_variant.hlo.gz")
    out, err = _run_on_terminal(["compare", left, right])  # the report, not --json: a pipe holds only 64 KB
    assert b"parsing transformer24.hlo.gz" in err and b"matching instructions" in err
    piped = subprocess.run([sys.executable, "-m", "hlodiff.cli", "compare", left, right],
                           capture_output=True, env={**os.environ, "HLODIFF_PROGRESS_DELAY": "0"})
    assert piped.stderr == b"" and out == piped.stdout


@pytest.mark.parametrize("args,status", [
    (["inspect", "fixtures/torch_xla/metric_even_steps/graphs.hlo.0"], 0),
    (["explain-recompile", "fixtures/torch_xla/metric_even_steps/graphs.hlo.0"], 1),
    (["explain-recompile", "fixtures/torch_xla/metric_even_steps/graphs.hlo.0", "--warmup", "2"], 0),
    (["explain-recompile", "fixtures/torch_xla/metric_even_steps/graphs.hlo.0", "--warmup", "2", "--json"], 0),
    (["compare", "fixtures/torch_xla/metric_even_steps/graphs.hlo.0#0", "fixtures/torch_xla/metric_even_steps/graphs.hlo.0#0"], 0),
], ids=["inspect", "explain", "explain --warmup", "explain --json", "compare"])
def test_a_reader_closing_the_pipe_early_leaves_the_exit_status_alone(args, status):
    """``hlodiff ... | head`` under ``set -o pipefail``: the status is still the command's verdict (it was 1, rich's
    and click's answer to a broken pipe, which reads as "something recompiled"), and nothing is printed on stderr."""
    command = [str(Path(sys.executable).with_name("hlodiff")), *args]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()  # what `head -c 10` does
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == status
    assert err == b""
