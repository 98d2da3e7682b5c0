"""The dtype fix follows what created the changed value, not the direction of the change (review item 2).

Inputs: real torch_xla runs, fixtures/torch_xla/{dtype_alternating,dtype_zeros_like,autocast_late}.
"""

from __future__ import annotations


from helpers import FIXTURES, cli_json, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained

TORCH = FIXTURES / "torch_xla"


def _first_cause(name):
    run = explained(discover([str(TORCH / name / "graphs.hlo.0")], None, None), [])
    return run.recompilations[0].causes[0]


def test_a_buffer_made_with_dtype_at_one_line_is_not_autocast_even_when_precision_drops():
    truth = truth_of(TORCH / "dtype_alternating")
    cause = _first_cause("dtype_alternating")
    assert cause.kind == "dtype"
    assert "autocast" not in cause.fix and "drop `dtype=`" in cause.fix
    # both sides' lines: where the f32 buffer was made and where the bf16 one was
    assert f"f32 at dtype_alternating.py:{truth['origin_line']}" in cause.fix
    assert f"bf16 at dtype_alternating.py:{truth['user_line']}" in cause.fix


def test_autocast_still_named_when_library_code_recast_the_values():
    assert "autocast" in _first_cause("autocast_late").fix
    stray = _first_cause("dtype_zeros_like")
    assert "autocast" not in stray.fix and "dtype_zeros_like.py:30" in stray.fix


def test_compare_either_way_round_gives_the_same_fix_with_both_lines():
    save = str(TORCH / "dtype_alternating" / "graphs.hlo.0")
    fixes = []
    for a, b in (("#0", "#1"), ("#1", "#0")):
        doc = cli_json("compare", save + a, save + b, codes=(1,))  # 1: the graphs differ
        fixes.append([c["fix"] for c in doc["causes"] if c["kind"] == "dtype"][0])
    for fix in fixes:
        assert "drop `dtype=`" in fix and "dtype_alternating.py:30" in fix and "dtype_alternating.py:32" in fix


def test_autocast_on_some_steps_is_autocast_in_explain_and_compare_alike():
    # review 3, F1: the diff leads with a bf16 scalar of the backward whose only frame is `opt.step()` (:12); the
    # converts library code made (torch/nn/modules/linear.py, xla__cast) say autocast recast the forward, called at :9
    run = FIXTURES / "scenarios" / "torch_xla" / "review3_autocast" / "record"
    doc = cli_json("explain-recompile", str(run), codes=(1,))
    (cause,) = doc["recompilations"][0]["causes"]
    assert cause["kind"] == "dtype" and cause["fix_rule"] == "dtype_autocast"
    assert (cause["locations"][0]["file"].endswith("review3_autocast.py"), cause["locations"][0]["line"]) == (True, 9)
    assert "dtype=" not in doc["headline"]["fix"] and "autocast" in doc["headline"]["fix"]
    pair = cli_json("compare", f"{run}#0", f"{run}#1", codes=(1,))
    assert [c["fix_rule"] for c in pair["causes"]] == ["dtype_autocast"]
