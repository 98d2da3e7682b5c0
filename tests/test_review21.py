"""New-user review 21 (2026-11-28): what a user read on P3 (a JAX reshard at step 3, the loop inside main()) and P7
(the pytest plugin's freeze test), checked on the scenarios made from them and on their look-alikes."""

from __future__ import annotations

from pathlib import Path

from helpers import cli, cli_json

SCEN = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios"
P3 = SCEN / "jax" / "rev21_jx_reshard_main"
P7 = SCEN / "torch_xla" / "rev21_tx_freeze_test" / "record"


# -- F3: a jitted function called inside main() is placed at its call, not at the module-level main() --------------

def test_a_sharding_change_is_told_at_the_call_inside_main_not_at_the_main_call():
    doc = cli_json("explain-recompile", str(P3), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "sharding"
    assert (head["location"]["line"], head["location"]["function"]) == (30, "main")  # `train_step(...)`, not :35
    text = cli("explain-recompile", str(P3), codes=(1,)).stdout
    assert "(sharding at rev21_jx_reshard_main.py:30)" in text
    assert "rev21_jx_reshard_main.py:30 (main)" in text.split("input sharding changed on parameter")[1]


def test_look_alike_a_call_at_module_level_keeps_its_line():
    # rev10_jx_sharding calls the jitted step from the module's own loop: the call is the outermost frame there
    doc = cli_json("explain-recompile", str(SCEN / "jax" / "rev10_jx_sharding"), codes=(1,))
    assert doc["headline"]["kind"] == "sharding" and doc["headline"]["location"]["line"] == 19


# -- F4: a donation change that follows from freezing (or unfreezing) is told as following, with no fix of its own --

def _aliasing(folder: Path) -> list[dict]:
    doc = cli_json("explain-recompile", str(folder), codes=(1,))
    return [c for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "aliasing"]


def test_the_donation_lost_with_the_frozen_weights_follows_from_the_freeze():
    (cause,) = _aliasing(P7)
    assert cause["fix"].startswith("follows from the outputs removed above")
    assert "update the same tensors in place" not in cause["fix"]
    text = cli("explain-recompile", str(P7), codes=(1,)).stdout
    assert "update the same tensors in place every step" not in text
    assert "otherwise freeze them before the first step" in text  # the headline's fix stays


def test_look_alike_unfreezing_gains_donation_as_a_consequence_too():
    causes = _aliasing(SCEN / "torch_xla" / "ulmfit_unfreeze" / "record")
    assert causes and all(c["fix"].startswith("follows from the outputs added above") for c in causes)


def test_look_alike_an_ema_begun_late_keeps_its_own_in_place_fix():
    # lr_ema_after_warmup: the EMA's tensors are updated in place from one step, no gradient: the donation is the
    # in-place update itself, and the row that says so stays
    causes = _aliasing(SCEN / "torch_xla" / "lr_ema_after_warmup")
    assert causes and all(c["fix_rule"] == "aliasing_torch" for c in causes)


# -- F5: the words agree with the evidence: no "line unknown" under a line told, no bare "mode" for autocast --------

def _rendered(cause) -> str:
    import io

    from rich.console import Console

    from hlodiff.render.terminal import render_causes

    out = io.StringIO()
    render_causes(Console(file=out, width=200, color_system=None), [cause])
    return out.getvalue()


def test_a_hint_under_a_line_told_is_a_hint_not_line_unknown():
    # P5: "at p5_tc_collator.py:34" then "line unknown: ... Dynamo's log names your line (above)" right under it
    from hlodiff.diff.model import Cause
    from hlodiff.hlo.model import SourceFrame

    hint = "the graph's frames end in torch.compile's XLA bridge; Dynamo's log names your line (above)"
    placed = Cause("shape", "input shape changed on parameter %p3.14: s64[2,7] -> s64[2,9]",
                   locations=[SourceFrame("/home/user/project/train.py", 34, None)], hint=hint)
    text = _rendered(placed)
    assert "line unknown" not in text and "hint: the graph's frames end" in text
    lineless = Cause("shape", "input shape changed on parameter %p3.14: s64[2,7] -> s64[2,9]", hint=hint)
    assert "line unknown: the graph's frames end" in _rendered(lineless)


def test_a_bridge_graph_placed_at_dynamos_call_says_no_line_unknown_under_it():
    # dyn_static_lengths (sources on disk): the bridge's graph is told at the call :24 Dynamo's section names; before,
    # "line unknown: ... Dynamo's log names your line (above)" followed it
    folder = SCEN / "dynamo" / "dyn_static_lengths"
    text = cli("explain-recompile", str(folder), "--source-map", f"/home/user/project={SCEN / 'dynamo'}",
               codes=(0, 1)).stdout
    lines = text.splitlines()
    assert any(line.strip() == "at /home/user/project/dyn_static_lengths.py:24" for line in lines)
    for above, below in zip(lines, lines[1:]):
        assert not (above.lstrip().startswith("at ") and below.lstrip().startswith("line unknown")), (above, below)


def test_the_live_line_calls_an_autocast_guard_the_autocast_setting():
    from live_replay import printed, replay_case

    said = [line for line in printed(replay_case("dynamo/dyn_autocast_steps")) if "dyn_autocast_steps.py:" in line]
    assert any("autocast setting at dyn_autocast_steps.py:" in line for line in said), said
    assert not any(": mode at " in line for line in said)


def test_mode_labels_name_what_the_guard_is_about():
    from hlodiff.dumps.dynamo_log import GuardFailure
    from hlodiff.explain.dynamo_types import DynamoRecompile
    from hlodiff.explain.live_dynamo import mode_label

    def item(guard: str, facts=(), subject=None):
        return DynamoRecompile("0/1", "forward", "mode", GuardFailure("0/0", guard), None, subject=subject,
                               facts=frozenset({"dynamo", *facts}))

    assert mode_label(item("GLOBAL_STATE changed: autocast", {"autocast"})) == "autocast setting"
    assert mode_label(item("GLOBAL_STATE changed: grad_mode")) == "grad mode"
    assert mode_label(item("L['self'].training == True")) == "train/eval mode"
    assert mode_label(item("GLOBAL_STATE changed: num_threads", {"global_setting"}, "num_threads")) == \
        "num_threads setting"
    assert mode_label(item("another stack", {"function_mode_stack"})) == "torch function mode stack"


# -- F6: cost's counts and words agree ------------------------------------------------------------------------------

def test_the_undonated_inputs_shapes_add_up_to_their_count():
    from helpers import cost_scenario

    head = cost_scenario("jax_adam_no_donate")["headline"]
    assert head["count"] == 6 and len(head["shapes"]) == 6  # every input, not the 4 largest
    assert "6 inputs (3 x f32[64,128], 3 x f32[128,1], 97.5 KiB)" in head["summary"]


def test_a_shape_list_counts_what_it_does_not_show():
    from hlodiff.render.cost_headline import shape_list

    assert shape_list(["f32[8]", "f32[8]", "f32[4]"]) == "2 x f32[8], f32[4]"
    assert shape_list([f"f32[{n}]" for n in range(9, 3, -1)]) == "f32[9], f32[8], f32[7], f32[6] and 2 more"


def test_an_eager_ops_copies_are_per_call_not_per_step():
    folder = SCEN / "cost" / "jax_adam_no_donate"
    text = cli("cost", str(folder / "dump"), "--jax-log", str(folder / "stderr.log"), codes=(0,), columns=200).stdout
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.count("│") >= 5}
    assert "/call:" in rows["jit_stage"] and "/call" not in rows["jit_train_step"]
    assert "copies/step marked /call: an operation JAX ran outside jit" in text
