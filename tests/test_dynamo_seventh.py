"""Dynamo words and live lines (docs/accuracy.md, 2026-11-27 seventh stop): the eager step that cycles with a
compiled optimizer's `.grad is None` retrace is the guard's story, not "gradient accumulation"; checked on the real
run and on the expected retrace whose step changes with it (its own row)."""

from __future__ import annotations

import json

from helpers import FIXTURES, cli
from hlodiff.diff.fix_rules import EXPECTED, RULES_BY_NAME

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _explain(name: str, *extra: str) -> tuple[str, int]:
    result = cli("explain-recompile", str(SCENARIOS / name), *extra, codes=(0, 1))
    return result.stdout, result.exit_code


def test_the_step_cycling_with_a_grad_none_retrace_follows_the_guard():
    text, _ = _explain("d11_opt_grad_none")
    assert "gradient accumulation" not in text and "accumulate into buffers" not in text
    doc = json.loads(_explain("d11_opt_grad_none", "--json")[0])
    follows = doc["dynamo"]["follows_expected"]
    rules = {c["fix_rule"] for r in doc["recompilations"] if r["graph"] in follows for c in r["causes"]}
    assert follows and rules == {"dynamo_step_follows_guard"}
    row = RULES_BY_NAME["dynamo_step_follows_guard"]
    assert row.name not in EXPECTED and "{guard}" in row.text and "nothing to fix" not in row.text


def test_an_expected_retrace_keeps_its_expected_row():
    doc = json.loads(_explain("dyn_attr_switch", "--json")[0])
    follows = doc["dynamo"]["follows_expected"]
    rules = {c["fix_rule"] for r in doc["recompilations"] if r["graph"] in follows for c in r["causes"]}
    assert rules == {"dynamo_step_follows_expected"}


def test_the_eager_graph_past_the_recompile_limit_follows_from_the_limit():
    text, code = _explain("d11_mixup_lambda")
    assert code == 1 and "a value is kept on some steps only" not in text and "expected warm-up" not in text
    doc = json.loads(_explain("d11_mixup_lambda", "--json")[0])
    past = doc["dynamo"]["past_limit_graphs"]
    assert len(past) == 1 and past[0].endswith("d11_mixup_lambda/dump#4")
    rules = {c["fix_rule"] for r in doc["recompilations"] if r["graph"] in past for c in r["causes"]}
    assert rules == {"dynamo_past_limit"} and "dynamo_past_limit" not in EXPECTED
    assert doc["headline"]["kind"] == "python_value"


def test_no_limit_no_past_limit_graphs():
    """The look-alike: a float guarded on every call below the limit (dyn_python_float_arg-like runs) keeps its
    eager graphs' own rows; only a frame Dynamo stopped compiling runs eagerly."""
    for name in ("d11_opt_grad_none", "dyn_attr_switch"):
        doc = json.loads(_explain(name, "--json")[0])
        assert doc["dynamo"]["limit_hits"] == [] and doc["dynamo"]["past_limit_graphs"] == []
