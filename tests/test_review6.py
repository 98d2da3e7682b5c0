"""New-user review 6 (docs/reviews/2026-11-27-new-user-6.md): what the user noticed, on the real captures of
fixtures/scenarios (their truths in tests/test_accuracy.py), and each new rule against the look-alikes that share
its evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import cli
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.explain.dynamo_log_findings import recompiles_of

SCEN = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios"


def _explain(target, *extra) -> tuple[dict, int]:
    result = cli("explain-recompile", str(target), "--json", *extra, codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


def _text(target) -> str:
    return cli("explain-recompile", str(target), codes=(0, 1)).stdout


def _size_guards(*pairs: tuple[int, int]) -> list:
    guards = [f"tensor 'x' size mismatch at index 0. expected {a}, actual {b}" for a, b in pairs]
    compiles = [DynamoCompile("0/0")] + [DynamoCompile(f"0/{n + 1}", "f", failures=[GuardFailure("0/0", g)])
                                         for n, g in enumerate(guards)]
    return recompiles_of(DynamoLog("x", "text", compiles))


# -- F1: a short batch that is not the last (sizes 8, 8, 3, 8, 5, 8) is no DataLoader's last batch ---------------

@pytest.mark.parametrize("pairs, rules", [
    # requests of any size: three sizes of dim 0, each compiled: neither is "the last batch"
    (((8, 3), (8, 5)), ["dynamo_shape_sizes_vary", "dynamo_shape_sizes_vary"]),
    # look-alike: an epoch's short last batch, the run's last recompilation (dyn_last_batch_static): two sizes
    (((8, 4),), ["dynamo_shape_last_batch"]),
    # look-alike: a short batch, then the full size again: two sizes, not the last call
    (((8, 4), (4, 8)), ["dynamo_shape_short_batch", "dynamo_shape"]),
    # look-alike: sizes that only grow (a cache, a sequence): no batch shrank
    (((3, 4), (4, 5)), ["dynamo_shape", "dynamo_shape"]),
])
def test_three_sizes_of_a_batch_are_not_a_last_batch(pairs, rules):
    assert [r.fix_rule for r in _size_guards(*pairs)] == rules


def test_varying_batch_sizes_name_every_size_and_never_drop_last():
    (first, second) = _size_guards((8, 3), (8, 5))
    assert first.seen == second.seen == "dim 0 of x: 8, 3, 5"
    assert "drop_last" not in first.fix and "last batch is short" not in second.fix
    assert "pad every batch to one fixed size" in second.fix and "mark_dynamic" not in second.fix


@pytest.mark.parametrize("name", ["rev6_batch_sizes", "rev6_batch_sizes_record"])
def test_p08_every_recompilation_says_the_sizes_vary_by_hand_and_under_record(name):
    doc, code = _explain(SCEN / "dynamo" / name)
    fixes = [r["fix"] for r in doc["dynamo"]["recompiles"]]
    assert code == 1 and len(fixes) == 2
    assert all("8, 3, 5" in f and "drop_last" not in f and "pad every batch" in f for f in fixes)


def test_a_true_last_batch_keeps_drop_last():
    doc, code = _explain(SCEN / "dynamo" / "dyn_last_batch_static")
    assert code == 1 and "drop_last" in doc["headline"]["fix"]


# -- F6b: the XLA part does not say "Dynamo's log names your line" when Dynamo's log names none -------------------

def test_p08_by_hand_never_says_dynamo_names_a_line_it_does_not():
    text = _text(SCEN / "dynamo" / "rev6_batch_sizes")
    assert "not a line of yours" in text and "names your line (above)" not in text
    assert "names no line of yours for it either" in text


# -- F5: two ranks, each with a short last batch of its own size ----------------------------------------------------

def test_p07_both_ranks_recompiled_neither_is_named_the_odd_one():
    text = _text(SCEN / "torch_xla" / "rev6_ddp_uneven" / "record")
    first = text.splitlines()[0]
    # review 15 F7: a record's positions are steps, and one is said once ("at 1 compilation (compilation 2)" before)
    assert first.startswith("2 ranks: both recompiled at step 2,") and "diverged" not in first
    assert "is the one that does something the other does not" not in text


@pytest.mark.parametrize("name, odd", [("spawn_uneven_shard", "rank 1 compiled more graphs than rank 0"),
                                       ("rank0_item_log", "rank 1 diverged from rank 0")])
def test_a_rank_that_alone_compiled_again_or_ran_more_is_still_named(name, odd):
    """Look-alikes: one rank's program changed (its own short batch, a metric under `if rank == 0`)."""
    text = _text(SCEN / "torch_xla" / name / "record")
    assert odd in text and "both recompiled" not in text.splitlines()[0]


def test_p07_the_scalar_input_a_size_of_1_removes_follows_from_the_size_not_from_a_sync():
    doc, _ = _explain(SCEN / "torch_xla" / "rev6_ddp_uneven" / "record")
    text = json.dumps(doc)
    assert "sync at the same points" not in text
    assert '"inputs_follow_shape_scalars_removed"' in text and '"inputs_follow_shape_scalars"' in text


