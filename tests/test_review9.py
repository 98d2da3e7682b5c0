"""New-user review 9 (2026-11-27): each test is what the reviewer read wrong, on a real capture
(fixtures/scenarios/*/rev9_*), beside the look-alikes that share its evidence, or a small case of one rule.
torch.compile and JAX findings F2, F3, F5, F6 first; then the torch_xla findings F1, F4, F7."""

from __future__ import annotations

import shutil

from helpers import FIXTURES, cli, cli_json
from hlodiff.diff.origin_facts import _inner_dims_only
from hlodiff.diff.model import Change, InstructionRef

DYN = FIXTURES / "scenarios" / "dynamo"
JAX = FIXTURES / "scenarios" / "jax"
TX = FIXTURES / "scenarios" / "torch_xla"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")
JAX_MAP = ("--source-map", f"/home/user/project={JAX}")


def _top_fixes(out: str) -> list[str]:
    """The `fix:` lines at the left margin: what a reader takes as the run's advice."""
    return [line for line in out.splitlines() if line.startswith("fix:")]


def test_a_steady_compiled_loop_read_by_hand_without_the_debug_log_is_steady():
    """F2 (c5 by hand: dump + an empty TORCH_LOGS file, no PT_XLA_DEBUG log): the bridge's forward and the eager
    argmax `.cpu()` reads after the sync are two graphs, each compiled once; was '1 recompilation ... drop `dtype=`'
    for a program with no dtype=."""
    out = cli("explain-recompile", DYN / "rev9_c5_steady_infer", *DYN_MAP, codes=(0,)).stdout
    assert "0 recompilations" in out
    assert "dtype=" not in out and "torch.where" not in out


