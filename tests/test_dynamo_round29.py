"""Dynamo round 29 (docs/accuracy.md): after an expected Dynamo recompilation (a ParameterDict's new key), the
first call is cut by the bridge's syncs as the first compiled call's is, and the next step's graph takes the
tensors synced then as outputs: the same warm-up as the first call's, not "a value kept on some steps only".
Checked on the run, live, and on the look-alikes whose step graph changes after a retrace for a reason of the
user's (Dynamo's recompilations unexpected: the step keeps its own story)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_scenario as _explain


def _step_graph(doc: dict, ref_end: str) -> dict:
    (r,) = [r for r in doc["recompilations"] if r["graph"].endswith(ref_end)]
    return r


def test_the_step_after_a_retrace_s_cut_step_is_a_warm_up_not_a_value_kept_on_some_steps():
    doc, code = _explain("d29_paramdict_new_adapter")
    assert doc["headline"]["kind"] == "guard" and code == 0  # was 1: step 5's graph told as a change of the user's
    after = _step_graph(doc, "#24")  # A,B,B,B,C,D,D,D: D, the first uncut step after the retrace's step C
    assert after["causes"][0]["fix_rule"] == "dynamo_first_call_sync"
    assert not any("kept on some steps" in (c["fix"] or "") for r in doc["recompilations"] for c in r["causes"])


def test_a_step_that_changed_with_the_retrace_keeps_its_own_words():
    # d15_head_grow_classes (A,B,...,C,D,...: the head grown, the step's logits a new size): the step after the
    # retrace's step matches the new rule's steps too, but the change is the grown head's, told by Dynamo's reason
    doc, code = _explain("d15_head_grow_classes")
    assert doc["headline"]["kind"] == "shape" and doc["headline"]["location"]["line"] == 36
    after = _step_graph(doc, "#24")
    assert after["causes"][0]["fix_rule"] == "dynamo_step_follows_expected"
    assert "size mismatch" in after["causes"][0]["fix"]