# -- F4: a metric kept every third step is no "warm-up ... copy.deepcopy ... nothing to fix", live or at exit ---------

def _live_fixes(engine: str, name: str, capture: str) -> list[str]:
    from live_replay import replay

    return [e.told.fix or "" for e in replay(SCEN / engine / name, capture) if e.told is not None]


def test_p04_under_record_no_live_line_calls_the_metric_a_warm_up():
    fixes = _live_fixes("torch_xla", "rev6_periodic_log_record", "c")
    assert fixes and not any("nothing to fix" in f or "deepcopy" in f for f in fixes)
    assert "a value is kept on some steps only" in fixes[-1]


def test_tensors_copied_before_the_loop_stay_a_warm_up():
    """The look-alike: copy.deepcopy of a model on the device: the first step's extra outputs are the copies
    (no instruction of their own, not scalars)."""
    doc, code = _explain(SCEN / "dynamo" / "dyn_ema_global_control")
    # no headline since Dynamo round 7 (the control's truth); the first step's cause itself stays the warm-up
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "outputs"]
    assert code == 0 and doc["headline"] is None
    assert fixes and fixes[0].startswith("expected warm-up: the first step's graph also computed"), fixes


# -- F6a: no "at the line shown" when no line is shown ------------------------------------------------------------

def test_p04_by_hand_the_fix_does_not_point_at_a_line_it_does_not_show():
    text = _text(SCEN / "torch_xla" / "rev6_periodic_log")
    assert "line unknown" in text and "the line shown" not in text
    assert "differ at a line of yours this capture does not name" in text


# -- F7: step numbers a user can match with the live lines; none for eager ops ---------------------------------------

def test_p08_under_record_each_call_is_a_step_in_the_json_and_the_story():
    doc, _ = _explain(SCEN / "dynamo" / "rev6_batch_sizes_record" / "record")
    assert [g["step"] for g in doc["graphs"]] == [0, 1, 2, 3, 4, 5]
    assert "#4 (step 4)" in _text(SCEN / "dynamo" / "rev6_batch_sizes_record" / "record")


def test_a_step_with_a_sync_still_holds_the_graphs_before_it():
    """The look-alike: a torch_xla step cut by an early read (.item()) is one step of two graphs."""
    doc, _ = _explain(SCEN / "torch_xla" / "rev4_item_clip" / "record")
    steps = [g["step"] for g in doc["graphs"]]
    assert len(steps) > len(set(steps))


def test_p12_eager_ops_are_not_numbered_as_steps_and_their_count_is_every_eager_compilation():
    text = _text(SCEN / "jax" / "rev6_eager_control")
    head = text.splitlines()[0]
    assert "14 eager-op compilations (9 for a new shape) below" in head
    assert "(step " not in text


# -- F8: compare of two runs (plain and autocast): the matmuls' precision, and no "between steps" --------------------

AMP = SCEN.parent / "torch_xla" / "amp_two_runs"


def test_p14_compare_of_two_runs_names_the_matmuls_and_the_runs_setting():
    out = cli("compare", f"{AMP}/plain/dump#0", f"{AMP}/amp/dump#0", codes=(0, 1)).stdout
    dtype = next(line for line in out.splitlines() if line.strip().startswith("dtype"))
    assert "the matmuls (dot) compute in bf16 on the right, f32 on the left" in dtype
    assert "between steps" not in out and "the two runs differ by their precision setting" in out


def test_two_steps_of_one_run_keep_the_between_steps_autocast_fix():
    """The look-alike: autocast switched on at step 2 of one run (autocast_late), compared in one dump."""
    doc, _ = _explain(SCEN.parent / "torch_xla" / "autocast_late" / "graphs.hlo.0")
    assert "between steps" in doc["headline"]["fix"]


# -- F9: an eager jax.random.normal of two shapes is one short block, not seven ------------------------------------

def test_p10_the_eager_op_block_tells_its_first_cause_and_counts_the_rest():
    text = _text(SCEN / "jax" / "rev6_static_step")
    block = text.split("compiled for another shape (jit__normal)")[1].split("\n\n")[0]
    assert block.count("fix: expected") == 1 and "line unknown" not in block
    assert "and 6 more causes inside the op's own code" in block


def test_p10_verbose_still_lists_every_cause_of_the_eager_op():
    text = cli("explain-recompile", str(SCEN / "jax" / "rev6_static_step"), "-v", codes=(0, 1)).stdout
    block = text.split("compiled for another shape (jit__normal)")[1].split("\n\n")[0]
    assert block.count("fix: expected") == 7


# -- F10: words: the object the user compiled, bucket targets, the arguments to donate -------------------------------

def test_p08_under_record_names_the_object_the_call_names_when_the_source_is_here():
    record = SCEN / "dynamo" / "rev6_batch_sizes_record" / "record"
    text = cli("explain-recompile", str(record), "--source-map", f"/home/user/project={SCEN / 'dynamo'}",
               codes=(1,)).stdout
    assert text.startswith("Dynamo compiled `cmodel` 3 times") and "Dynamo recompiled `cmodel` (0/1)" in text