def test_bridge_graphs_of_a_dump_still_form_one_family_with_their_recompilation():
    """Look-alike of F2: the split is by where a graph comes from (the bridge's FX graph or eager code), so the
    bridge's own recompilation for Dynamo's new temperature (c1: a constant became an input) stays, told as
    following from Dynamo's guard."""
    out = cli("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,)).stdout
    assert "SyncTensorsGraph torch.compile (XLA bridge) (A,B) (constant)" in out
    assert "follows from Dynamo's recompilation 0/1" in out


def test_no_top_level_fix_contradicts_a_right_dynamo_story():
    """F5 (c1, c3 by hand): under Dynamo's right blocks, a second top-level fix said 'sync at the same points
    every step' / 'a value is kept on some steps only'. The XLA graphs changed because Dynamo recompiled; eager
    graphs that share almost nothing with each other are two programs, not a recompilation to fix."""
    c1 = cli("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,)).stdout
    assert _top_fixes(c1) == []
    assert "pass it as a tensor" in c1
    c3 = cli("explain-recompile", DYN / "rev9_c3_nonzero", *DYN_MAP, codes=(1,)).stdout
    assert _top_fixes(c3) == []
    assert "weight by the mask" in c3
    for out in (c1, c3):
        assert "sync at the same points every step" not in out.split("\n\n", 1)[0]
    doc = cli_json("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,))
    assert "tensor" in doc["headline"]["fix"]


def test_a_python_loop_over_a_static_count_gets_fori_loop_not_buckets():
    """F3 (j2): `for _ in range(n_steps)` over a static n_steps is unrolled (10 -> 15 adds 30 instructions, 6 per
    step, every opcode one the 10-step graph has): lax.fori_loop with the count traced compiles once; was 'it must
    stay static ... pad to a few bucket sizes'."""
    doc = cli_json("explain-recompile", JAX / "rev9_j2_unrolled_solver" / "record", *JAX_MAP, codes=(1,))
    fix = doc["headline"]["fix"]
    assert "lax.fori_loop" in fix and "traced" in fix and "n_steps" in fix
    assert "must stay static" not in fix and "bucket" not in fix
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}
    assert rules == {"static_unrolled_loop"}


def test_static_arguments_that_are_no_unrolled_count_keep_their_rows():
    """Look-alikes of F3: a static tuple of kept blocks (a Python loop over a subset: no count to trace), a static
    k that sets a shape, and a static scan length (its trip count is a constant of the while loop) keep their
    rows; none is told fori_loop."""
    expected = {"jax_layerdrop_static": "static_structure", "jax_static_topk": "static_data_ceiling",
                "jax_scan_inner_static": "static_loop_count"}
    for name, rule in expected.items():
        doc = cli_json("explain-recompile", JAX / name, *JAX_MAP, codes=(1,))
        rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}
        assert rule in rules and "static_unrolled_loop" not in rules, name


def test_mark_dynamic_names_the_users_compiled_object_and_no_expected_per_size_sync():
    """F6 (c2): the per-size finding named torch's wrapper `inner` ('XLA recompiled inner'); the compiled object is
    `compiled` on the user's line. The bridge's sync of each new-size input was 'each once; nothing to fix' under
    an 'unbounded' family: it compiles per size, and the same padding fixes it."""
    out = cli("explain-recompile", DYN / "rev9_c2_mark_dynamic" / "record", *DYN_MAP, codes=(1,)).stdout
    assert "inner" not in out
    assert "XLA recompiled `compiled` for new sizes" in out
    assert "each once; nothing to fix" not in out
    assert "compiles once per size" in out
    doc = cli_json("explain-recompile", DYN / "rev9_c2_mark_dynamic" / "record", *DYN_MAP, codes=(1,))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "dynamo_bridge_new_size" in rules and "dynamo_bridge_own" not in rules


# -- F1: a PT_XLA_DEBUG_LEVEL=1 log beside an XLA dump ------------------------------------------------------------


def test_a_level1_log_beside_the_dump_splits_the_setup_probe_from_the_step_and_calls_the_run_steady():
    """F1: the probe's graph (its own mark_step at :14) and the training step's two compilations (:27) were one
    family read from the dump alone: 'a size follows a Python value', 'the graph grows ... detach', 'autocast', exit
    1. The level-1 log's Compilation Cause blocks name each compilation's sync."""
    result = cli("explain-recompile", TX / "rev9_setup_probe", codes=(0,))
    head = result.stdout.splitlines()[:2]
    assert "sync at rev9_setup_probe.py:27" in head[0]
    assert "warm-up" in head[1] and "nothing to fix" in head[1]
    for wrong in ("keep sizes fixed", "detach", "autocast", "grows at every step"):
        assert wrong not in result.stdout
    # the compilations only: no claim about the steps between them
    assert "compilations only" in result.stdout
    assert "without cache hits" in result.stderr


def test_the_level1_run_names_every_graph_s_sync_and_counts_compilations_not_steps():
    doc = cli_json("explain-recompile", TX / "rev9_setup_probe", codes=(0,))
    labels = sorted(f["label"] for f in doc["families"])
    assert labels == ["sync at rev9_setup_probe.py:14", "sync at rev9_setup_probe.py:27"]
    assert all(g["trigger"] is not None for g in doc["graphs"])
    assert doc["headline"]["fix"].startswith("expected warm-up")


def test_a_level1_log_that_does_not_match_the_dump_is_not_joined(tmp_path):
    """Look-alike: a log of another run (one compilation fewer than the dump's modules) is not paired in order;
    the dump is read alone, as before (and says so: no triggers)."""
    run = tmp_path / "run"
    shutil.copytree(TX / "rev9_setup_probe", run)
    text = (run / "debug.log").read_text()
    cut = text.index("Compilation Analysis: Compilation Cause", text.index("Compilation Analysis: Compilation Cause") + 1)
    (run / "debug.log").write_text(text[:cut])
    doc = cli_json("explain-recompile", run, codes=(0, 1))
    assert all(g["trigger"] is None for g in doc["graphs"])


def test_level2_and_save_tensors_captures_still_count_every_execution():
    """Look-alikes: a level-2 log beside a dump and a level-1 log beside a save-tensors file keep their reading
    (executions seen; the level-1 look-alikes of earlier rounds keep their headline)."""
    doc = cli_json("explain-recompile", TX / "review2_ckpt_level1", codes=(0,))
    assert doc["headline"] is None or "expected" in doc["headline"]["fix"]
    doc = cli_json("explain-recompile", TX / "noise_aug_float64", codes=(1,))
    assert doc["headline"]["kind"] == "dtype"


# -- F4: ranks that pad to their own length --------------------------------------------------------------------------


def _change(left: str, right: str) -> Change:
    return Change(InstructionRef("main", "p0.1", "parameter", left), InstructionRef("main", "p0.1", "parameter", right),
                  ("shape",))


def test_only_a_dimension_past_the_first_changing_is_a_padded_length_not_a_batch():
    assert _inner_dims_only(_change("s64[4,4]{1,0}", "s64[4,6]{1,0}"))
    assert _inner_dims_only(_change("f32[2,6,8]", "f32[2,9,8]"))
    assert not _inner_dims_only(_change("f32[2,8]", "f32[1,8]"))       # a short last batch: the rows differ
    assert not _inner_dims_only(_change("f32[8]", "f32[9]"))           # one dimension: nothing tells rows apart
    assert not _inner_dims_only(_change("f32[4,8]", "f32[4,8,1]"))     # another rank


def test_ranks_padding_to_their_own_longest_sentence_are_told_to_pad_to_one_global_length():
    """F4: both ranks have 4 rows, only the padded length differs (s64[4,4] against s64[4,6]); the fix said 'a short
    last batch ... drop the remainder'. No rank recompiled, so the divergence heads the JSON document."""
    doc = cli_json("explain-recompile", TX / "rev9_rank_pad" / "record", codes=(1,))
    cause = doc["divergence"][0]["causes"][0]
    assert cause["fix_rule"] == "ranks_padded_length"
    assert "max_length" in cause["fix"] and "remainder" not in cause["fix"] and "last batch" not in cause["fix"]
    head = doc["headline"]
    assert (head["rank"], head["kind"], head["divergence_step"]) == (1, "shape", 0)
    assert (head["location"]["file"].rsplit("/", 1)[-1], head["location"]["line"]) == ("rev9_rank_pad.py", 24)


def test_an_uneven_split_over_ranks_keeps_the_drop_the_remainder_fix():
    """Look-alike (spawn_uneven_shard): rank 1's last batch has 1 row, rank 0's 2: the first dimension differs."""
    doc = cli_json("explain-recompile", TX / "spawn_uneven_shard" / "record", codes=(1,))
    rules = {c["fix_rule"] for d in doc["divergence"] for c in d["causes"]}
    assert "ranks_uneven_data" in rules and "ranks_padded_length" not in rules


def test_a_rank_metric_without_collective_still_heads_nothing():
    """Look-alike (spawn_rank_metric_control): a divergence no rank waits on is told, not made the headline."""
    doc = cli_json("explain-recompile", TX / "spawn_rank_metric_control" / "record", codes=(0,))
    assert doc["divergence"] and doc["headline"] is None


# -- F7: plain SGD has no state ------------------------------------------------------------------------------------


def test_the_first_step_s_new_inputs_made_outside_the_optimizer_are_not_called_its_state():
    """F7 (x3): plain SGD, gradients kept by zero_grad(set_to_none=False): the inputs the second compilation adds
    are the first backward()'s gradients, made at the user's line, not 'the optimizer creates its state'. The
    look-alike with momentum keeps the optimizer rows."""
    doc = cli_json("explain-recompile", TX / "rev9_accum_remainder" / "record", codes=(1,))
    warm = {c["fix_rule"]: c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] in ("inputs", "ops")
            and "warmup" in c["fix_rule"]}
    assert set(warm) == {"inputs_first_step_warmup", "ops_first_step_warmup"}
    assert "backward()" in warm["inputs_first_step_warmup"]
    assert not any("optimizer creates its state" in t or "the optimizer also updates" in t for t in warm.values())
    doc = cli_json("explain-recompile", FIXTURES / "torch_xla" / "momentum_warmup", codes=(0, 1))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert {"inputs_optimizer_warmup", "ops_optimizer_warmup"} <= rules


