"""compare-runs rules learned from the eighth blind round across a persistent cache (fixtures/scenarios/runs/runs8_*):
a run B that ran run A's programs op by op (:mod:`hlodiff.explain.op_by_op`: JAX_DISABLE_JIT, torch_xla's eager
debug mode), one test per row of its table, each beside a look-alike that shares the row's evidence but one fact and
must keep the answer it had; and the round's two scenarios hlodiff had right at the first try."""

from __future__ import annotations

import shutil

import pytest

from runs_helpers import RUNS, compare_runs as _compare, runs_headline as _head, copy_runs as _copy
from hlodiff.explain.op_by_op import MIN_PIECES, MOST_OPS, OP_BY_OP_REASONS, PIECES_PER_PROGRAM, _operations
from hlodiff.hlo.parser import parse_module
from hlodiff.explain.run_settings import DEVICE_ASSIGNMENT_OPTIONS
from hlodiff.render.across_runs_fixes import CACHE_FIXES
from hlodiff.render.across_runs_reasons import PIECES_WORDS


def test_table_rows_are_the_ones_tested():
    assert OP_BY_OP_REASONS == {"jax": "jit_disabled", "torch_xla": "eager_mode"}
    assert set(PIECES_WORDS) == set(OP_BY_OP_REASONS.values()) <= set(CACHE_FIXES)
    assert (MIN_PIECES, PIECES_PER_PROGRAM, MOST_OPS) == (8, 4, 4)


# -- the rows: each framework's switch, told from the runs' shape -----------------------------------------------------

@pytest.mark.parametrize("name, reason, switch", [
    ("runs8_disable_jit", "jit_disabled", "JAX_DISABLE_JIT=1"),
    ("runs8_torch_eager_debug", "eager_mode", "XLA_USE_EAGER_DEBUG_MODE=1"),
])
def test_a_run_b_that_ran_op_by_op_is_told_with_its_switch(name, reason, switch):
    # first try: JAX said "run_b loaded all 1 program run_a had compiled" (exit 0); torch_xla paired run A's step
    # with run B's first one-op graph ("its HLO differs", no fix)
    doc = _compare(RUNS / name)
    head = doc["headline"]
    assert (head["verdict"], head["reason"]) == ("new", reason)
    assert switch in head["fix"] and "unset it" in head["fix"]
    assert head["count"] == len(doc["compilations"]) - sum(c["verdict"] == "hit" for c in doc["compilations"])
    assert "compiled none of the" in doc["summary"] and "op by op" in doc["summary"]
    assert "loaded all" not in doc["summary"]


def test_a_warm_run_a_that_loaded_its_steps_still_had_them(tmp_path):
    # run A loaded train_step and evaluate from the cache (only their optimized modules dumped), then run B ran
    # op by op: the steps run A loaded are the programs run B never asked for
    folder = _copy("runs8_disable_jit", tmp_path)
    shutil.rmtree(folder / "run_a")
    shutil.copytree(RUNS / "runs8_rank_promotion_control" / "run_b", folder / "run_a")
    doc = _compare(folder)
    assert (doc["headline"]["verdict"], doc["headline"]["reason"]) == ("new", "jit_disabled")
    assert "compiled none of the 2 programs run_a ran" in doc["summary"]


def test_a_whole_step_among_run_bs_programs_is_no_op_by_op_run(tmp_path):
    # look-alike: the same torch_xla runs, but one of run B's programs is run A's whole step: a run that traced
    # steps, not one that ran op by op; the rule stays silent and the first try's pairing stands
    folder = _copy("runs8_torch_eager_debug", tmp_path)
    step = next((folder / "run_a" / "dump").glob("*before_optimizations.txt")).read_text()
    for f in (folder / "run_b" / "dump").glob("module_0004.*optimizations.txt"):
        f.write_text(step)
    head = _compare(folder)["headline"]
    assert head is None or head["reason"] not in OP_BY_OP_REASONS.values()


def test_a_run_b_that_also_asked_for_run_as_programs_keeps_its_answer():
    # look-alike: run B compiled a program run A never ran (an evaluation step) and loaded run A's: a new program,
    # not op by op; the control stays silent
    doc = _compare(RUNS / "runs_new_eval_control", codes=(0,))
    assert doc["headline"] is None
    assert all(c["reason"] not in OP_BY_OP_REASONS.values() for c in doc["compilations"])


def test_eager_operations_before_the_cache_keep_their_reason():
    # look-alike: eager jnp ops (small programs) in both runs, before the cache was configured
    assert _head("runs_cache_late")["reason"] == "cache_configured_late"


def test_a_reduce_body_is_part_of_the_reduce():
    module = parse_module("""HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[8,4] parameter(0)
  y = f32[8,4] parameter(1)
  d = f32[8,4] subtract(x, y)
  m = f32[8,4] multiply(d, d)
  z = f32[] constant(0)
  r = f32[] reduce(m, z), dimensions={0,1}, to_apply=add
  ROOT o = f32[] multiply(r, r)
}
""")

    class _Rec:
        def module(self):
            return module

    assert _operations(_Rec()) == 4  # torch's mse_loss in eager mode: one operation, one piece


# -- the round's scenarios right at the first try -------------------------------------------------------------------

def test_a_workers_device_from_local_rank_is_a_compile_option_told_as_the_device():
    # right at the first try ("replica_device_ids is 1 in run B and 0 in run A"); the row DEVICE_ASSIGNMENT_OPTIONS
    # says what the field is: the device the program was compiled for
    assert DEVICE_ASSIGNMENT_OPTIONS == {"replica_device_ids"}
    head = _head("runs8_device_index")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "compile_option")
    assert head["fix"].startswith("run B compiled it for device 1, run A for device 0 (the device assignment")
    assert "expected once per device" in head["fix"]


@pytest.mark.parametrize("name, words", [
    ("runs6_shardy_off", "jax_use_shardy_partitioner"),  # another compile option: its JAX setting, not a device
    ("runs_host_device_flag", "xla_force_host_platform_device_count"),  # a device count, not which device
])
def test_other_compile_options_and_device_counts_keep_their_fix(name, words):
    head = _head(name)
    assert words in head["fix"] and "device assignment" not in head["fix"]


def test_rank_promotion_raise_in_run_b_is_no_miss():
    assert _compare(RUNS / "runs8_rank_promotion_control", codes=(0,))["headline"] is None


def test_a_load_of_an_entry_run_a_never_wrote_is_not_counted_as_run_as():
    # the first try of runs8_disable_jit said "run_b loaded all 1 program run_a had compiled": the one load was
    # jit_div, an entry run B had written itself a moment before
    from types import SimpleNamespace

    from hlodiff.explain.across_runs import AcrossRuns, Verdict
    from hlodiff.render.across_runs import summary_text

    runs = SimpleNamespace(path="run_a"), SimpleNamespace(path="run_b")
    step = Verdict("jit_step", "hit", a=SimpleNamespace())
    result = AcrossRuns(*runs, [step, Verdict("jit_div", "hit"), Verdict("jit_add", "new")])
    assert summary_text(result) == ("run_b loaded all 1 program run_a had compiled from the persistent cache; "
                                    "2 programs run_a never compiled")
    alone = AcrossRuns(*runs, [Verdict("jit_div", "hit"), Verdict("jit_add", "new")])
    assert summary_text(alone) == "run_b asked for none of the programs run_a had compiled; 2 programs run_a never compiled"