def test_p08_without_the_source_the_words_stay_grammatical():
    text = _text(SCEN / "dynamo" / "rev6_batch_sizes")
    assert text.startswith("Dynamo compiled the module or method you passed to torch.compile 3 times")
    assert "you compiled" not in text


def test_a_plan_of_several_buckets_says_each_size_goes_to_the_next():
    text = cli("explain-recompile", str(SCEN / "dynamo" / "rev6_batch_sizes"), columns=300, codes=(1,)).stdout
    assert "pad each size up to the next of 5, 8" in text


def test_the_donation_fix_names_the_arguments_jax_named():
    out = cli("cost", str(SCEN / "cost" / "jax_adam_no_donate"), columns=300).stdout
    assert "here the arguments p, m, v" in out and "donate_argnames=('p', 'm', 'v')" in out
    assert "donate_argnums" in out


# -- problem 3: `watch DIR` started before the job made DIR waits for it ---------------------------------------------

def test_wait_until_exists_polls_until_the_path_appears_or_stop_says_so(tmp_path):
    from hlodiff.dumps.appear import wait_until_exists

    target, polls = tmp_path / "job" / "dump", []

    def sleep(_):
        polls.append(1)
        if len(polls) == 3:
            target.mkdir(parents=True)

    assert wait_until_exists(str(target), interval=0.01, sleep=sleep) and len(polls) == 3
    assert not wait_until_exists(str(tmp_path / "never"), interval=0.01, stop=lambda: True, sleep=sleep)


def test_watch_started_before_the_dump_folder_exists_follows_it_once_made(tmp_path):
    import os
    import shutil
    import subprocess
    import sys
    import time

    dump = tmp_path / "job" / "dump"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SCEN.parent.parent), os.environ.get("PYTHONPATH", "")]))
    watch = subprocess.Popen([sys.executable, "-c", "import sys; sys.argv[0] = 'hlodiff'; from hlodiff.cli import "
                              "main; main()", "watch", str(dump), "--until-idle", "2"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    assert watch.poll() is None  # still waiting, not "no such file or folder"
    shutil.copytree(SCEN.parent / "torch_xla" / "live_batch_change" / "dump", dump)
    out, err = watch.communicate(timeout=300)
    assert watch.returncode == 0, err
    assert "does not exist yet: waiting for the run to create it" in err and "recompiled (" in out


def test_p08_live_never_says_the_last_batch_while_the_run_goes_on():
    fixes = _live_fixes("dynamo", "rev6_batch_sizes_record", "c")
    assert fixes and not any("the last batch is short" in f for f in fixes)
    assert "the batch size varies from call to call" in fixes[-1]


def test_a_true_last_batch_waits_live_then_drop_last_at_the_end():
    # review 10 (rev6_batch_sizes_record's live regression): the hedged row told with two sizes known still named
    # drop_last for requests of any size (8, 3, then 5); while the run goes on the fix waits for the calls to come,
    # and a true last batch gets drop_last once the run ended
    fixes = [f for f in _live_fixes("dynamo", "dyn_last_batch_static", "e") if "Dynamo compiles" in f]
    assert fixes and all(f.startswith("the last batch is short") for f in fixes) and "drop_last" in fixes[-1]


def test_record_s_last_line_for_several_ranks_counts_each_rank():
    from hlodiff.render.record import exit_note

    assert exit_note(0, ranks=[(0, 1), (1, 1)]) == ("hlodiff: rank 0: 1 recompilation; rank 1: 1 recompilation; "
                                                   "exiting with the command's status 0")
    assert exit_note(3) == "hlodiff: exiting with the command's status 3"


# -- F1 for torch_xla and JAX: a size that took three values is no last batch either ---------------------------------

@pytest.mark.parametrize("producer", ["torch_xla", "jax"])
def test_three_sizes_rule_out_the_last_batch_rows(producer):
    from hlodiff.diff.fixes import choose

    # a JAX log holds compilations only: since review 23 F1 its last-batch row also needs the batch's arrays to have
    # lost rows together (batch_rows); one argument alone is told data-sized or both ways
    facts = frozenset({"is:shape", "on_input", "last_in_family", "leading_dim_shrank", producer}
                      | ({"batch_rows"} if producer == "jax" else set()))
    assert choose("shape", facts).name.startswith("shape_last_batch")
    assert not choose("shape", facts | {"sizes_vary"}).name.startswith("shape_last_batch")


@pytest.mark.parametrize("engine, name", [("torch_xla", "review_last_batch"), ("torch_xla", "rev4_lastbatch"),
                                          ("jax", "jax_last_batch")])
def test_true_last_batches_keep_their_row(engine, name):
    import sys

    sys.path.insert(0, str(SCEN))
    from score import local_argv  # what score.py passes for the capture

    truth = json.loads((SCEN / engine / f"{name}.truth.json").read_text())
    doc, _ = _explain(*local_argv(SCEN / engine / name, truth["capture"]))
    assert "last batch" in doc["headline"]["fix"]
