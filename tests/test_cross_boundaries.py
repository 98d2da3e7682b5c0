"""What each graph hands the next, exactly (issue 32, pytorch/xla#6347).

``fixtures/torch_xla/cross_pipeline.py`` runs under ``hlodiff record`` with its defaults (its ``_common`` replaced by
the shim, which keeps only the script's own truth: every boundary, from torch_xla's tensor ids, checked by the script
against each graph's parameters and outputs when it made the committed fixtures). ``hlodiff cost --json`` must name
every boundary with its exact tensor count, bytes and roles, and no boundary the program does not have. The
committed fixture folders are what a user captures by hand (reports printed before each sync, no ``reads=``): the
tensors they name are right, and the total is null with the capture that gives it.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from conftest import FIXTURES
from helpers import capture_free_env, cli_json, run_hlodiff as hlodiff, script_under_record, truth_of

pytestmark = [pytest.mark.xla,
              pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")]

VARIANTS = ("mb1", "mb2", "mb4", "fbo")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """Each variant recorded once, lazily: variant -> (folder of the recording, the run's own truth)."""
    done = {}

    def get(variant):
        if variant not in done:
            work = tmp_path_factory.mktemp(variant)
            script = script_under_record(work, "cross_pipeline")
            run = hlodiff("record", "--out", "run", "--", sys.executable, script, "--variant", variant,
                          cwd=work, env=capture_free_env())
            assert run.returncode == 0, run.stderr[-3000:]
            done[variant] = work / "run", json.loads((work / "shim_truth.json").read_text())
        return done[variant]

    return get


def edges(doc: dict) -> dict[tuple[int, int], dict]:
    return {(int(b["from"].rsplit("#", 1)[1]), int(b["to"].rsplit("#", 1)[1])): b for b in doc["boundaries"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_record_names_every_boundary_exactly(recordings, variant):
    folder, truth = recordings(variant)
    doc = cli_json("cost", str(folder), codes=(0,))
    want = {(b["from"], b["to"]): b for b in truth["boundaries"]}
    got = edges(doc)
    assert set(got) == set(want)  # every boundary, and none the program does not have
    for key, b in want.items():
        assert got[key]["count"] == b["count"], key
        assert got[key]["bytes"] == b["bytes"], key
        assert sorted(t["id"] for t in got[key]["tensors"]) == [t["id"] for t in b["tensors"]], key
        assert {r: v["bytes"] for r, v in got[key]["roles"].items()} == \
            {r: v["bytes"] for r, v in b["roles"].items()}, key
    assert doc["run"]["boundary_bytes"] == sum(b["bytes"] for b in truth["boundaries"])
    assert doc["unknowns"] == []
    assert [g["phase"] for g in doc["graphs"]] == truth["phases"]


@pytest.mark.parametrize("variant", ("mb2", "fbo"))
def test_crossing_tensors_carry_the_user_line_that_made_them(recordings, variant):
    """A parameter is made at the optimizer's line; an activation or a gradient at the forward's or the backward's
    line (torch_xla records no Python frame for ops autograd's engine runs on its own thread, so a gradient's last
    framed node may be the forward op it differentiates)."""
    folder, truth = recordings(variant)
    doc = cli_json("cost", str(folder), codes=(0,))
    model_lines = {truth_of("torch_xla", "cross_pipeline/" + variant)["user_line"], truth["backward_line"]}
    lines = {"activation": model_lines, "gradient": model_lines, "parameter": {truth["optimizer_line"]}}
    seen = set()
    for b in doc["boundaries"]:
        for t in b["tensors"]:
            if t["role"] in lines and t["user_line"] is not None:
                assert t["user_line"]["file"].endswith("cross_pipeline.py")
                if t["role"] != "activation":  # an activation may also be an input slice, made at the chunk line
                    assert t["user_line"]["line"] in lines[t["role"]], t
                seen.add(t["role"])
    assert {"activation", "gradient", "parameter"} <= seen


def test_growth_with_microbatches(recordings):
    """Two runs given together: each run's steps, and how the bytes held across boundaries grow from 1 to 4
    microbatches (activations held per microbatch, gradients handed from backward to backward)."""
    (one, t1), (four, t4) = recordings("mb1"), recordings("mb4")
    doc = cli_json("cost", str(one), str(four), codes=(0,))
    runs = doc["pipeline"]["runs"]
    assert [len(r["steps"]) for r in runs] == [2, 2]
    assert [s["forward_graphs"] for r in runs for s in r["steps"]] == [1, 1, 4, 4]
    assert all(s["complete"] for r in runs for s in r["steps"])
    (growth,) = doc["pipeline"]["growth"]
    assert growth["forward_graphs"] == [1, 4]

    def held(truth, step_graphs, role):  # each tensor once, in the step of the first graph reading it
        seen, total = set(), 0
        for b in sorted(truth["boundaries"], key=lambda b: b["to"]):
            for t in b["tensors"]:
                if b["to"] in step_graphs and t["id"] not in seen and t["role"] == role:
                    total += t["bytes"]
                seen.add(t["id"])
        return total

    last1, last4 = range(3, 6), range(9, 18)  # the second step's graphs
    assert growth["roles"]["activation"] == [held(t1, last1, "activation"), held(t4, last4, "activation")]
    assert growth["roles"]["gradient"] == [held(t1, last1, "gradient"), held(t4, last4, "gradient")]
    assert growth["roles"]["gradient"][1] > growth["roles"]["gradient"][0]


@pytest.mark.parametrize("variant", VARIANTS)
def test_reports_printed_by_hand_name_only_what_they_identify(variant):
    """No reads=: every tensor named crosses where it is said to, the total is null and the capture is named."""
    folder = FIXTURES / "torch_xla" / "cross_pipeline" / variant
    truth = truth_of(folder)
    doc = cli_json("cost", str(folder), codes=(0,))
    crossing = {(b["from"], b["to"], t["id"]) for b in truth["boundaries"] for t in b["tensors"]}
    named = {(k[0], k[1], t["id"]) for k, b in edges(doc).items() for t in b["tensors"]}
    assert named and named <= crossing
    assert doc["run"]["boundary_bytes"] is None
    (unknown,) = doc["unknowns"]
    assert unknown["figure"] == "boundary_bytes" and "hlodiff record" in unknown["capture"]


def test_cost_html_puts_every_boundary_into_the_step_on_an_edge_with_its_exact_bytes(recordings, tmp_path):
    """The drawing of the last complete step of a recorded run (record's reports: every boundary exact): one edge
    per boundary into the step's graphs, each titled with its tensor count and bytes from the run's own truth."""
    import html
    import re

    from hlodiff.render.units import human_bytes

    folder, truth = recordings("mb2")
    page = tmp_path / "cost.html"
    assert hlodiff("cost", str(folder), "--html", str(page)).returncode == 0
    svg = re.search(r"<svg class='pipeline'.*?</svg>", page.read_text(), re.S).group(0)
    titles = [html.unescape(t) for t in re.findall(r"<title>(.*?)</title>", svg)]
    last_step = range(5, 10)  # mb2: 5 graphs a step (2 forward, 2 backward, the optimizer), 2 steps
    into = [b for b in truth["boundaries"] if b["to"] in last_step]
    assert len(titles) == len(into)
    for b in into:
        edge = re.compile(rf"#{b['from']} -> \S+#{b['to']}: {b['count']} tensors, {re.escape(human_bytes(b['bytes']))}:")
        assert sum(1 for t in titles if edge.search(t)) == 1, b
