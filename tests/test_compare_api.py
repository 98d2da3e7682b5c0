"""The library entry point behind ``compare`` (hlodiff.api.compare_refs), and what it reads to get there."""

from __future__ import annotations

import json

from helpers import FIXTURES, cli
from hlodiff.api import compare_refs
from hlodiff.dumps import resolve_ref

METRIC = FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0"


def test_compare_refs_returns_the_diff_and_computes_the_cost_only_when_asked():
    plain = compare_refs(f"{METRIC}#0", f"{METRIC}#1")
    assert plain.cost is None and plain.to_json()["cost"] is None
    assert plain.exit_code == (0 if plain.diff.equal and not plain.diff.causes else 1)
    assert plain.to_json()["left_ref"].endswith("#0") and plain.to_json()["right_ref"].endswith("#1")
    costed = compare_refs(f"{METRIC}#0", f"{METRIC}#1", cost=True)
    assert costed.cost is not None and set(costed.cost) >= {"left", "right", "delta", "changes"}
    assert costed.diff.to_json() == plain.diff.to_json()


def test_a_graph_is_reached_without_reading_what_follows_it(tmp_path, monkeypatch):
    """PATH#N stops scanning at graph N: a save-tensors file whose tail is damaged (here a line past the length
    limit, which stops a scan with an error) still gives the graphs before the damage."""
    data = METRIC.read_bytes()
    second = data.index(b"[ScheduleSyncTensorsGraph]", 1)
    third = data.index(b"## BEGIN_GRAPH", data.index(b"[ScheduleSyncTensorsGraph]", second + 1))
    path = tmp_path / "graphs.hlo.0"
    path.write_bytes(data[:third] + b"x" * 5000 + b"\n" + data[third:])  # inside the third graph's entry
    monkeypatch.setenv("HLODIFF_MAX_LINE_BYTES", "4K")
    assert resolve_ref(f"{path}#1").index == 1  # the whole file is still refused by the scans that read it all
    assert resolve_ref(f"{path}#1").module().name == resolve_ref(f"{METRIC}#1").module().name


def test_explain_paths_gives_what_explain_recompile_prints():
    from hlodiff.api import explain_paths

    result = explain_paths([str(METRIC)])
    shown = cli("explain-recompile", str(METRIC), "--json")
    doc = json.loads(shown.stdout)
    assert shown.exit_code == result.exit_code == 1
    assert doc["inputs"] == result.to_json()["inputs"]
    assert len(doc["recompilations"]) == len(result.explanation.recompilations) > 0
