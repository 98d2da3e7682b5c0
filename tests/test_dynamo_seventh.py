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
