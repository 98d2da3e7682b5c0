"""torch.compile(backend="openxla") runs of the new-user review of 2026-11-27 (F5): the XLA bridge's graphs follow
from what Dynamo did and get no stories of their own (a dtype cast, a metric, gradient accumulation), the first line
stays short, live lines that come late say so, and a guard's path cut by torch is read whole.
Captures: fixtures/scenarios/dynamo/review2_dyn_optional_mask (TORCH_LOGS + dump) and review2_dyn_nograd_eval
(hlodiff record), whose truths (the reviewer's expectations) were committed before hlodiff ran on them."""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from helpers import cli, cli_json
from hlodiff.dumps.dynamo_read import read_dynamo_log

DYN = FIXTURES / "scenarios" / "dynamo"
INVENTED = ("x.long()", "gradient accumulation", "sync at the same points", "a metric", "torch.where",
            "kept on some steps")


@pytest.mark.parametrize("capture,code", [("review2_dyn_optional_mask", 1), ("review2_dyn_nograd_eval/record", 0)])
def test_the_bridge_s_graphs_follow_from_dynamo(capture, code):
    doc = cli_json("explain-recompile", str(DYN / capture), codes=(code,))
    bridge = set(doc["dynamo"]["bridge_recompilations"])
    told = [c for r in doc["recompilations"] if r["graph"] in bridge for c in r["causes"]]
    assert told, "the run has recompilations of the bridge's graphs"
    for cause in told:
        assert cause["fix_rule"].startswith("dynamo_bridge"), cause
        assert not any(w in cause["fix"] for w in INVENTED), cause["fix"]
    assert len(doc["summary"]) < 480, doc["summary"]  # the reviewer's were 600-900 characters


def test_live_lines_neither_invent_nor_come_back_unannounced():
    out = cli("watch", str(DYN / "review2_dyn_nograd_eval" / "record"), "--until-idle", "1", codes=(0, 1)).output
    lines = [line for line in out.splitlines() if line.startswith("hlodiff: step")]
    assert lines
    latest = -1
    for line in lines:
        step = int(re.match(r"hlodiff: step (\d+)", line).group(1))
        if step < latest:  # an earlier step told after later ones: only as a late word
            assert "now that more of the run is known" in line, line
        latest = max(latest, step)
        if "torch.compile (XLA bridge)" in line or "same story" in line:
            assert not any(w in line for w in INVENTED), line


def test_a_guard_path_torch_cut_short_is_the_function_s_file(tmp_path):
    """torch 2.9 prints the guard's file cut to its last characters (the reviewer's /tmp/review2 run, three lines
    of its TORCH_LOGS=recompiles log); the definition two lines above names it whole."""
    pre = "V1127 01:08:00.598000 25553 torch/_dynamo/guards.py:4181] [0/1] [__recompiles] "
    log = tmp_path / "stderr.log"
    log.write_text(pre + "Recompiling function forward in /tmp/review2/r9_dyn_optional_mask.py:14\n"
                   + pre + "    triggered by the following guard failure(s):\n"
                   + pre + "    - 0/0: mask is None" + " " * 45
                   + "# if mask is not None:  # mp/review2/r9_dyn_optional_mask.py:17 in forward\n")
    (c,) = read_dynamo_log(str(log)).compiles
    src = c.failures[0].source
    assert (src.file, src.line) == ("/tmp/review2/r9_dyn_optional_mask.py", 17)
    # a path that is not the end of the definition's stays as printed
    log.write_text(log.read_text().replace("# mp/review2/r9_dyn", "# other/r9_dyn"))
    (c,) = read_dynamo_log(str(log)).compiles
    assert c.failures[0].source.file == "other/r9_dyn_optional_mask.py"
