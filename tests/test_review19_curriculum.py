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
