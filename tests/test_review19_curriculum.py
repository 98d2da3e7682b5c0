"""New-user review 19, P5 (fixtures/scenarios/dynamo/rev19_tc_curriculum*): a compiled nn.Module (dynamic=False) fed
a sequence-length curriculum of 16, 32 then 64 tokens, three steps each, called once as ``fwd(ids)`` (:26).

F3: captured by hand, the line was forward's ``def`` (:11) and ``watch`` told "step 1 recompiled" for the 4th step
(Dynamo's log is written ahead of torch_xla's debug log). F4: under the right headline, the XLA section called 3
sizes "unbounded", gave two plans for one dimension and split one cause into four roots.
"""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from helpers import cli_json

from live_replay import printed, replay

DYN = FIXTURES / "scenarios" / "dynamo"
CASES = [("rev19_tc_curriculum", "e"), ("rev19_tc_curriculum_record", "c")]


def _report(folder: str) -> dict:
    return cli_json("explain-recompile", DYN / folder, "--source-map", f"/home/user/project={DYN}", codes=(0, 1))


def _steps(said: list[str], words: str) -> set[int]:
    return {int(m.group(1)) for x in said if words in x for m in [re.search(r"step (\d+)", x)] if m}


@pytest.mark.parametrize("name,capture", CASES)
def test_the_size_recompilations_are_told_live_at_the_users_steps_3_and_6(name, capture):
    said = printed(replay(DYN / name, capture))
    guard = [x for x in said if "guard `tensor 'ids' size mismatch" in x or "new sizes (dim 1 of ids" in x]
    assert guard, said
    assert _steps(guard, "") == {3, 6}, guard  # the 4th and 7th steps (0-based, as the program prints them)


def test_by_hand_the_line_is_the_one_call_of_the_compiled_module_not_its_def():
    doc = _report("rev19_tc_curriculum")
    assert doc["headline"]["location"]["line"] == 26


def _plans(doc: dict) -> list[str]:
    return [c["plan"] for r in doc["recompilations"] for c in r["causes"] if c.get("plan")]


def test_the_bridge_s_graphs_of_dynamo_s_compiles_are_not_called_unbounded_nor_given_a_plan_of_their_own():
    doc = _report("rev19_tc_curriculum_record/record")
    assert not any(p.startswith("unbounded") for p in doc["patterns"]), doc["patterns"]
    assert any(p.startswith("with Dynamo's compiles") and "follow from Dynamo's 2 recompilations" in p
               for p in doc["patterns"]), doc["patterns"]
    plans = _plans(doc)
    # one plan for the sizes (pad to the next of a few), never "a new larger one every time: preallocate" beside it
    assert plans and {p["kind"] for p in plans} == {"buckets"}, plans
    assert {tuple(v["size"] for v in p["values"]) for p in plans} == {(16, 32, 64)}, plans


def test_a_bridge_family_compiled_at_every_call_is_still_unbounded():
    # look-alike (review 10 F1): the call's input drawn on the device, a new bridge graph at every call, Dynamo
    # compiling every call too: the bridge's letters are the run's
    doc = _report("rev10_dc_control_break")
    assert any(p.startswith("unbounded") for p in doc["patterns"]), doc["patterns"]


def test_torch_xla_s_early_read_words_on_a_bridge_graph_say_whose_sync_it_was():
    from helpers import cli

    out = cli("explain-recompile", DYN / "rev19_tc_curriculum_record" / "record", "--source-map",
              f"/home/user/project={DYN}", codes=(0, 1))
    early = [x for x in out.stdout.splitlines() if "user code trying to access tensor value" in x]
    assert early and all("not a read in your code" in x for x in early), early


# F5 (P2, fixtures/reviews/rev19_accum_adamw: the reviewer's `record` folder, no truth): AdamW stepped every 4th
# micro-batch, a sync after each; step 3's graph is the first to run the optimizer and creates its state


def test_the_optimizer_s_first_step_in_an_accumulation_cycle_is_told_live_as_its_first_step_not_a_setting():
    from live_replay import score_live

    folder = FIXTURES / "reviews" / "rev19_accum_adamw"
    events, skipped = score_live().replay(folder, "c")
    assert skipped is None
    said = printed(events)
    update = [x for x in said if "update at p2_tx_grad_accum.py:18" in x]
    assert update and all("the optimizer's first step" in x and "expected" in x for x in update), said
    assert not any("hyperparameter of the optimizer changed" in x for x in said), said


def test_a_dump_s_repeated_letters_say_they_count_compilations_of_one_hlo():
    # F8 (P3b: "2 compilations of jit_train_step (A,A)"): the legend where a letter repeats, none where none does
    from hlodiff.explain.pattern_words import pattern_text
    from hlodiff.explain.patterns import Pattern

    same = Pattern("dump", family="jit_train_step", graphs=2, compilations=2, letters=("A", "A"), seen_again=1)
    other = Pattern("dump", family="jit_train_step", graphs=2, compilations=2, letters=("A", "B"), seen_again=0)
    assert "(A,A; a letter per compilation, the same letter for the same HLO)" in pattern_text(same)
    assert "(A,B)" in pattern_text(other) and "letter per compilation" not in pattern_text(other)
