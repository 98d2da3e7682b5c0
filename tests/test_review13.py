"""New-user review 13 (2026-11-27), findings F1, F5, F7 and F8, each on the reviewer's program captured as a scenario
(fixtures/scenarios/torch_xla/rev13_*) and on the look-alikes that share its evidence."""

from __future__ import annotations

import re

import pytest

from helpers import FIXTURES, cli, cli_json, fix_rules_of
from hlodiff.diff.condition_read import condition_shapes
from hlodiff.diff.fix_rules import CONDITION_READ_RULE, RULES_BY_NAME
from hlodiff.diff.fix_stance import FixStance, stance_of_rule

SCEN = FIXTURES / "scenarios"
NAN_GUARD = SCEN / "torch_xla" / "rev13_t3_nan_guard" / "record"
DUMP_ONLY = SCEN / "torch_xla" / "rev13_t1_dump_only" / "dump"


# -- F1: a value read early that is a condition gates the step: it cannot be read later -------------------------

@pytest.mark.parametrize("shapes, condition", [
    (["pred[]"], True),                 # `if not torch.isfinite(loss).item():`, `if loss > 4.0:`
    (["pred[]", "pred[]"], True),       # two conditions read at once
    (["f32[]"], False),                 # loss.item() to log it
    (["pred[]", "f32[]"], False),       # a condition and a number: the number may be a log
    (["pred[8]"], False),               # a mask (its count sets a size): the mask rows
    ([], False),
])
def test_only_one_element_booleans_are_a_condition(shapes, condition):
    assert condition_shapes(shapes) is condition


def test_a_read_that_gates_the_optimizer_step_is_decided_on_the_device():
    """t3_nan_guard: `if not torch.isfinite(loss).item(): skip` before AdamW's step. Reading it after the sync, or
    in a step closure, cannot decide whether to apply the update (F1)."""
    doc = cli_json("explain-recompile", str(NAN_GUARD), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] == 15
    assert CONDITION_READ_RULE in fix_rules_of(doc) and "partial_read" not in fix_rules_of(doc)
    assert "torch.where" in head["fix"] and "found_inf" in head["fix"]
    assert "add_step_closure" not in head["fix"] and "after the sync" not in head["fix"]
    assert stance_of_rule(CONDITION_READ_RULE) is FixStance.CHANGE


def test_cost_words_the_same_read_with_the_same_row():
    """One fact, one row: `hlodiff cost`'s read-in-step finding on the same capture gives explain-recompile's fix,
    not "2 different graphs followed the read" (AdamW's first step is no branch, review 5 F6)."""
    head = cli_json("cost", str(NAN_GUARD), codes=(0,))["headline"]
    assert (head["kind"], head["location"]["line"], head["condition"]) == ("read_in_step", 15, True)
    explained = cli_json("explain-recompile", str(NAN_GUARD), codes=(1,))["headline"]["fix"]
    assert head["fix"] == explained
    assert "different graphs followed" not in head["fix"]


def test_every_section_of_the_report_says_the_same_fix():
    """The headline and the detail section of the step's second graph (and record's live lines, scored by
    score_live.py) said "read it after the sync" (F1); none does now."""
    out = cli("explain-recompile", str(NAN_GUARD), codes=(1,)).stdout
    assert "add_step_closure" not in out
    text = RULES_BY_NAME[CONDITION_READ_RULE].text
    assert text.split("{line}")[1][:60] in out


@pytest.mark.parametrize("fixture", ["torch_xla/print_partial", "torch_xla/item_partial"])
def test_a_value_read_to_log_it_keeps_read_it_later(fixture):
    # look-alikes: a loss printed or .item()'d mid-step to log it (a number, f32[]): moving the read is the fix
    folder = FIXTURES / fixture
    doc = cli_json("explain-recompile", str(folder / "graphs.hlo.0"), codes=(0, 1))
    assert CONDITION_READ_RULE not in fix_rules_of(doc)
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["fix_rule"] == "partial_read"]
    assert fixes and all("add_step_closure" in f for f in fixes)


def test_cost_keeps_read_it_later_for_a_logged_loss():
    # look-alike: loss.item() between the backward and opt.step() to log it (pytorch/xla#1777)
    head = cli_json("cost", str(SCEN / "cost" / "xla_item_mid_step" / "record"), codes=(0, 1))["headline"]
    assert head["kind"] == "read_in_step" and head["condition"] is False
    assert "add_step_closure" in head["fix"]


def test_a_library_read_of_a_condition_keeps_the_librarys_row():
    # look-alike: clip_grad_norm_(error_if_nonfinite=True) reads isnan/isinf inside torch: the argument is the fix
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "review2_clip_nonfinite" / "graphs.hlo.0"),
                   codes=(1,))
    assert "partial_library_read" in fix_rules_of(doc) and CONDITION_READ_RULE not in fix_rules_of(doc)


def test_a_branch_the_read_took_keeps_its_lines():
    # look-alike: if_loss_spike's `if loss > 4.0:` took both branches in the run: the row naming them stays
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "if_loss_spike"), codes=(1,))
    assert "partial_read_sets_branch_lines" in fix_rules_of(doc)


# -- F5: the expected warm-up is told after the cause to act on; a first compilation is not "recompiled" ---------

def test_the_split_is_told_before_adamws_expected_warm_up():
    out = cli("explain-recompile", str(NAN_GUARD), codes=(1,)).stdout
    titles = [line for line in out.splitlines() if "record#" in line.split(" ", 1)[0]]
    assert "record#1 " in titles[0] and titles[-1].endswith("expected")
    assert "record#1 compiled as the first step's second graph" in titles[0] and "recompiled" not in titles[0]
    assert "record#3 recompiled" in titles[1]