# -- F1 live: `hlodiff watch` on the same capture ------------------------------------------------------------------


def _sync_lines(records) -> list[int]:
    return [next(f.line for f in r.frames if f.file.endswith("rev9_setup_probe.py")) for r in records]


def test_watch_joins_a_level1_log_once_two_compilations_came_without_an_execution(tmp_path):
    """Live, the log's level is not known from its first block (level 2 writes the first execution only after the
    compilation ended): two compilations without an execution make it level 1; each is then a record with its
    sync's frames, cache hits unknown."""
    from hlodiff.dumps.follow import follower_for

    run = tmp_path / "run"
    shutil.copytree(TX / "rev9_setup_probe", run)
    text = (run / "debug.log").read_text()
    marker = "Compilation Analysis: ================================================================================\n" \
             "Compilation Analysis: Compilation Cause"
    second = text.index(marker, text.index(marker) + 1)
    (run / "debug.log").write_text(text[:second])  # one compilation so far: level 1 or 2 cannot be told
    follower = follower_for(str(run))
    assert follower.poll() == []
    (run / "debug.log").write_text(text)
    records = follower.poll() + follower.close()
    assert _sync_lines(records) == [14, 27, 27]
    assert all(r.kind == "executions" and not r.hits_seen for r in records)


def test_watch_on_a_level2_log_waits_for_its_executions():
    """Look-alike: a level-2 recording keeps one record per execution (cache hits included, hits_seen)."""
    from hlodiff.dumps.follow import follower_for

    follower = follower_for(str(FIXTURES / "torch_xla" / "live_batch_change" / "dump"))
    records = follower.poll() + follower.close()
    assert len(records) > 2 and all(r.hits_seen for r in records)
    assert not follower.compilations_only


def test_a_jax_dump_is_never_joined_to_a_torch_xla_log_beside_it(tmp_path):
    """Since level-1 logs are read (F1), a count of compilations alone can match another run's log in the folder
    above: a JAX dump of 3 modules beside this run's level-1 log of 3 compilations (../shared/scenarios'
    jax_weak_type got torch advice so). The torch_xla dump beside the same log is still joined."""
    from hlodiff.dumps.executions import log_beside

    shutil.copy(TX / "rev9_setup_probe" / "debug.log", tmp_path / "debug.log")
    shutil.copytree(FIXTURES / "jax" / "closure_jit" / "dump", tmp_path / "jax_dump")
    shutil.copytree(TX / "rev9_setup_probe" / "dump", tmp_path / "torch_dump")
    assert log_beside(str(tmp_path / "jax_dump")) is None
    assert log_beside(str(tmp_path / "torch_dump")) == str(tmp_path / "debug.log")
