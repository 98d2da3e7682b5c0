"""Dynamo round 25: a list kept on the module that the compiled forward tests membership in (`if i in self.skip`,
LayerDrop drawn outside the compiled code) is a choice of which parts run: its row asks for a keep-mask tensor, not
for the same indices in a buffer (which would still need a Python branch); the look-alikes keep their rows."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.explain.dynamo_log_findings import recompiles_of

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _guarded(guard: str, code: str | None):
    failure = GuardFailure("0/0", guard, code=code)
    compiles = [DynamoCompile("0/0", "forward"), DynamoCompile("0/1", "forward", failures=[failure])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles))
    return r


@pytest.mark.parametrize("guard, code", [
    ("self.skip[0] == 3", "if i in self.skip:"),
    ("L['self'].drop_heads[1] == 2", "if h not in self.drop_heads:"),
    ("self._modules['enc'].skip[0] == 1", "    keep = [b for j, b in enumerate(blocks) if j not in self.skip]"),
    ("self.skip[0] == 3", "        elif self.depth > 2 and i in self.skip:"),
])
def test_a_list_the_forward_tests_membership_in_asks_for_a_keep_mask(guard, code):
    r = _guarded(guard, code)
    assert r.fix_rule == "dynamo_module_list_membership", r.fix_rule
    assert "keep-mask tensor" in r.fix and "register_buffer" not in r.fix and "expected" not in r.fix


@pytest.mark.parametrize("guard, code, rule", [
    # the same list made into a tensor inside the forward: the list row (a buffer) stays
    ("self.class_weights[0] == 1.0", "w = torch.tensor(self.class_weights, device=x.device)",
     "dynamo_module_list_item"),
    # iterating the list is no membership test, in a loop or in a comprehension (eleventh stop's read)
    ("self.skip[0] == 3", "for i in self.skip:", None),
    ("self.class_weights[0] == 1.0", "w = torch.tensor([c for c in self.class_weights], device=x.device)",
     "dynamo_module_list_item"),
    # membership in an argument's list, not the module's
    ("L['skip'][0] == 3", "if i in skip:", None),
    # no line quoted: the list row
    ("self.skip[0] == 3", None, "dynamo_module_list_item"),
])
def test_look_alikes_keep_their_rows(guard, code, rule):
    r = _guarded(guard, code)
    assert r.fix_rule != "dynamo_module_list_membership" and (rule is None or r.fix_rule == rule), r.fix_rule


def test_the_layerdrop_run_is_told_as_a_choice_for_a_mask():
    doc = cli_json("explain-recompile", str(SCENARIOS / "r25_d_layerdrop_outside"), codes=(1,))
    assert doc["dynamo"]["recompiles"][0]["fix_rule"] == "dynamo_module_list_membership"
    assert doc["headline"]["location"]["line"] == 28 and "keep-mask" in doc["headline"]["fix"]
