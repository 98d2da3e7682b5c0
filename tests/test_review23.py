"""New-user review 23 (2026-11-28), findings F2 and F4, each on the reviewer's program captured as a scenario
(fixtures/scenarios/*/rev23_*) and on the look-alikes that share its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli, cli_json
from hlodiff.diff.fix_stance import FixStance, stance_of_rule
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.explain.dynamo_log_findings import recompiles_of

SCEN = FIXTURES / "scenarios"
MOE = SCEN / "torch_xla" / "rev23_tx_moe_item_capacity"
ROPE = SCEN / "dynamo" / "rev23_tc_rope_dict_cache"
ROPE_REC = SCEN / "dynamo" / "rev23_tc_rope_dict_cache_rec" / "record"


# -- F2: the step's own graph new every step, whatever the early graphs do; a read that sets a size ------------------

def test_a_step_whose_own_graph_is_new_every_step_is_unbounded_not_recurring():
    """t2: the routing's early graphs come back every step, the step's graph (sync at :39) is new at all 5 steps."""
    doc = cli_json("explain-recompile", str(MOE), codes=(1,))
    (pattern,) = doc["patterns"]
    assert pattern.startswith("unbounded:") and "every one of the 5 steps" in pattern, pattern
    assert "rev23_tx_moe_item_capacity.py:16" in pattern  # the bincount's early run is named, the first cut
    assert "seen again" not in pattern


def test_a_look_alike_mask_route_is_unbounded_too_and_a_steady_split_stays_split():
    # r30: torch.where(assign == e) per expert, the step's graph new every step (its truth: "nearly every step")
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "r30_tx_moe_where_route"), codes=(1,))
    assert doc["patterns"][0].startswith("unbounded:")
    # a split step whose graphs repeat keeps its own names (one-off: one odd step; recurring branches)
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev10_tx_item_mid"), codes=(1,))
    assert doc["patterns"][0].startswith("one-off:")
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev4_item_clip"), codes=(1,))
    assert doc["patterns"][0].startswith("recurring:")


def test_a_value_read_that_sets_a_size_gets_its_own_fix_beside_the_mask():
    doc = cli_json("explain-recompile", str(MOE), codes=(1,))
    rules = {(c.get("reason"), c["fix_rule"]) for r in doc["recompilations"] for c in r["causes"][:1]}
    assert ("read", "partial_read_sets_size_with_mask") in rules  # the .item() at :17
    assert ("data_dependent", "partial_mask_index") in rules  # the nonzero at :21 keeps the mask's fix
    # the read sets the size the mask then fills: it leads (headline_also.ROOT_LEADS), the mask is told on also:
    head = doc["headline"]
    assert head["location"]["line"] == 17 and "capacity_factor" in head["fix"]
    assert "after the sync" not in head["fix"] and "add_step_closure" not in head["fix"]
    (also,) = head["also"]
    assert also["location"]["line"] == 21 and also["fix"].startswith("a boolean mask index")
    assert stance_of_rule("partial_read_sets_size_with_mask") is FixStance.CHANGE


def test_the_terminal_heads_with_the_capacity_read_and_tells_the_mask_its_own_fix():
    out = cli("explain-recompile", str(MOE), codes=(1,)).stdout
    first_fix = next(line for line in out.splitlines() if line.startswith("fix: "))
    assert "static capacity" in first_fix
    assert "also: " in out and "apply the mask as values" in out.split("also: ", 1)[1].splitlines()[0]
    block = out.split("dump#2 recompiled", 1)[1]  # the mask's own block: its fix, never "the same as above"
    assert "fix: the same as above" not in block.split("with it:", 1)[0]


@pytest.mark.parametrize("row", range(len(__import__("hlodiff.explain.headline_also", fromlist=["x"]).ROOT_LEADS)))
def test_each_root_leads_row_puts_its_root_first_only_beside_the_root_it_leads_over(row):
    """ROOT_LEADS, per row: the root that sets a size leads over the root that fills it when both are in one
    family; alone (no such root beside it), the headline is left as it was."""
    from types import SimpleNamespace as NS

    from hlodiff.explain.headline_also import ROOT_LEADS, also_roots, lead_root
    rows, (kind, reason) = ROOT_LEADS[row]
    fam, other = object(), object()
    loc = lambda line: [NS(file="p.py", line=line)]
    filler = NS(family=fam, causes=[NS(kind=kind, reason=reason, fix_rule="x", fix="fill", locations=loc(21))])
    sizer = NS(family=fam, causes=[NS(kind="partial", reason="read", fix_rule=next(iter(rows)), fix="size",
                                      locations=loc(17))])
    elsewhere = NS(family=other, causes=sizer.causes)
    assert lead_root(filler, [filler, sizer]) is sizer
    assert [c.fix for c in also_roots(sizer, [filler, sizer])] == ["fill"]
    assert lead_root(filler, [filler, elsewhere]) is filler  # another family's read does not lead this one
    assert lead_root(filler, [filler]) is filler and also_roots(sizer, [sizer]) == []


def test_a_mask_cut_without_a_size_read_tells_no_also():
    # look-alike: r30's cuts are all the mask's early runs (no .item() of its own): no second root to tell
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "r30_tx_moe_where_route"), codes=(1,))
    assert doc["headline"]["also"] == []


# -- F4: a dict on the module the forward fills on its first call; record tells the guard's line ------------------

def _recompile(guard: str):
    compiles = [DynamoCompile("0/0", "forward"),
                DynamoCompile("0/1", "forward", failures=[GuardFailure("0/0", guard)])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles))
    return r


@pytest.mark.parametrize("guard, rule", [
    # a dict on the compiled module that lacked the key at the first compile: a cache the forward fills
    ("not ___dict_contains(12, self._rope_cache)", "dynamo_dict_cache_filled"),
    ("not ___dict_contains('cos', L['self']._modules['rot'].tables)", "dynamo_dict_cache_filled"),
    # look-alikes: a caller's dict with a key on some calls only, and a module dict that lost its key, keep theirs
    ("not ___dict_contains('attention_mask', batch)", "dynamo_dict_keys"),
    ("___dict_contains(12, self._rope_cache)", "dynamo_dict_keys"),
])
def test_a_dict_cache_filled_by_the_first_call_and_its_look_alikes(guard, rule):
    r = _recompile(guard)
    assert r.fix_rule == rule, (guard, r.fix_rule)
    if rule == "dynamo_dict_cache_filled":
        assert "__init__" in r.fix and "first call" in r.fix and "from call to call" not in r.fix


def test_the_dict_cache_is_told_by_hand_and_under_record_with_the_guard_line():
    # by hand (a text log, no sources on disk here): the guard's line :13 leads; under record (TORCH_TRACE names
    # the call :38) the guard's line is kept beside the call, as the by-hand capture tells it with sources
    told = {}
    for folder in (ROPE, ROPE_REC):
        doc = cli_json("explain-recompile", str(folder), codes=(0, 1))
        (r,) = doc["dynamo"]["recompiles"]
        assert r["fix_rule"] == "dynamo_dict_cache_filled", folder
        told[folder] = (r["location"]["line"], (r["guard_at"] or {}).get("line"))
    assert told[ROPE][0] == 13
    assert told[ROPE_REC] == (38, 13), told


def test_a_story_s_compilations_are_said_as_part_of_the_run_s():
    # "10 compilations" in the summary, "story: 8 compilations" under it read as two counts of one thing
    text = cli("explain-recompile", str(MOE), codes=(1,)).stdout
    assert "10 compilations, 4 recompilations" in text.splitlines()[0]
    assert "story: 8 of the run's 10 compilations, 4 of them recompilations, one root" in text


# -- F9: counts a user checks against the table under them -------------------------------------------------------

def test_cost_counts_the_steps_a_read_ran_in_whatever_graph_followed_it():
    """t2: the step's graph is new every step, so no (read, sync) pair ran 5 times; the read did, in each of 5 steps,
    6 early graphs a step (the table: 5 at :16 and :17, 20 at :21)."""
    out = cli("cost", str(MOE), codes=(0, 1)).stdout
    first = next(line for line in out.splitlines() if line.startswith("first:"))
    assert "in 5 steps of this run (30 early graphs)" in first and "4 times" not in first


def test_a_first_step_graph_of_its_own_does_not_drop_a_step_from_the_read_count():
    # look-alike in the house fixtures: a split step whose first step's sync graph differs (an optimizer's state)
    from hlodiff.cost.reads import reads_in_step

    class G:
        def __init__(self, ref, name, call):
            self.ref, self.name, self.sync_call = ref, name, call
            self.heavy_ops, self.stack, self.output_shapes = None, (), ("f32[]",)
            self.trigger, self.library_read = None, ""

    graphs = [G("d#0", "read", "read"), G("d#1", "stepA", "sync")]
    for i in range(2, 12, 2):
        graphs += [G(f"d#{i}", "read", "read"), G(f"d#{i + 1}", "stepB", "sync")]
    (found,) = reads_in_step(graphs)
    assert found.times == 6  # six steps read early; the pair (read, stepB) ran five times


def test_a_compiled_graph_without_a_time_is_unknown_not_blank():
    out = cli("cost", str(MOE), codes=(0, 1)).stdout
    row = next(line for line in out.splitlines() if line.startswith("#6 "))
    assert row.rstrip().endswith("?")
    assert "compile s unknown (?) for 10 compiled graphs" in out
