"""The new-user review of 2026-11-26 (docs/accuracy.md, "Review round"): what hlodiff told wrong on ordinary
programs, each asserted on the reviewer's real run (fixtures/scenarios/*/review_*) beside the look-alikes that
share its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli, cli_json
from hlodiff.explain.cycles import period_of

SCEN = FIXTURES / "scenarios"


def _headline(doc):
    return doc["headline"] or {}


# -- F0: textbook gradient accumulation ------------------------------------------------------------------------------

@pytest.mark.parametrize("letters, period", [
    ("ABBCABBDABBDABBD", 4),   # momentum buffers created on the first optimizer step: C once, then D for good
    ("ABCABCABC", 3),          # no warm-up variant: periodic from the start
])
def test_a_cycle_whose_first_round_has_a_one_time_graph_is_periodic(letters, period):
    assert period_of(list(letters))[0] == period


@pytest.mark.parametrize("letters", [
    "ABBCABBDABBDABBC",  # C comes back: a graph that recurs out of turn, not a warm-up variant
    "ABBCABBD",          # one round after the first: too little to call a period
])
def test_a_first_round_graph_that_comes_back_or_too_few_rounds_is_no_period(letters):
    assert period_of(list(letters))[0] is None


def test_gradient_accumulation_is_expected_not_a_python_if():
    res = cli("explain-recompile", str(SCEN / "torch_xla" / "review_grad_accum"), codes=(0,))
    first, fix = res.stdout.splitlines()[:2]
    assert "periodic:" in first and "every 4 graphs" in first
    assert fix.startswith("fix: expected: gradient accumulation") and "nothing to fix" in fix
    assert "torch.where" not in res.stdout and "decides per step" not in res.stdout


def test_a_block_skipped_at_random_still_needs_a_fix():
    """Its two graphs also both hand back gradients and differ by optimizer ops: not accumulation."""
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "stochastic_depth" / "graphs.hlo.0"), codes=(1,))
    assert "accumulation" not in _headline(doc)["fix"]


# -- F2: a short last batch that recurs every epoch ------------------------------------------------------------------

@pytest.mark.parametrize("seen, item, yes", [
    ([32, 32, 32, 4, 32, 32, 32, 4], 4, True),     # two epochs of 100 samples in batches of 32
    ([32, 32, 32, 4, 32, 32, 32, 4, 32], 4, True),  # the run stopped mid-epoch
    ([32, 4, 32, 4], 4, False),                    # two sizes that alternate: buckets or two tasks as well
    ([32, 32, 4, 32, 32, 32, 4], 4, False),        # irregular: no fixed round
    ([8, 16, 32, 8, 16, 32], 32, False),           # three sizes: buckets
])
def test_a_size_that_closes_every_round_is_a_last_batch(seen, item, yes):
    from hlodiff.explain.buckets import closes_each_round

    assert closes_each_round(seen, item) is yes


@pytest.mark.parametrize("name", ["review_last_batch", "review_last_batch_1epoch"])
def test_a_short_last_batch_gets_one_verdict_for_one_epoch_or_many(name):
    res = cli("explain-recompile", str(SCEN / "torch_xla" / name), codes=(1,))
    fix = res.stdout.splitlines()[1]
    assert "drop_last=True" in fix and "last batch" in fix
    assert "nothing to fix" not in res.stdout and "one graph per bucket" not in res.stdout


# -- F5/F9: JAX's own eager modules are not the user's recompilations -------------------------------------------------

def test_jit_stage_of_jnp_asarray_outside_jit_is_an_eager_op_not_the_headline():
    """`jnp.asarray(list)` outside jit compiles JAX's identity module jit_stage once per length (the `stage` row of
    the eager-primitive table)."""
    doc = cli_json("explain-recompile", str(SCEN / "jax" / "review_seq_len"), codes=(1,))
    names = {f["label"]: f["pattern"]["name"] for f in doc["families"]}
    assert names["jit_stage"] == "eager op"
    head = doc["summary"].split("\n")[0]
    assert "jit_embed_loss" in head and "jit_stage" not in head.split(";")[0]
    assert _headline(doc)["location"]["line"] == 17
    assert not any("XLA_HLO_DEBUG" in h or "hlodiff record" in h for h in doc.get("hints", []))


def test_a_steady_jax_run_names_its_step_before_the_eager_ops():
    res = cli("explain-recompile", str(SCEN / "jax" / "review_steady"), codes=(0,))
    head = res.stdout.splitlines()[0]
    assert "0 recompilations of the jitted functions: steady: jit_step compiled once" in head
    assert "11 eager-op compilations (3 for a new shape) below" in head and "jit__normal" not in head


# -- F1: a graph an early read cut short is no eval step -------------------------------------------------------------

def test_the_rest_of_a_step_cut_by_a_mask_is_not_a_training_step_after_eval():
    res = cli("explain-recompile", str(SCEN / "torch_xla" / "review_bool_index" / "record"), codes=(1,))
    assert "eval" not in res.stdout and "model.train()" not in res.stdout
    assert "torch.where(mask" in res.stdout.splitlines()[1]


# -- F6: a last batch drawn with torch.randn, and sizes that are XLA's packing ---------------------------------------

def test_a_random_last_batch_gets_the_last_batch_fix_without_xla_s_rng_dims():
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "review_pytest_last" / "record"), codes=(1,))
    head = _headline(doc)
    assert head["fix"].startswith("the last batch is short") and "drop_last=True" in head["fix"]
    assert "(1, 4)" not in head["fix"] and "random values" not in head["fix"]


def test_random_sizes_that_change_every_step_keep_the_random_size_fix():
    """The row needs the `last only` pattern: a size drawn anew each step is still told to draw at one size."""
    from hlodiff.diff.fixes import choose

    assert choose("shape", frozenset({"is:shape", "op:randn"})).name == "shape_random_size"
    assert choose("shape", frozenset({"is:shape", "op:randn", "last_only"})).name == "shape_random_last_batch"


# -- F3 (its torch_xla part): the random-seed update is bookkeeping, not a branch ------------------------------------

_SEED = """HloModule SyncTensorsGraph.1, entry_computation_layout={{(s64[], f32[4]{{0}})->(s64[], f32[4]{{0}})}}

