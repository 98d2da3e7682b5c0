"""Graph boundaries from a recording name exactly the tensors that cross (pytorch/xla#6347).

``fixtures/torch_xla/pipeline.py`` runs unchanged under ``hlodiff record`` (its ``_common`` replaced by the shim, which
keeps only the script's ground truth: torch_xla's own list of the device data each sync's graph reads, taken by the
script on the tensors it knows that sync computes). ``record`` asks torch_xla the same question on every live tensor
when it takes a report (``reads=`` in the ``## SYNC`` header), so a graph that accumulates into the gradients an
earlier backward computed is told from one that merely has same-shaped biases around, which a printed report cannot
tell apart.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys

import pytest

from helpers import capture_free_env, run_hlodiff as hlodiff, script_under_record

pytestmark = [pytest.mark.xla,
              pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")]


@pytest.fixture(scope="module", params=[("mb2", "compilations"), ("mb4", "every-sync")], ids=lambda p: "-".join(p))
def recorded(request, tmp_path_factory):
    """(cost JSON of the recording, the script's truth, the executions that have a report with reads). By default
    ``record`` reports at the first sync and after compilations; ``HLODIFF_LIVE_TENSORS=every-sync`` at every sync."""
    variant, policy = request.param
    work = tmp_path_factory.mktemp(variant)
    script = script_under_record(work, "pipeline")
    run = hlodiff("record", "--out", "run", "--", sys.executable, script, "--variant", variant,
                  "--out", str(work / "scratch"), cwd=work, env=capture_free_env(HLODIFF_LIVE_TENSORS=policy))
    assert run.returncode == 0, run.stderr[-3000:]
    cost = hlodiff("cost", "--json", str(work / "run"))
    assert cost.returncode == 0, cost.stderr[-3000:]
    headers = re.findall(r"^## SYNC (\d+) .*reads=", (work / "run" / "tensors_report.txt").read_text(), re.M)
    return json.loads(cost.stdout), json.loads((work / "shim_truth.json").read_text()), {int(n) for n in headers}


def truth_crossings(probes: list[dict]) -> set[tuple[int, int, int]]:
    """(computing entry, reading entry, tensor id) for every read of a tensor an earlier sync computed."""
    made: dict[int, int] = {}
    out = set()
    for probe in probes:
        out |= {(made[i], probe["entry"], i) for i in probe["reads"] if made.get(i, probe["entry"]) < probe["entry"]}
        made.update({i: probe["entry"] for i in probe["computes"]})
    return out


def named(doc: dict) -> set[tuple[int, int, int]]:
    return {(int(b["from"].rsplit("#", 1)[1]), int(b["to"].rsplit("#", 1)[1]), t["id"])
            for b in doc["boundaries"] for t in b["tensors"]}


def test_recorded_boundaries_name_exactly_the_tensors_that_cross(recorded):
    doc, truth, reported = recorded
    probes = truth["probes"]
    assert len(doc["graphs"]) == len(probes)
    computed_by = {i: p["entry"] for p in probes for i in p["computes"]}
    for source, target, tensor_id in named(doc):
        assert tensor_id in probes[target]["reads"], (source, target, tensor_id)
        # a tensor only autograd holds (nn.Linear's saved transposed weight) is in no script-known list
        assert computed_by.get(tensor_id, source) == source, (source, target, tensor_id)
    # every crossing between graphs whose reports were taken (record takes one at the first sync and after each
    # compilation: every graph of the first step here) is named: none missed, at every graph that reads it
    want = {c for c in truth_crossings(probes) if c[0] in reported and c[1] in reported}
    assert want and want <= named(doc), sorted(want - named(doc))
    if len(reported) == len(probes):  # every sync reported: every crossing of the run
        assert truth_crossings(probes) <= named(doc)
    # a graph that compiled with no report before it is said, since what crosses into or out of it is not named
    unreported = [g["ref"] for g in doc["graphs"] if g["compiled"] and g["index"] not in reported]
    said = [w for w in doc["warnings"] if "no live-tensor report before them" in w]
    assert len(said) == (1 if unreported else 0)
    assert all(ref in said[0] for ref in unreported[:4])
    assert all(t["evidence"] == "read" for b in doc["boundaries"] for t in b["tensors"]
               if int(b["to"].rsplit("#", 1)[1]) in reported)


def test_second_backward_takes_the_gradients_the_first_computed(recorded):
    """Gradient accumulation: the .grad tensors the first backward computed cross into the second backward, which
    adds to them. A printed report cannot name these: they are listed like the same-shaped parameters."""
    doc, truth, reported = recorded
    probes = truth["probes"]
    assert 3 in reported
    crossing = [b for b in doc["boundaries"] if b["from"].endswith("#1") and b["to"].endswith("#3")]
    assert len(crossing) == 1
    assert sorted(t["id"] for t in crossing[0]["tensors"]) == sorted(probes[1]["computes"])
    d_in, d_hid, d_out = 16, 24, 6  # pipeline.py's sizes: one gradient per parameter of both stages
    grads = {f"f32[{d_hid},{d_in}]": d_hid * d_in, f"f32[{d_hid}]": d_hid, f"f32[{d_out},{d_hid}]": d_out * d_hid,
             f"f32[{d_out}]": d_out}
    assert sorted(t["shape"] for t in crossing[0]["tensors"]) == sorted(grads)
    assert crossing[0]["bytes"] == 4 * sum(grads.values())
