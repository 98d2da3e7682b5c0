"""The ninth stop's leftovers (fixed at the tenth stop): what a user read wrong on real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json

from hlodiff.dumps.loop_counters import passes_loop_counter

SC = FIXTURES / "scenarios"


def _jax(name, sources=True) -> dict:
    folder = SC / "jax" / name
    extra = ("--source-map", f"/home/user/project={SC / 'jax'}") if sources else ()
    given = [str(folder / "record")] if (folder / "record").is_dir() else \
        [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")]
    return cli_json("explain-recompile", *given, *extra, codes=(0, 1))


def _static_rules(doc) -> set[str]:
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}


# 1. a counter is no size under the data's ceiling

def test_a_resumed_global_step_passed_static_is_told_as_a_counter_not_a_ceiling():
    """t10_jx_resumed_step_log: the step resumed at 1000 (1000..1005) is static for a logging branch. Its values are
    bunched like a batch statistic; the first try told 'pass the fixed value the data can reach (the dataset's class
    count; at least 1005)'. The loop's source says it counts: keep it out of the static arguments."""
    doc = _jax("t10_jx_resumed_step_log")
    head = doc["headline"]
    assert head["kind"] == "static_argument" and "static_loop_counter" in _static_rules(doc)
    assert "static_data_ceiling" not in _static_rules(doc)
    assert "lax.cond" in head["fix"] and "ceiling" not in head["fix"] and "class count" not in head["fix"]


@pytest.mark.parametrize("name, rule", [
    ("r19_jx_onehot_max_label", "static_data_ceiling"),   # a batch's largest label + 1, 8, 9, 10: counts up too
    ("jax_static_topk", "static_data_ceiling"),           # positives per query, looped with enumerate
    ("rev6_static_step", "static_value"),                 # the loop's step, values only: traced is the answer
    ("rev14_p4_static_step", "static_value"),
    ("jax_scan_inner_static", "static_loop_count"),
    ("rev9_j2_unrolled_solver", "static_unrolled_loop"),
    ("jax_window_static_start", "static_slice_start"),
])
def test_look_alike_static_arguments_keep_their_rows(name, rule):
    rules = _static_rules(_jax(name))
    assert rule in rules and "static_loop_counter" not in rules, name


def test_without_the_source_the_counter_cannot_be_told_from_a_statistic():
    """The values alone (1000..1005, bunched, counting up by one as r19's 8, 9, 10 do) keep the data's row: the
    limit is the capture's, the source decides."""
    assert "static_loop_counter" not in _static_rules(_jax("t10_jx_resumed_step_log", sources=False))


@pytest.mark.parametrize("loop, call, counted", [
    ("for step in range(1000, 1006):", "f(w, step=step)", True),
    ("for step in range(10):", "f(w, step=start + step)", True),
    ("for i, batch in enumerate(data):", "f(w, step=i)", True),
    ("for batch in data:\n    gstep += 1", "f(w, step=gstep)", True),
    ("for i in range(10):\n    gstep = offset + i", "f(w, step=gstep)", True),
    ("for i, n in enumerate(data):", "f(w, step=n)", False),               # the item, not the index
    ("for i in range(10):\n    k = sizes[i]", "f(w, step=k)", False),        # a lookup by the step
    ("for i in range(10):\n    k = int(y.max()) + 1", "f(w, step=k)", False),
    ("for i in range(10):", "f(w, step=min(i, 4))", False),                 # capped
])
def test_passes_loop_counter(tmp_path, loop, call, counted):
    body = loop + "\n    " + call
    src = tmp_path / "train.py"
    src.write_text("def f(w, step):\n    return w\n\n" + body + "\n")
    line = src.read_text().splitlines().index("    " + call) + 1
    assert passes_loop_counter(str(src), line, "f", "step") is counted
