"""Leftovers, second pass (fourteenth stop): the fix names the line the report leads with, the capacity read that
sizes what a mask fills leads (tests/test_review23.py), a cache grown by one each call gets one size and a mask."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from helpers import FIXTURES, cli_json
from hlodiff.explain import decision_line
from hlodiff.hlo.model import SourceFrame

SCEN = FIXTURES / "scenarios"
TX_SOURCES = {"HLODIFF_SOURCE_MAP": f"/home/user/project={SCEN / 'torch_xla'}"}
LOSS_DICT = SCEN / "torch_xla" / "rev7_loss_dict" / "record"


# -- the fix's line is the location's line ------------------------------------------------------------------------

def _loss_dict_head(env) -> dict:
    return cli_json("explain-recompile", str(LOSS_DICT), codes=(0, 1), env=env)["headline"]


def test_a_loss_term_added_by_an_if_names_that_if_in_its_fix_too():
    head = _loss_dict_head(TX_SOURCES)
    assert head["location"]["line"] == 11
    assert "the ops traced under the `if` at rev7_loss_dict.py:11 run every 3 steps" in head["fix"]
    assert "rev7_loss_dict.py:13" not in head["fix"]


def test_without_an_if_the_fix_keeps_the_traced_line_it_leads_with(tmp_path):
    text = (SCEN / "torch_xla" / "rev7_loss_dict.py").read_text().replace(
        "    if step % 3 == 2:", "    for _ in range(1):")
    (tmp_path / "rev7_loss_dict.py").write_text(text)
    head = _loss_dict_head({"HLODIFF_SOURCE_MAP": f"/home/user/project={tmp_path}"})
    assert head["location"]["line"] == 13 and "the ops traced at rev7_loss_dict.py:13 run" in head["fix"]


class _Source:
    """A source whose only `if` is at line ``at``, around the line below it."""

    def __init__(self, at: int | None):
        self.at = at

    def enclosing_if(self, file, line):
        return self.at if self.at is not None and line == self.at + 1 else None


def _cause(fix: str, lead: int, was: int) -> tuple:
    cause = NS(fix=fix, locations=[SourceFrame("/p/t.py", lead, "f"), SourceFrame("/p/t.py", was, "f")])
    return cause, SourceFrame("/p/t.py", was, "f")


@pytest.mark.parametrize("row", range(len(decision_line.LEAD_WORDS)))
def test_each_lead_words_row_says_the_if_when_the_lead_is_one(row):
    said, told = decision_line.LEAD_WORDS[row]
    cause, before = _cause(said.format(old="t.py:13") + " every 3 steps", lead=11, was=13)
    decision_line._fix_names_the_lead(cause, before, _Source(11))
    assert cause.fix == told.format(new="t.py:11") + " every 3 steps"
    decision_line.enclosing_if.cache_clear()


def test_a_lead_that_is_no_if_only_moves_the_line_and_never_a_longer_one():
    cause, before = _cause("the ops traced at t.py:1 and t.py:13 differ", lead=7, was=1)
    decision_line._fix_names_the_lead(cause, before, _Source(None))
    assert cause.fix == "the ops traced at t.py:7 and t.py:13 differ"
    decision_line.enclosing_if.cache_clear()
    unmoved, before = _cause("see t.py:5", lead=5, was=5)
    decision_line._fix_names_the_lead(unmoved, before, _Source(4))
    assert unmoved.fix == "see t.py:5"
    decision_line.enclosing_if.cache_clear()


# -- a size one larger at every compilation: one size and a mask, not buckets -------------------------------------

@pytest.mark.parametrize("values,largest", [
    (("1", "2", "3", "4", "5", "6", "7", "8"), 8),  # x14c_jx_kv_host_slice: the host cache's filled rows
    (("3", "4", "5", "6", "7", "8"), 8),  # jax_kv_concat
    (("54", "52", "58", "56"), None),  # x14c_tx_host_embed_unique: counts drawn from the data
    (("64", "128", "256"), None),  # buckets
    (("8", "7", "6"), None),  # shrinking
    (("3", "4"), None),  # two sizes say no trend
    (("1", "3", "5"), None),  # a step of 2: not one row per call
])
def test_a_size_up_by_one_at_every_compilation_is_read_from_the_values_alone(values, largest):
    from hlodiff.diff.value_facts import up_by_one

    assert up_by_one(values) == largest


@pytest.mark.parametrize("name,rule", [
    ("x14c_jx_kv_host_slice", "shape_up_by_one_jax"),
    ("jax_kv_concat", "shape_up_by_one_jax"),
    ("rev5_generate_concat", "shape_growing_concat_jax"),  # its own concatenation read from the source stays
])
def test_a_cache_one_row_longer_each_call_is_told_one_size_and_a_mask(name, rule):
    doc = cli_json("explain-recompile", str(SCEN / "jax" / name), codes=(1,),
                   env={"HLODIFF_SOURCE_MAP": f"/home/user/project={SCEN / 'jax'}"})
    head = doc["headline"]
    told = {c["fix_rule"]: c["fix"] for r in doc["recompilations"] for c in r["causes"][:1]}
    assert rule in told and head["fix"] == told[rule], head["fix"]
    if rule == "shape_up_by_one_jax":
        assert "largest length (8" in head["fix"] and "mask" in head["fix"]


# -- review 23 F6: the XLA headline's sizes are Dynamo's guarded sizes: one cause, one fix ------------------------

BEAMS = SCEN / "cost" / "rev23_tc_beams_read_after_sync" / "record"  # d2's program under `hlodiff record`


def test_beams_are_one_cause_with_one_fix():
    from helpers import cli

    out = cli("explain-recompile", str(BEAMS), codes=(0, 1)).stdout
    fixes = [line for line in out.split("\n\n", 1)[0].splitlines() + out.split("\n\n", 1)[1].splitlines()[:3]
             if line.lstrip().startswith("fix: ")]
    assert fixes and all("pad every batch to one fixed size" in f for f in fixes), fixes
    assert "with it: topk's k changes (4, 2, 3): the same sizes (2, 3, 4) as Dynamo's guard above" in out


@pytest.mark.parametrize("seen,plan,same", [
    ("dim 0 of h: 4, 2, 3", (2, 3, 4), (2, 3, 4)),  # d2: num_beams twice
    ("dim 0 of h: 4, 2, 3", (2, 4), ()),  # the XLA size took other values: two causes, two fixes
    ("dim 0 of h: 8 -> 4", (4, 8), (4, 8)),
    ("dim 1 of ids: 7", (7,), ()),  # one size says nothing shared
])
def test_a_guard_and_a_graph_are_one_cause_only_when_their_sizes_are_the_same(seen, plan, same):
    from hlodiff.explain.dynamo_same_values import same_sizes

    dynamo = NS(headline=NS(kind="shape", seen=seen))
    cause = NS(kind="shape", plan=NS(to_json=lambda: {"values": [{"size": n} for n in plan]}))
    assert sorted(same_sizes(dynamo, NS(causes=[cause]))) == list(same)
    other = NS(headline=NS(kind="python_value", seen=seen))  # not a size guard: no sizes to share
    assert same_sizes(other, NS(causes=[cause])) == frozenset()