ENTRY %main (p0.1: s64[], p1.2: f32[4]) -> (s64[], f32[4]) {{
  %p0.1 = s64[] parameter(0)
  %p1.2 = f32[4]{{0}} parameter(1)
  %constant.3 = s64[] constant({mul})
  %multiply.4 = s64[] multiply(%constant.3, %p0.1)
  %constant.5 = s64[] constant({inc})
  %add.6 = s64[] add(%constant.5, %multiply.4)
  {second}
  %exponential.9 = f32[4]{{0}} exponential(%p1.2)
  ROOT %tuple.10 = (s64[], f32[4]{{0}}) tuple(%{root}, %exponential.9)
}}
"""
_TWICE = """%constant.7 = s64[] constant({mul})
  %multiply.8 = s64[] multiply(%constant.7, %add.6)
  %constant.11 = s64[] constant({inc})
  %add.12 = s64[] add(%constant.11, %multiply.8)"""


def _seed_graphs(mul="214013", inc="2531011"):
    from types import SimpleNamespace

    from hlodiff.diff.compare import diff_canonical
    from hlodiff.graph import canonicalize
    from hlodiff.hlo import parse_module

    once = _SEED.format(mul=mul, inc=inc, second="", root="add.6")
    twice = _SEED.format(mul=mul, inc=inc, second=_TWICE.format(mul=mul, inc=inc), root="add.12")
    left, right = (canonicalize(parse_module(t)) for t in (once, twice))
    diff = diff_canonical(left, right)
    r = SimpleNamespace(closest=SimpleNamespace(_canonical=left), graph=SimpleNamespace(_canonical=right))
    return r, diff


def test_one_random_draw_more_is_torch_xla_s_seed_update():
    from hlodiff.explain.rng_seed import seed_update_only

    r, diff = _seed_graphs()
    (cause,) = [c for c in diff.causes if c.kind == "ops"]
    assert seed_update_only(r, cause)


def test_the_same_integer_ops_with_other_constants_are_not_the_seed_update():
    """A user's int64 arithmetic (`step * 3 + 1`) that appears on some steps is no bookkeeping."""
    from hlodiff.explain.rng_seed import seed_update_only

    r, diff = _seed_graphs(mul="3", inc="1")
    (cause,) = [c for c in diff.causes if c.kind == "ops"]
    assert not seed_update_only(r, cause)


# -- F7: compare DUMP agrees with explain-recompile ------------------------------------------------------------------

def test_compare_dump_takes_explain_s_fix_and_compares_each_new_graph_once():
    """metric_even_steps alternates A,B,A,B,A,B: one comparison, and its fix is the one explain-recompile gives."""
    metric = str(FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0")
    compared = cli_json("compare", metric, codes=(1,))["comparisons"]
    explained = cli_json("explain-recompile", metric, codes=(1,))
    assert len(compared) == 1
    fixes = {c["fix"] for c in compared[0]["causes"]}
    assert _headline(explained)["fix"] in fixes


def test_compare_dump_drops_a_run_guess_it_has_no_answer_for():
    from hlodiff.diff.model import Cause
    from hlodiff.explain.compare_fixes import adopt_run_fixes
    from types import SimpleNamespace

    cause = Cause("ops", "2 instructions added", fix="... Python code decides per step ...", fix_rule="ops_branch")
    step = SimpleNamespace(right=SimpleNamespace(ref="d#3"), diff=SimpleNamespace(causes=[cause]))
    adopt_run_fixes([step], [])
    assert cause.fix is None


# -- F1 (live lines): the fix told while the run goes agrees with the report at exit ----------------------------------

def test_live_lines_see_the_mask_s_cut_and_give_the_headline_s_fix():
    record = str(SCEN / "torch_xla" / "review_bool_index" / "record")
    watched = cli("watch", record, "--until-idle", "0", "--json")
    import json

    told = [json.loads(line) for line in watched.stdout.splitlines()]
    fixes = [e["cause"]["fix"] for e in told if e["event"] in ("recompiled", "repeat", "update") and e["cause"]["fix"]]
    final = _headline(cli_json("explain-recompile", record, codes=(1,)))["fix"]
    assert fixes and all(f == final for f in fixes)
    assert not any("made on the host" in f for f in fixes)
