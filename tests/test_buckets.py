"""Bucket plans for size recompilations (hlodiff/explain/buckets.py): the dynamic programme against brute force, the
plan on the fixtures where sizes follow the data (and nowhere else), and a real check: the seq_lengths fixture
script, recorded again with the buckets its committed run's plan names, compiles exactly the predicted graphs."""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import sys

import pytest

from helpers import FIXTURES, capture_free_env, cli, cli_json, run_hlodiff, truth_of
from hlodiff.explain.buckets import knee, least_padding

TORCH_XLA = FIXTURES / "torch_xla"
SEQ = TORCH_XLA / "seq_lengths"


def plans(doc: dict) -> list[dict]:
    return [c["plan"] for r in doc["recompilations"] for c in r["causes"] if c.get("plan")]


def padded(values, buckets) -> int:
    return sum((min(b for b in buckets if b >= v) - v) * n for v, n in values)


def test_the_programme_finds_the_least_padding_for_every_number_of_buckets():
    """Against trying every set of buckets (the largest size always one), on random runs."""
    rng = random.Random(3)
    for _ in range(60):
        sizes = sorted(rng.sample(range(1, 60), rng.randint(1, 7)))
        values = tuple((v, rng.randint(1, 5)) for v in sizes)
        curve, chosen = least_padding(values)
        total = sum(v * n for v, n in values)
        for k, fraction in curve:
            best = min(padded(values, (*rest, sizes[-1])) for rest in itertools.combinations(sizes[:-1], k - 1))
            assert padded(values, chosen[k]) == best and abs(fraction - best / total) < 1e-12
            assert len(chosen[k]) == k and chosen[k][-1] == sizes[-1]


def test_the_programme_agrees_with_the_plain_quadratic_one_on_longer_runs():
    """Divide and conquer over each row must not miss a cheaper plan: checked against trying every start of the
    last bucket, on runs of up to 80 distinct sizes."""
    rng = random.Random(11)
    for _ in range(20):
        sizes = sorted(rng.sample(range(1, 500), rng.randint(2, 80)))
        values = tuple((v, rng.randint(1, 9)) for v in sizes)
        n = len(values)
        best = [[padded(values[:j + 1], (sizes[j],)) for j in range(n)]]
        for k in range(2, min(n, 12) + 1):
            best.append([min((best[-1][i - 1] + padded(values[i:j + 1], (sizes[j],)) for i in range(k - 1, j + 1)),
                             default=float("inf")) for j in range(n)])
        curve, chosen = least_padding(values)
        assert [padded(values, chosen[k]) for k, _ in curve] == [row[-1] for row in best]


def test_the_knee_is_where_more_buckets_stop_paying():
    # padding falls fast up to 3 buckets, then barely: the knee is 3
    assert knee([(1, 0.9), (2, 0.4), (3, 0.1), (4, 0.08), (5, 0.06), (6, 0.0)], 6) == 3
    assert knee([(1, 0.0)], 1) == 1


@pytest.mark.parametrize("variant", ["seq", "list"])
def test_varying_lengths_get_buckets_beside_powers_of_two(variant):
    truth = truth_of(SEQ / variant)
    doc = cli_json("explain-recompile", SEQ / variant, codes=(0, 1))
    [plan] = plans(doc)  # once per family, on its first size recompilation
    lengths = truth["lengths"]
    assert plan["kind"] == "buckets" and plan["graphs_now"] == truth["distinct_lengths"]
    assert {v["size"]: v["executions"] for v in plan["values"]} == {n: lengths.count(n) for n in set(lengths)}
    assert plan["buckets"][-1] == max(lengths) and plan["graphs_planned"] == len(plan["buckets"]) < plan["graphs_now"]
    assert plan["padded_fraction"] == round(padded(((n, lengths.count(n)) for n in set(lengths)), plan["buckets"])
                                            / sum(lengths), 4)
    assert plan["powers_of_two"]["buckets"][-1] >= max(lengths)
    assert plan["cost_model"]["counts_from"] == "executions" and plan["cost_model"]["compile_seconds_per_graph"] > 0
    text = cli("explain-recompile", str(SEQ / variant), columns=250).output
    target = "pad up to" if len(plan["buckets"]) < 2 else "pad each size up to the next of"
    assert f"{target} {', '.join(map(str, plan['buckets']))} → {plan['graphs_planned']} graphs instead of " \
           f"{plan['graphs_now']}" in text and "powers of two:" in text


def test_a_short_last_batch_is_padded_to_the_full_batch():
    [plan] = plans(cli_json("explain-recompile", TORCH_XLA / "batch_shape", codes=(0, 1)))
    assert plan["kind"] == "buckets" and plan["buckets"] == [4] and plan["graphs_planned"] == 1
    assert {v["size"]: v["executions"] for v in plan["values"]} == {4: 5, 2: 1}


