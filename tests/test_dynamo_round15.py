"""Dynamo round 15 (docs/accuracy.md): torch-wide settings in Dynamo's GLOBAL_STATE guard that users change with a
call other than the guard's name (``torch.set_float32_matmul_precision("high")`` sets ``allow_tf32``), and the
decision's line read from the source on disk for them; checked on the guard as Dynamo prints it, the real runs and
the control that sets the same settings once before the first compiled call."""

from __future__ import annotations

import pytest

from explain_helpers import explain_scenario as _explain
from helpers import FIXTURES
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, guard_failure
from hlodiff.explain.decision_line import dynamo_decision_calls
from hlodiff.explain.dynamo_log_findings import recompiles_of

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
SOURCES = ("--source-map", f"/home/user/project={SCENARIOS}")


def _rule(guard: str):
    compiles = [DynamoCompile("0/0"), DynamoCompile("0/1", "step", failures=[guard_failure("0/0", guard)])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles))
    return r


def test_tf32_names_the_call_users_make_as_well_as_the_flag():
    r = _rule("GLOBAL_STATE changed: allow_tf32 ")
    assert r.fix_rule == "dynamo_global_setting"
    assert "torch.set_float32_matmul_precision" in r.fix and "torch.backends.cuda.matmul.allow_tf32" in r.fix
    assert "as a tensor" not in r.fix and "dtype" not in r.fix


def test_each_setter_of_a_setting_is_a_decision_call():
    calls = dynamo_decision_calls()
    assert calls["dynamo_global_setting:allow_tf32"] == ("set_float32_matmul_precision", "allow_tf32")
    assert calls["dynamo_global_setting:num_threads"] == ("set_num_threads",)  # one setter: as before
    assert calls["dynamo_global_setting:deterministic_algorithms"] == ("use_deterministic_algorithms",)


@pytest.mark.parametrize("path, line", [("d15_matmul_precision_late/record", 18), ("d15_deterministic_eval", 21),
                                        ("d12_num_threads", 18)])
def test_the_setting_s_line_is_read_from_the_source_on_disk(path, line):
    doc, _ = _explain(path, *SOURCES)
    (r,) = doc["dynamo"]["recompiles"]
    assert r["located"] == "decision" and r["location"]["line"] == line, r["location"]


def test_without_the_source_the_matmul_run_keeps_its_call_line():
    doc, code = _explain("d15_matmul_precision_late/record")
    (r,) = doc["dynamo"]["recompiles"]
    assert r["located"] != "decision" and r["location"]["line"] == 21 and code in (0, 1)


def test_settings_made_once_before_the_first_call_tell_nothing_even_with_the_source():
    doc, code = _explain("d15_deterministic_once_control", *SOURCES)
    assert doc["headline"] is None and code == 0
