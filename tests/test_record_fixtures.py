"""The cheap capture gives the same answers as the full one: each fixture script, run unchanged under `hlodiff record`
(HLO only for compiled graphs, executions from the PT_XLA_DEBUG_LEVEL=2 log), is explained like the fixture's own
save-tensors dump: the same graphs compile, the same pattern (including "alternating" and "unbounded", which need
every cache hit), the same causes at the same lines.

The fixture scripts import ``_common`` from their parent folder; here that is ``tests/data/record_shim/_common.py``,
which runs the same code without a capture of its own, so line numbers are the fixture's.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from helpers import FIXTURES, capture_free_env, record_json, run_hlodiff as hlodiff, script_under_record

pytestmark = [pytest.mark.xla,
              pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")]


def causes(doc: dict) -> list[tuple[int, list[tuple[str, list[tuple[str, int]]]]]]:
    return [(r["index"], [(c["kind"], [(Path(loc["file"]).name, loc["line"]) for loc in c["locations"]])
                          for c in r["causes"]]) for r in doc["recompilations"]]


@pytest.mark.parametrize("scenario", ["metric_even_steps", "unbounded_growth", "lr_constant", "item_partial"])
def test_recording_a_fixture_script_explains_it_like_the_fixture(tmp_path, scenario):
    script = script_under_record(tmp_path, scenario)
    recorded = hlodiff("record", "--out", "run", "--json", "--", sys.executable, script, cwd=tmp_path,
                       env=capture_free_env())
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    new = record_json(recorded.stdout)
    old = json.loads(hlodiff("explain-recompile", "--json", str(FIXTURES / "torch_xla" / scenario)).stdout)

    assert not list((tmp_path / "run").glob("graphs.hlo*"))  # no HLO for cache hits was written
    assert len(new["graphs"]) == len(old["graphs"])
    assert [g["compiled"] for g in new["graphs"]] == [g["compiled"] for g in old["graphs"]]
    # The record folder also has compile_times.tsv, so its summary ends with what the recompilations cost
    assert re.fullmatch(r"; recompilations? cost [0-9.]+ m?s of [0-9.]+ m?s compiling \(torch_xla CompileTime\)",
                        new["summary"].removeprefix(old["summary"])), new["summary"]
    assert new["patterns"] == old["patterns"]
    # The same causes at the same lines. The compiled module (XLA's dump) also carries torch_xla's buffer donation,
    # which the save file's lowering lacks: where donation changed with the graph, one more cause, 'aliasing',
    # follows the others.
    for (index, want), (got_index, got) in zip(causes(old), causes(new), strict=True):
        assert got_index == index
        assert got[:len(want)] == want
        assert all(kind == "aliasing" for kind, _ in got[len(want):])
    assert [[(t["side"], t["output"], t["shape"], t["ir_op"]) for t in r["live_tensors"]]
            for r in new["recompilations"]] == [[(t["side"], t["output"], t["shape"], t["ir_op"])
                                                  for t in r["live_tensors"]] for r in old["recompilations"]]