def test_a_size_growing_every_step_is_preallocated_not_bucketed():
    [plan] = plans(cli_json("explain-recompile", TORCH_XLA / "unbounded_growth", codes=(0, 1)))
    assert plan["kind"] == "preallocate" and plan["graphs_planned"] == 1
    assert plan["buckets"] == [max(v["size"] for v in plan["values"])]
    text = cli("explain-recompile", str(TORCH_XLA / "unbounded_growth"), columns=250).output
    assert f"preallocate the largest size seen ({plan['buckets'][0]}) and mask" in text


def test_sizes_that_look_chosen_get_no_new_plan():
    from hlodiff.explain.buckets import already_bucketed

    assert already_bucketed(((16, 1), (32, 1), (64, 3)))  # multiples of 8
    assert already_bucketed(((8, 5), (18, 7), (30, 4), (40, 9)))  # spread apart, each reused
    assert not already_bucketed(((5, 2), (6, 3), (7, 2)))  # dense: raw lengths
    assert not already_bucketed(((2, 1), (4, 5)))  # a short last batch, seen once
    assert not already_bucketed(tuple((8 * i, 2) for i in range(1, 11)))  # too many to be a few buckets


@pytest.mark.parametrize("name", ["dtype_input", "lr_constant", "steady", "metric_even_steps", "debug_log_run",
                                  "record_adamw", "item_every_step", "momentum_warmup"])
def test_no_plan_where_no_size_follows_the_data(name):
    assert plans(cli_json("explain-recompile", TORCH_XLA / name, codes=(0, 1))) == []


def test_no_plan_for_jax_eager_ops_or_a_size_that_follows_a_static_argument():
    doc = cli_json("explain-recompile", FIXTURES / "jax" / "eager_init", codes=(0, 1))
    assert plans(doc) == []


def test_the_html_report_draws_the_sizes_and_the_bucket_edges(tmp_path):
    page = tmp_path / "run.html"
    cli("explain-recompile", str(SEQ / "seq"), "--html", str(page))
    html = page.read_text()
    assert html.count("class='plan-chart'") == 1 and "<title>bucket 40</title>" in html


@pytest.mark.xla
@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla is not installed")
@pytest.mark.parametrize("variant", ["seq"])
def test_recording_again_with_the_planned_buckets_compiles_what_the_plan_predicts(tmp_path, variant):
    """The committed run's plan, applied by the script's own --buckets, under `hlodiff record`: the number of
    compilations is the plan's prediction, and the new run gets no new plan (its sizes are the buckets)."""
    [plan] = plans(cli_json("explain-recompile", SEQ / variant, codes=(0, 1)))
    proc = run_hlodiff("record", "-q", "--json", "--out", tmp_path / "run", "--", sys.executable,
                       TORCH_XLA / "seq_lengths.py", "--inner", "--variant", variant, "--buckets",
                       ",".join(map(str, plan["buckets"])), env=capture_free_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert sum(g["compiled"] for g in doc["graphs"]) == plan["graphs_planned"]
    # Sizes already on the buckets: no new plan, and the fix says one graph per bucket is expected (issue 25).
    assert plans(doc) == []
    shape_causes = [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "shape"]
    assert shape_causes and all(c["fix"].startswith("expected: one graph per bucket") for c in shape_causes)


def test_one_verdict_for_sizes_serves_the_plan_and_the_fix():
    """Growth, sizes already on buckets, or sizes to bucket: the one test the plan and the fix share."""
    from hlodiff.explain.buckets import verdict

    assert verdict(((8, 1), (9, 1), (10, 1)), [8, 9, 10], "executions") == "preallocate"
    assert verdict(((8, 1), (9, 1), (10, 1)), [8, 9, 10], "compilations") == "buckets"  # no executions: no growth
    assert verdict(((16, 3), (32, 3)), [16, 32, 16, 32, 16, 32], "executions") == "expected"
    assert verdict(((5, 2), (6, 3), (7, 2)), [5, 6, 7, 5, 6, 6, 7], "executions") == "buckets"


@pytest.mark.parametrize("name", ["collate_buckets", "batch_shape", "kv_cache", "unbounded_growth", "slice_length"])
def test_fix_and_plan_never_disagree_about_buckets(name):
    """A cause whose fix calls its sizes already bucketed ("expected: one graph per bucket") gets no plan, and no
    plan says "already on buckets" under a fix that asks to pad: both come from the one verdict."""
    doc = cli_json("explain-recompile", FIXTURES / "torch_xla" / name, codes=(0, 1))
    causes = [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] in ("shape", "attribute")]
    assert causes
    for cause in causes:
        plan = cause.get("plan")
        assert plan is None or plan["kind"] != "expected", (cause["fix_rule"], plan)
        if cause["fix_rule"] == "shape_buckets":
            assert plan is None
