"""New-user review 22, F4 and F5. F4 (rev22_tc_cfg_dict): a config dict's ``label_smoothing`` changed once by a callback and
read into ``F.cross_entropy(label_smoothing=cfg["label_smoothing"])`` was told "changes from call to call ... pass it
as a tensor": the number-only row never fired because the guard ``G['cfg']['label_smoothing']`` was looked for as
``cfg.label_smoothing`` only, and a value whose guard failed once was told as one that changes every call."""

from __future__ import annotations

import json

import pytest

from explain_helpers import guard_recompiles
from helpers import FIXTURES, cli
from hlodiff.diff.fixes import choose
from hlodiff.explain.dynamo_number_params import number_only_param, positional_number_param

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


@pytest.mark.parametrize("code", [
    'loss = F.cross_entropy(z, y, label_smoothing=cfg["label_smoothing"])',
    "loss = F.cross_entropy(z, y, label_smoothing=cfg['label_smoothing'])",
    "loss = F.cross_entropy(z, y, label_smoothing=cfg.label_smoothing)",
])
def test_a_dict_item_is_read_in_either_quote_or_as_an_attribute(code):
    assert number_only_param("G['cfg']['label_smoothing']", code) == "label_smoothing"


@pytest.mark.parametrize("name, code", [
    ("G['cfg']['label_smoothing']", 'loss = F.cross_entropy(z, y, label_smoothing=cfg["other"])'),  # another key
    ("G['cfg']['label_smoothing']", 'loss = F.cross_entropy(z, y, label_smoothing=hp["label_smoothing"])'),  # another dict
    ("G['cfg']['label_smoothing']", 'loss = my_loss(z, y, label_smoothing=cfg["label_smoothing"])'),  # user's function
    ("G['cfg']['w']", 'loss = loss + cfg["w"] * reg'),  # arithmetic: a tensor could carry it
])
def test_look_alikes_of_a_dict_item_are_not_number_only(name, code):
    assert number_only_param(name, code) is None


def test_a_dict_item_passed_by_position_is_read_too():
    assert positional_number_param("G['cfg']['p']", 'h = F.dropout(h, cfg["p"])') == "p"
    assert positional_number_param("L['self']._modules['drop'].p", "return F.dropout(input, self.p, self.training)") == "p"


def test_the_float_once_row_is_chosen_on_its_evidence_and_says_once():
    rule = choose("python_value", frozenset({"dynamo", "python_float", "float_once"}))
    assert rule.name == "dynamo_python_float_once"
    assert "from call to call" not in rule.text and "changed once" in rule.text
    # both readings of one failed guard: a value set once, or a tensor on other calls (dyn_tensor_or_float)
    assert "another type" in rule.text and not rule.text.startswith("expected")
    # a number-only parameter keeps its own row (no tensor can go there), a limit hit keeps the limit's
    assert choose("python_value", frozenset({"dynamo", "python_float", "float_once", "number_only_param"})).name \
        == "dynamo_number_only_param"
    assert choose("python_value", frozenset({"dynamo", "python_float", "float_once", "limit_hit"})).name \
        == "dynamo_python_value_limit"


@pytest.mark.parametrize("guards, rule", [
    (("G['cfg']['temperature'] == 0.0",), "dynamo_python_float_once"),
    (("G['cfg']['temperature'] == 0.0", "G['cfg']['temperature'] == 0.5"), "dynamo_python_value"),
    (("L['lr'] == 0.1",), "dynamo_python_value_lr"),
])
def test_a_float_that_failed_its_guard_once_is_told_once(guards, rule):
    assert {r.fix_rule for r in guard_recompiles(*guards, function="step")} == {rule}


def test_review22_tc2_is_told_one_graph_per_value_never_as_a_tensor():
    result = cli("explain-recompile", str(SCENARIOS / "rev22_tc_cfg_dict" / "record"), "--json", codes=(0,))  # expected: exit 0
    doc = json.loads(result.stdout)
    assert [r["fix_rule"] for r in doc["dynamo"]["recompiles"]] == ["dynamo_number_only_param"]
    head = doc["headline"]
    assert "label_smoothing=" in head["fix"] and "from call to call" not in head["fix"]
    assert "pass it as a tensor" not in head["fix"]


def test_the_first_compile_s_bridge_graphs_are_its_own_whatever_a_later_recompile_was():
    """Review 22, F5: the bridge's graphs of the first compile (Dynamo's first graph's backward, the sync of the
    call's inputs) were told "recompiled ... act on Dynamo's recompilation above" and their family "alternating"
    when Dynamo's later recompile was one to fix (tc2 before F4; rev20_tc_dropout_schedule), and "expected" when it
    was expected (tc1): the same graphs, told the bridge's own in both; the graphs after the recompile follow it."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "rev20_tc_dropout_schedule" / "record"), "--json",
                         codes=(1,)).stdout)
    rules = [c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]]
    assert "dynamo_bridge_beside_recompile" not in rules and "dynamo_bridge_own" in rules
    assert "dynamo_bridge_follows" in rules  # the graphs the recompiles made still follow them
    assert not any(p.startswith("alternating: torch.compile (XLA bridge)") for p in doc["patterns"])
    assert doc["headline"]["fix"].startswith("self._modules['drop'].p")  # the story itself is unchanged
