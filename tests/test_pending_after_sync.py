"""Work done below the step's sync and never synced (a validation every few steps) rides in the next step's graph
(new-user review 8, F7, fixtures/scenarios/torch_xla/rev8_eval_nosync): told apart from a value kept inside the step
on some steps, on real runs of both."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json


@pytest.mark.parametrize("run,rule", [
    ("scenarios/torch_xla/rev8_eval_nosync", "outputs_pending_after_sync"),  # validation below the sync at :17
    ("scenarios/torch_xla/norm_after_sync", "outputs_after_sync"),  # a norm of the weights below the sync
    ("scenarios/torch_xla/rev6_periodic_log", "outputs_some_steps"),  # a grad norm kept above the sync: in the step
    ("torch_xla/metric_even_steps/graphs.hlo.0", "outputs_some_steps"),
    ("scenarios/torch_xla/attn_weights_logging", "outputs_some_steps"),
])
def test_work_left_pending_after_the_sync_is_told_apart_from_a_metric_kept_in_the_step(run, rule):
    """Review 8, F7: validation every third step below the step's sync, never synced, rides in the next step's
    graph; the fix is a sync after the validation block, not "compute it every step". A value kept inside the step
    on some steps (made above the sync) keeps its own fix."""
    doc = cli_json("explain-recompile", str(FIXTURES / run), codes=(0, 1))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert rule in rules and not ({"outputs_pending_after_sync", "outputs_after_sync", "outputs_some_steps"}
                                  - {rule}) & rules
    if rule == "outputs_pending_after_sync":
        assert "torch_xla.sync() right after that block" in doc["headline"]["fix"]
        assert "compute it every step" not in doc["headline"]["fix"]


def test_validation_leaking_every_third_step_is_periodic():
    """A,A,A,B,A,A,B,A,A: B on steps 3 and 6. A period of 7 at the start (seen once, no cycle begun again) no longer
    hides the period of 3 after the first graph; a cycle begun again (A,B,C,D,A,B) still counts, and a sequence with
    no period stays without one."""
    from hlodiff.explain.cycles import period_of

    assert period_of(list("AAABAABAA")) == (3, 1)
    assert period_of(list("ABCDAB")) == (4, 0)
    assert period_of(list("AABACAB"))[0] is None
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios" / "torch_xla" / "rev8_eval_nosync"), codes=(1,))
    assert doc["patterns"][0].startswith("periodic: sync at rev8_eval_nosync.py:17 repeats every 3 graphs")