def test_the_json_and_the_html_say_which_graph_is_the_first_steps_rest(tmp_path):
    doc = cli_json("explain-recompile", str(NAN_GUARD), codes=(1,))
    firsts = {r["graph"].rsplit("#", 1)[1]: r["first_step_rest"] for r in doc["recompilations"]}
    assert firsts == {"1": True, "3": False}
    page = tmp_path / "r.html"
    cli("explain-recompile", str(NAN_GUARD), "--html", str(page), codes=(1,))
    html = page.read_text()
    assert "#1 compiled as the first step's second graph" in html
    assert html.index("#1 compiled as the first") < html.index("#3 recompiled")


def test_a_step_cut_every_step_by_a_logged_read_keeps_its_order():
    # look-alike: print_partial (no warm-up): its detail sections keep run order
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "print_partial" / "graphs.hlo.0"), codes=(0, 1)).stdout
    refs = [int(line.split("#", 1)[1].split()[0]) for line in out.splitlines()
            if "graphs.hlo.0#" in line.split(" ", 1)[0]]
    assert len(refs) >= 1 and refs == sorted(refs)


# -- F7: a dump alone counts each size once per compilation: no share of the work from it --------------------------

def test_a_plan_from_a_dump_alone_prints_no_padded_share():
    """X3: T1's dump alone, 2 compilations of 16 and 4 rows: "60 % padded work" where the run's 14 executions pad
    12 %. The plan still says what to pad to, and what would count the executions."""
    out = cli("explain-recompile", str(DUMP_ONLY), codes=(1,)).stdout
    plan = next(line for line in out.splitlines() if line.startswith("plan:"))
    assert "over 2 compilations" in plan and "pad up to 16 → 1 graph instead of 2" in plan
    assert "padded work" not in plan and not re.search(r"\d %(?!p)", plan) and "PT_XLA_DEBUG_LEVEL=2" in plan


def test_a_plan_over_executions_keeps_its_padded_share():
    # look-alike: the same evidence with the executions seen (a debug log beside the saved graphs): the share stays
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "batch_shape"), codes=(1,)).stdout
    plan = next(line for line in out.splitlines() if line.startswith("plan:"))
    assert "over 6 executions" in plan and "9 % padded work" in plan


# -- F8: one figure for one saved compilation; the hint's recipe is the README's ------------------------------------

def test_a_plan_saves_what_the_recompilations_cost():
    """T1 (record): "recompilation cost 0.69 s" and "saves 0.9 s ... at 0.86 s per graph" for the one compilation
    the plan removes: the first compilation's 1.03 s was in the mean. rev5_partial_batch_record (a short last batch
    beside Adam's warm-up, 3 compilations): the seconds per graph a plan saves are the recompilations' mean."""
    out = cli("explain-recompile", str(SCEN / "torch_xla" / "rev5_partial_batch_record" / "record"), codes=(1,)).stdout
    head = out.splitlines()[0]
    cost = float(head.split("recompilations cost ", 1)[1].split(" s", 1)[0])
    assert "2 recompilations" in head
    plan = next(line for line in out.splitlines() if line.startswith("plan:"))
    assert f"saves {cost / 2:.2f} s of compiling at {cost / 2:.2f} s per graph" in plan


def test_the_hint_for_a_missing_line_gives_the_readmes_recipe():
    """T2 by hand: "pass --tensors-report (captured with `hlodiff record`)", while the README's recipe prints the
    report into the stdout log, found there by content (label_smoothing_on: a dump and a debug log, no report)."""
    readme = (FIXTURES.parent / "README.md").read_text()
    recipe = "torch_xla._XLAC._xla_tensors_report(0, str(device))"
    assert f"print({recipe})" in readme
    out = cli("explain-recompile", str(SCEN / "torch_xla" / "label_smoothing_on"), codes=(1,)).stdout
    hint = next(line for line in out.splitlines() if line.startswith("hint: some causes have no user line"))
    assert f"print {recipe} before each sync" in hint and "found there by content" in hint
    assert "pass --tensors-report (captured with" not in hint


# -- F8: inspect on a torch.compile run names the user's call, not the bridge's line ------------------------------

def test_inspect_names_the_compiled_calls_line_not_the_bridges():
    """dc_global_flag (torch.compile under record): the stacks torch_xla logs for the bridge's executions stop at 8
    library frames (dynamo_bridge.py:552); the call `cmodel(x)` at :30 is in the graphs' own metadata."""
    folder = SCEN / "dynamo" / "rev12_dc_global_flag" / "record"
    doc = cli_json("inspect", str(folder))
    bridged = [g for g in doc["graphs"] if g["trigger"] and "dynamo_bridge" in g["trigger"]["file"]]
    assert bridged and all(g["call_site"] and g["call_site"]["line"] == 30 for g in bridged)
    out = cli("inspect", str(folder)).stdout
    assert "rev12_dc_global_flag.py:30" in out and "dynamo_bridge.py" not in out


def test_inspect_keeps_a_sync_line_of_the_users():
    # look-alike: a torch_xla run whose stacks reach the user's sync: no call site, the trigger is the user's line
    doc = cli_json("inspect", str(NAN_GUARD))
    assert all(g["call_site"] is None for g in doc["graphs"])
    assert {g["trigger"]["line"] for g in doc["graphs"]} == {15, 20}
