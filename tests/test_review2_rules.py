"""New-user review 2 (2026-11-27), F1, F2, F3, F11: what a user reads on the review's own programs (captured in
fixtures/scenarios/torch_xla/review2_*), beyond the headline test_accuracy.py scores, and the one rule of each fix
on its own evidence."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json
from hlodiff.explain.buckets import changed_dimension
from hlodiff.hlo.model import Shape

SCEN = FIXTURES / "scenarios" / "torch_xla"


def _causes(doc, graph_suffix):
    r = next(r for r in doc["recompilations"] if r["graph"].endswith(graph_suffix))
    return {c["kind"]: c for c in r["causes"]}


def test_f2_warm_up_and_a_later_weight_decay_change_are_two_stories():
    doc = cli_json("explain-recompile", str(SCEN / "review2_wd_off"), codes=(1,))
    assert len(doc["stories"]) == 2  # not 'one root'
    first, later = _causes(doc, "#1"), _causes(doc, "#4")
    assert first["inputs"]["fix"].startswith("expected warm-up")
    assert later["ops"]["fix_rule"] == "ops_optimizer_setting"
    assert later["inputs"]["fix"].startswith("follows from the ops change")
    assert "sync at the same points" not in cli("explain-recompile", str(SCEN / "review2_wd_off"), codes=(1,)).output


def test_f2_the_control_without_the_change_stays_a_warm_up():
    doc = cli_json("explain-recompile", str(SCEN / "review2_wd_never"), codes=(0,))
    assert doc["headline"]["fix"].startswith("expected warm-up")


def test_f3_the_verdict_does_not_depend_on_the_capture():
    for path in (SCEN / "review2_ckpt_level1", SCEN / "review2_ckpt_dump" / "dump"):
        doc = cli_json("explain-recompile", str(path), codes=(0,))
        assert doc["headline"]["fix"].startswith("expected warm-up"), path


def test_f1_round_robin_heads_are_no_accumulation():
    out = cli("explain-recompile", str(SCEN / "review2_multitask_rr" / "record"), codes=(0,)).output
    assert "expected by design" in out
    for wrong in ("gradient accumulation", "drop `dtype=`", "Python size that changes"):
        assert wrong not in out.split("\n\n", 1)[0], wrong


def test_f11_the_queue_is_placed_at_its_cat_and_its_first_input_follows_from_the_growth():
    doc = cli_json("explain-recompile", str(SCEN / "review2_moco_queue" / "record"), codes=(1,))
    assert doc["headline"]["location"]["line"] == 24
    assert _causes(doc, "#1")["inputs"]["fix_rule"] == "inputs_follow_growth"
    assert "plan:" not in cli("explain-recompile", str(SCEN / "review2_moco_queue" / "record"), codes=(1,)).output


def test_sizes_of_different_tensors_are_no_one_dimension():
    a, b, c = Shape("f32", (8, 1)), Shape("f32", (8, 9)), Shape("f32", (16, 8))
    assert changed_dimension([("k0", "k1", a, b), ("k1", "k2", Shape("f32", (8, 8)), c)]) is None
    same = changed_dimension([("k0", "k1", a, b), ("k1", "k2", b, Shape("f32", (8, 17)))])
    assert same is not None and same.by_key == {"k0": 1, "k1": 9, "k2": 17}
