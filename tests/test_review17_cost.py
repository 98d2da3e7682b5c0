"""New-user review 17, F6: `hlodiff cost` on the reviewer's X3 (AdamW, fixed shapes, one sync:
fixtures/scenarios/cost/rev17_tx_stable_adamw) said "nothing to act on" and then showed `copies/step 12: 194.2 KiB`
with no word why, "971.2 KiB named crossing (the total is not known)", every step graph "(optimizer)", five identical
boundary blocks, and a "warning: ... (a note, not a fault)" first."""

from __future__ import annotations

from conftest import FIXTURES
from helpers import cli, cli_json

from hlodiff.cost.alias_copies import aliasing_copies
from hlodiff.hlo.parser import parse_module

COST = FIXTURES / "scenarios" / "cost"
X3 = COST / "rev17_tx_stable_adamw" / "record"

ALIASED = """HloModule step, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY %main (p0: f32[4], p1: f32[4]) -> (f32[4], f32[4]) {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  %copy = f32[4]{0} copy(%p0)
  %copy.1 = f32[4]{0} copy(%p1)
  %add = f32[4]{0} add(%copy, %copy.1)
  ROOT %tuple = (f32[4]{0}, f32[4]{0}) tuple(%add, %copy.1)
}
"""


def test_only_the_copies_of_an_aliased_parameter_serve_the_in_place_update():
    # p0 is written back in place (output 0 aliases it): its copy is XLA's; p1 aliases nothing: its copy is a copy
    assert aliasing_copies(parse_module(ALIASED)) == {"copy"}
    assert aliasing_copies(parse_module(ALIASED.replace(", input_output_alias={ {0}: (0, {}, may-alias) }", ""))) \
        == frozenset()


def test_adamw_s_copies_are_told_as_the_in_place_update_nothing_to_act_on():
    doc = cli_json("cost", X3, codes=(0,))
    assert doc["headline"] is None
    steps = [g for g in doc["graphs"] if g["copies"]]
    assert steps and all(c["aliasing"] for g in steps for c in g["copies"])
    out = cli("cost", X3, columns=200, codes=(0,)).stdout
    assert "12 aliasing: 194.2 KiB" in out
    assert "in place" in out and "nothing to act on" in out.split("copies/step marked aliasing", 1)[1]


def test_a_loop_buffer_copy_is_not_called_aliasing():
    # look-alike: the copies a scan's carried buffer costs every iteration are the headline, not the update in place
    case = COST / "jax_layer_stack_carry"
    doc = cli_json("cost", case / "dump", "--jax-log", case / "stderr.log", codes=(0,))
    copies = [c for g in doc["graphs"] for c in g["copies"]]
    assert copies and not any(c["aliasing"] and c["loop"] for c in copies)
    assert doc["headline"]["kind"] == "loop_buffer_copy"


def test_a_steady_loop_s_boundaries_are_one_block_of_the_training_step():
    out = cli("cost", X3, columns=200, codes=(0,)).stdout
    assert "(optimizer)" not in out and "1 optimizer" not in out
    assert out.count("(training step -> training step, x5)") == 1
    assert out.count("id=45 ") == 1  # the tensors listed once, not once per step
    assert "named crossing" not in out and "the total is not known" not in out
    # the total is partial only because record stopped reporting once the run repeated: said so, not "no reads="
    assert "after the run repeated itself" in out and "printed live-tensor report" not in out


def test_an_optimizer_graph_of_its_own_keeps_its_phase():
    # look-alike: a sync after backward() leaves the optimizer's step a graph of its own: it is "optimizer"
    out = cli("cost", COST / "xla_sync_after_backward" / "record", columns=200, codes=(0,)).stdout
    assert "(backward) -> #1 (optimizer)" in out and "training step" not in out


def test_the_steps_after_the_run_repeated_are_a_note_the_report_tells_not_a_warning():
    run = cli("cost", X3, columns=200, codes=(0,))
    assert "warning" not in run.stderr
    assert "steps 6-7 (2 graphs): no report before them" in run.stdout
    notes = cli_json("cost", X3, codes=(0,))["warnings"]
    assert any(": note: " in w and "repeated itself" in w for w in notes)
