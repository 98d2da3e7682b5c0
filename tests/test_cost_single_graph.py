"""The pipeline story beside its single-graph alternative, and drawn (issue 32): ``hlodiff cost SPLIT SINGLE`` on
the committed ``fixtures/torch_xla/pipeline`` runs (``mb1``/``mb4``: forward and backward synced apart per
microbatch; ``onegraph``: the same 4 microbatches in one graph per step), captured by hand (reports printed before
each sync, so the bytes held are the named ones, a lower bound)."""

from __future__ import annotations

import html
import re

from conftest import FIXTURES
from helpers import cli, cli_json, truth_of

from hlodiff.render.units import human_bytes

PIPELINE = FIXTURES / "torch_xla" / "pipeline"


def _last_complete(doc: dict, source: str) -> dict:
    (run,) = [r for r in doc["pipeline"]["runs"] if r["source"] == source]
    return [s for s in run["steps"] if s["complete"]][-1]


def test_a_split_run_is_set_beside_the_peak_of_its_single_graph_alternative():
    truth = truth_of("torch_xla", "pipeline", "onegraph")
    assert truth["microbatches"] == 4 and len({e["graph_hash"] for e in truth["entries"]}) == 1  # one graph a step
    doc = cli_json("cost", PIPELINE / "mb4", PIPELINE / "onegraph", codes=(0,))
    (row,) = doc["pipeline"]["single_graph"]
    graphs = {g["ref"]: g for g in doc["graphs"]}
    step = _last_complete(doc, row["split"])
    assert row["split"].endswith("mb4/graphs.hlo.0") and row["single"].endswith("onegraph/graphs.hlo.0")
    assert row["split_graphs"] == 9 and row["held_bytes"] == step["bytes"] > 0
    assert row["held_exact"] is False  # printed by hand: what the reports identify
    assert row["roles"] == {role: t["bytes"] for role, t in step["roles"].items()}
    single = graphs[row["single_graph"]]
    assert (row["single_peak_bytes"], row["single_peak_source"], row["single_peak_rounding_bytes"]) == \
        (single["peak_bytes"], single["peak_source"], single["peak_rounding_bytes"])
    step_graphs = [g for g in doc["graphs"] if row["split"] in g["ref"]][-9:]
    assert row["split_peak_bytes"] == max(g["peak_bytes"] for g in step_graphs)
    assert row["single_peak_bytes"] > row["split_peak_bytes"]  # one graph keeps every microbatch's activations
    assert doc["pipeline"]["growth"] == []  # a run of one graph per step is no point of the split's growth


def test_growth_compares_the_split_runs_and_each_is_set_beside_the_single_graph():
    doc = cli_json("cost", PIPELINE / "mb1", PIPELINE / "mb4", PIPELINE / "onegraph", codes=(0,))
    (growth,) = doc["pipeline"]["growth"]
    assert growth["forward_graphs"] == [1, 4]
    assert [r["split_graphs"] for r in doc["pipeline"]["single_graph"]] == [3, 9]
    one_run = cli_json("cost", PIPELINE / "mb4", codes=(0,))
    assert one_run["pipeline"]["single_graph"] == []  # only one kind at hand: nothing beside


def test_cost_html_draws_the_step_as_graphs_with_the_bytes_on_the_edges(tmp_path):
    page_path = tmp_path / "cost.html"
    cli("cost", PIPELINE / "mb4", PIPELINE / "onegraph", "--html", page_path, codes=(0,))
    doc = cli_json("cost", PIPELINE / "mb4", PIPELINE / "onegraph", codes=(0,))
    text = page_path.read_text()
    svg = re.search(r"<svg class='pipeline'.*?</svg>", text, re.S).group(0)
    step = _last_complete(doc, doc["pipeline"]["single_graph"][0]["split"])
    first, last = int(step["first"].rsplit("#", 1)[1]), int(step["last"].rsplit("#", 1)[1])
    assert [int(n) for n in re.findall(r">#(\d+)</text>", svg)] == list(range(first, last + 1))
    into = [b for b in doc["boundaries"] if b["to"].endswith(tuple(f"#{k}" for k in range(first, last + 1)))
            and "mb4" in b["to"]]
    titles = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", svg)]
    assert len(titles) == len(into)
    for b in into:
        assert any(t.startswith(f"{b['from']} -> {b['to']}: {b['count']} tensors, {human_bytes(b['bytes'])}")
                   for t in titles), b
    assert "Beside the single-graph alternative" in text
    assert html.escape(human_bytes(doc["pipeline"]["single_graph"][0]["single_peak_bytes"])) in text
