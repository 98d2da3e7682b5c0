"""New-user review 18, F4: the live lines of `record`/`watch` for torch.compile runs, replayed from real captures
(fixtures/scenarios/dynamo/rev18_tc_temperature_limit is the reviewer's c2b; rev11_dc_train_eval_record a train/eval
loop like the reviewer's c1). The bridge's graphs of the first call were three "compiled again ... dtype" lines (a
dtype problem to a reader), and step numbers went backwards ("step 7 recompiled again" then "step 1 recompiled
again")."""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES

from live_replay import printed, replay

DYN = FIXTURES / "scenarios" / "dynamo"
CASES = ["rev18_tc_temperature_limit", "rev11_dc_train_eval_record"]
STEP = re.compile(r"hlodiff: step (\d+)")


def _replay(name: str) -> tuple[list, list[str]]:
    events = replay(DYN / name, "c")
    return events, printed(events)


@pytest.mark.parametrize("name", CASES)
def test_the_first_call_s_bridge_graphs_are_one_line_with_no_cause_kind(name):
    events, said = _replay(name)
    first = [x for x in said if "the Dynamo bridge compiled the first call's graphs" in x]
    assert len(first) == 1, said
    assert not re.search(r"\b(dtype|outputs|inputs|shape)\b", first[0]), first
    bridge_steps = [e.step for e in events if e.kind == "follows" and e.warmup]
    assert bridge_steps, [(e.kind, e.step) for e in events]
    told_again = [x for x in said if "the Dynamo bridge compiled again" in x
                  and int(STEP.match(x).group(1)) in bridge_steps]
    assert not told_again, said  # none of the first call's graphs told one by one with a kind


@pytest.mark.parametrize("name", CASES)
def test_step_numbers_never_go_backwards_unless_the_line_says_it_is_late(name):
    events, said = _replay(name)
    steps = [int(m.group(1)) for x in said if "now that more of the run is known" not in x
             for m in [STEP.match(x)] if m]
    assert steps == sorted(steps), said
    late = [x for x in said if "told late)" in x]
    assert all(re.match(r"hlodiff: \(about step \d+, told late\)", x) for x in late), late
    marked = [e.to_json() for e in events if e.late]
    assert all(j["told_late"] for j in marked) and len(marked) == len(late)


def test_a_dynamo_line_read_after_later_steps_says_it_is_late():
    # the capture's Dynamo log names 0/1's guard (:9) only after the steps of 0/2..0/7 were told
    _, said = _replay("rev18_tc_temperature_limit")
    assert any(x.startswith("hlodiff: (about step 1, told late) recompiled again") for x in said), said


def test_the_bridge_graph_after_dynamo_s_recompilation_keeps_its_own_line():
    # look-alike: the eval call's bridge graph follows Dynamo's mode recompilation, not the first call: told with
    # the call, as review 15 and 17 asked (tests/test_review15.py, tests/test_review17_eval_mode.py)
    _, said = _replay("rev11_dc_train_eval_record")
    assert any(x.startswith("hlodiff: step 3: the Dynamo bridge compiled again")
               and "rev11_dc_train_eval_record.py:16" in x for x in said), said
