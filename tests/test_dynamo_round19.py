"""Dynamo round 19 (docs/accuracy.md, r19_d_layer_idx_attr): six blocks of one class, each compiled, branch on their
own ``self.layer_idx``. The first recompile fails on block 0's input (data, without gradient), the five after it on
``self.layer_idx == k``: the reason that recurs across the frame's recompilations leads, not the first one's single
reason; and a module's number the source sets only in ``__init__`` is told as one trace per instance (compile the
model once, keep the per-layer choice out of the forward), not as a value that changes from call to call."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.dumps.init_attributes import set_only_in_init
from hlodiff.explain.dynamo_log_findings import recompiles_of
from hlodiff.explain.dynamo_types import DynamoFindings, recurring_lead

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_PROJECT = "/home/user/project"


def _findings(*guards: str) -> DynamoFindings:
    """One frame's compiles, each recompile failing on the guard given (``frame:guard`` picks another frame)."""
    compiles, attempts = [], {}
    for guard in guards:
        frame, _, guard = guard.rpartition(":") if guard[:1].isdigit() else ("0", "", guard)
        n = attempts.setdefault(frame, 0)
        if n == 0:
            compiles.append(DynamoCompile(f"{frame}/0", "forward"))
        attempts[frame] = n + 1
        compiles.append(DynamoCompile(f"{frame}/{n + 1}", "forward", failures=[GuardFailure(f"{frame}/{n}", guard)]))
    log = DynamoLog("x", "text", compiles)
    return DynamoFindings(["x"], list(log.compiles), recompiles_of(log))


_GRAD = "tensor 'x' requires_grad mismatch. expected requires_grad=0"


def test_a_guard_that_recurs_leads_the_first_recompile_s_single_reason():
    found = _findings(_GRAD, *(f"self.layer_idx == {k}" for k in range(1, 5)))
    assert found.headline.guard.guard == "self.layer_idx == 1"
    assert "self.layer_idx == 1" in found.sentence() and "requires_grad" not in found.sentence()


@pytest.mark.parametrize("guards, lead", [
    ([_GRAD, "self.layer_idx == 1"], _GRAD),                           # once each: the first leads
    (["self.scale == 0.5", "self.scale == 0.25", _GRAD], "self.scale == 0.5"),  # the first recurs itself
    ([_GRAD, "1:self.step == 1", "1:self.step == 2"], _GRAD),          # the recurring one is another frame's
])
def test_the_first_recompile_keeps_the_lead_otherwise(guards, lead):
    found = _findings(*guards)
    assert recurring_lead(found.recompiles).guard.guard == lead


def _write(tmp_path, body: str) -> str:
    path = tmp_path / "m.py"
    path.write_text(body)
    return str(path)


_CLASS = ("class Block:\n    def __init__(self, i):\n        self.layer_idx = i\n\n"
          "    def forward(self, x):\n        return x if self.layer_idx % 2 else -x\n")


@pytest.mark.parametrize("tail, once", [
    ("", True),                                                        # set only at construction
    ("b = Block(0)\nfor i in range(3):\n    b.layer_idx = i\n", False),  # changed in the loop
    ("b = Block(0)\nsetattr(b, 'layer_idx', 2)\n", False),               # changed by name
    ("class Other:\n    def step(self):\n        self.layer_idx += 1\n", False),  # counted up in a method
])
def test_an_attribute_set_only_in_init_is_fixed_per_instance(tmp_path, tail, once):
    assert set_only_in_init(_write(tmp_path, _CLASS + tail), "layer_idx") is once


def test_a_file_not_on_disk_or_an_attribute_it_never_sets_is_not_per_instance(tmp_path):
    assert not set_only_in_init(str(tmp_path / "gone.py"), "layer_idx")
    assert not set_only_in_init(_write(tmp_path, _CLASS), "p")  # torch's own (Dropout.p): not the user's __init__


def _explain(name: str, sources: bool = True) -> tuple[dict, int]:
    env = {"HLODIFF_SOURCE_MAP": f"{_PROJECT}={SCENARIOS}"} if sources else {}
    result = cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1), env=env)
    return json.loads(result.stdout), result.exit_code


def test_the_per_layer_blocks_are_told_as_one_trace_per_layer():
    doc, code = _explain("r19_d_layer_idx_attr")
    head = doc["dynamo"]["headline"]
    assert head["guard"] == "self.layer_idx == 1" and head["location"]["line"] == 23 and code == 1
    assert head["fix_rule"] == "dynamo_module_instance_number"
    assert "compile the whole model once" in head["fix"] and "requires_grad" not in head["fix"]


def test_without_the_source_the_recurring_guard_still_leads_with_the_module_number_row():
    doc, _ = _explain("r19_d_layer_idx_attr", sources=False)
    head = doc["dynamo"]["headline"]
    assert head["guard"] == "self.layer_idx == 1" and head["fix_rule"] == "dynamo_module_number"


def test_two_checks_of_one_name_are_two_reasons_and_the_first_keeps_the_lead():
    # review3_hook_guard: a hook registered (once), then the global list it grows checked for truth, then for length
    found = _findings("not fn._forward_hooks", "not G['__import___main__'].acts",
                      "len(G['__import___main__'].acts) == 1")
    assert found.headline.guard.guard == "not fn._forward_hooks"
