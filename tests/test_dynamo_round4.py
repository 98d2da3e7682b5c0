"""Dynamo, round 4 (docs/accuracy.md): the join of Dynamo's recompilations to the bridge's XLA graphs in a training
run, and the step graph that changes with an expected retrace told by a row of the fix table. Checked on real
captures (fixtures/scenarios/dynamo/) and on their look-alikes: a training recompilation compiles a forward and a
backward, a no_grad one the forward alone."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fix_rules import EXPECTED, RULES_BY_NAME

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _explain(target) -> tuple[dict, int]:
    result = cli("explain-recompile", str(target), "--json", codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


def _index(ref: str) -> int:
    return int(ref.rsplit("#", 1)[1])


def test_a_training_retrace_is_joined_to_its_forward_not_to_the_next_retrace_s_graph():
    """dyn_modulelist_grow: 0/1 compiled the forward #8 and its backward #10, 0/2 #16 and #18 (the user's syncs
    between them). One graph per recompilation from the end joined 0/1 to #16, 0/2's forward."""
    doc, _ = _explain(SCENARIOS / "dyn_modulelist_grow")
    dynamo = doc["dynamo"]
    joined = {r["compile_id"]: _index(r["difference_graph"]) for r in dynamo["recompiles"]}
    assert joined == {"0/1": 8, "0/2": 16}
    owned = {cid: [_index(ref) for ref in refs] for cid, refs in dynamo["xla_graphs"].items()}
    assert owned["0/1"] == [8, 10] and owned["0/2"] == [16, 18]


@pytest.mark.parametrize("name", ["dyn_no_grad_metric", "review2_dyn_nograd_eval/record"])
def test_a_no_grad_retrace_compiles_its_forward_alone_and_keeps_its_graph(name):
    """The look-alike: a recompilation under no_grad compiles no backward; its group is the forward alone, so the
    join takes the graph right after the user's last sync before it (the one-each join took the same)."""
    doc, status = _explain(SCENARIOS / name)
    dynamo = doc["dynamo"]
    assert status == 0
    for r in dynamo["recompiles"]:
        if r["xla"] == "compiled":
            assert r["difference_graph"] in dynamo["bridge_recompilations"]
            owned = dynamo["xla_graphs"][r["compile_id"]]
            assert owned[0] == r["difference_graph"]


def test_the_step_that_follows_an_expected_retrace_is_a_row_of_the_table():
    """The fix of a step graph that changed with an expected Dynamo retrace is the row
    ``dynamo_step_follows_expected`` (expected, names the retrace and its guard), not words written inline."""
    row = RULES_BY_NAME["dynamo_step_follows_expected"]
    assert row.name in EXPECTED and "{cid}" in row.text and "{guard}" in row.text
    doc, status = _explain(SCENARIOS / "dyn_attr_switch")
    follows = doc["dynamo"]["follows_expected"]
    fixes = {c["fix"] for r in doc["recompilations"] if r["graph"] in follows for c in r["causes"]}
    assert status == 0 and fixes == {"expected: follows from Dynamo's recompilation 0/1 above (self.use_aux == "
                                     "False): the step around the compiled call changed with it, each version "
                                     "compiled once; nothing to fix"}
