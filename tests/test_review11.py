"""New-user review 11 (2026-11-27), torch_xla and JAX findings F2-F6 and F8, each on the reviewer's program captured
as a scenario (fixtures/scenarios/*/rev11_*) and on the look-alikes whose answer must not move."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json
from hlodiff.explain.cycles import schedule_like

SCEN = FIXTURES / "scenarios"
KWARGS = SCEN / "jax" / "rev11_jx_kwargs"
SCHED = SCEN / "torch_xla" / "rev11_tx_sched_sampling" / "record"
EMA = SCEN / "torch_xla" / "rev11_tx_ema_control" / "record"
RING = SCEN / "torch_xla" / "rev11_tx_ring_index" / "record"


def _rules(doc) -> list[tuple[str, str]]:
    return [(c["kind"], c["fix_rule"]) for r in doc["recompilations"] for c in r["causes"]]


# -- F2: a keyword call joins the function it calls, not the gradient compiled in between -------------------------

def test_a_keyword_call_is_the_same_function_recompiled_for_its_cache_key():
    """jx_kwargs: `forward_loss(params, x, y=y)` (:16) compiles the plain call's HLO again; the
    `jax.jit(jax.value_and_grad(forward_loss))` module of the same name compiled in between is another function."""
    doc = cli_json("explain-recompile", str(KWARGS), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "cache_key" and head["location"]["line"] == 16
    assert "keyword" in head["fix"] and "tuple" not in head["fix"]
    (mine,) = [r for r in doc["recompilations"] if r["family"] == "jit_forward_loss"]
    assert mine["similarity"] == 1.0


def test_a_gradient_beside_its_forward_stays_another_function():
    # look-alike: jax.jit(loss) and jax.jit(jax.value_and_grad(loss)), called from two lines, nothing recompiled
    doc = cli_json("explain-recompile", str(SCEN / "jax" / "jax_grad_and_forward"), codes=(0,))
    assert doc["headline"] is None


# -- F3: a coin flip whose short sequence repeats once is not a step schedule ------------------------------------

def test_a_round_with_no_graph_once_is_periodic_only_when_seen_three_times():
    assert not schedule_like(list("ABBAAABBAA"), 5)  # tx_sched_sampling's 10 coin flips
    assert schedule_like(list("AAABAAAB"), 4)  # an EMA every 4th step: one graph once a round
    assert schedule_like(list("ABCABC"), 3) and schedule_like(list("ABAB"), 2)  # round-robin, alternating


def test_scheduled_sampling_is_told_recurring_with_torch_where():
    doc = cli_json("explain-recompile", str(SCHED), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "ops" and head["location"]["line"] == 25
    assert "torch.where" in head["fix"] and "step count" not in head["fix"] and "every 5" not in head["fix"]
    first = cli("explain-recompile", str(SCHED), codes=(1,)).stdout.splitlines()[0]
    assert "recurring" in first and "periodic" not in first


def test_an_ema_every_fourth_step_stays_periodic():
    first = cli("explain-recompile", str(SCEN / "torch_xla" / "ema_every4"), codes=(0, 1)).stdout.splitlines()[0]
    assert "periodic" in first


# -- F4: equal Python scalars passed as one input -----------------------------------------------------------------

def test_equal_scalars_merged_into_one_input_are_told_as_such():
    """tx_ema_control: on step 8 decay and 1 - decay are both 0.5: one scalar input fewer, two transposes moved,
    no operation removed."""
    doc = cli_json("explain-recompile", str(EMA), codes=(1,))
    assert ("inputs", "inputs_equal_scalars") in _rules(doc)
    fix = doc["headline"]["fix"]
    assert "equal" in fix and "ops change" not in fix and "operations removed" not in fix


def test_compare_calls_transposes_beside_an_input_change_layout_not_a_branch():
    doc = cli_json("compare", f"{EMA}#7", f"{EMA}#8", codes=(0, 1))
    rules = {c["kind"]: c["fix_rule"] for c in doc["causes"]}
    assert rules == {"inputs": "inputs_equal_scalars", "ops": "ops_layout_follow_inputs"}


def test_the_same_ema_without_equal_values_compiles_once():
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev11_tx_ema_no_half" / "record"), codes=(0,))
    assert doc["headline"] is None


# -- F5: a ring buffer made before the loop is no code path of a rotation -----------------------------------------

def test_a_ring_buffer_made_before_the_loop_is_the_first_steps_tensor():
    doc = cli_json("explain-recompile", str(RING), codes=(1,))
    rules = _rules(doc)
    assert ("inputs", "rotation_input_made_first_step") in rules and ("inputs", "rotation_paths") not in rules
    assert "round-robin" not in cli("explain-recompile", str(RING), codes=(1,)).stdout


def test_tasks_visited_round_robin_keep_their_rotation():
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "review2_multitask_rr" / "record"), codes=(0, 1))
    rules = {rule for _, rule in _rules(doc)}
    assert "rotation_paths" in rules and "rotation_input_made_first_step" not in rules


# -- F6: watch --until-idle says what it waited for -------------------------------------------------------------

def test_watch_stopped_before_any_graph_says_so(tmp_path):
    """The reviewer's folder while torch_xla started: empty redirects and an empty dump folder: nothing is known."""
    run = tmp_path / "run"
    (run / "dump").mkdir(parents=True)
    (run / "stderr.log").write_text("starting\n")
    result = cli("watch", str(run), "--until-idle", "0.5")
    assert result.exit_code == 0
    last = result.stderr.splitlines()[-1]
    assert "no graph was written yet" in last and "waited for an XLA dump module" in last
    assert "nothing is known about its recompilations" in last


def test_an_empty_dump_folder_is_nothing_written():
    from hlodiff.live_run import _written

    assert not _written(((("dump", ()), ("stderr.log", 0)),))
    assert _written(((("dump", (("module_0000.txt", 120),)), ("stderr.log", 0)),))


# -- F8: JAX live lines: eager ops told once, places in a dump are compilations, not steps --------------------------

def test_jax_live_lines_tell_eager_ops_once_and_count_compilations():
    result = cli("watch", str(KWARGS), "--until-idle", "0.5")
    lines = [line for line in result.stdout.splitlines() if not line.startswith("hlodiff:   ")]
    eager = [line for line in lines if "outside jit" in line]
    assert len(eager) == 1 and "counted, not told one by one" in eager[0]
    (told,) = [line for line in lines if "recompiled" in line]
    assert told.startswith("hlodiff: compilation 3 of jit_forward_loss recompiled") and "rev11_jx_kwargs.py:16" in told
    assert not any(line.startswith("hlodiff: step ") for line in lines)
