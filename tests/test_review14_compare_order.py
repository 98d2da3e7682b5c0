"""New-user review 14, F8: compare-runs listed six JAX eager ops (jit_convert_element_type, jit_broadcast_in_dim,
...) before ``jit_update``, the one program the reviewer wrote, and gave it no line. The user's jitted functions
now come first, with the line that called them; the eager ops follow in run order."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli
from hlodiff.explain.run_programs import is_users_program, users_first

RUNS = FIXTURES / "scenarios" / "runs"


def _listed(name: str) -> list[str]:
    out = cli("compare-runs", RUNS / name / "run_a", RUNS / name / "run_b", codes=(0, 1)).output
    return [line.split()[0] for line in out.split("\n\n", 1)[1].splitlines() if line.startswith("  ")]


def test_the_user_s_programs_lead_the_list_with_their_lines():
    out = cli("compare-runs", RUNS / "runs6_hash_stream" / "run_a", RUNS / "runs6_hash_stream" / "run_b",
              codes=(1,)).output
    rows = [line.strip() for line in out.split("\n\n", 1)[1].splitlines() if line.startswith("  ")]
    assert rows[0].startswith("jit_train_step (runs6_hash_stream.py:44)")
    assert rows[1].startswith("jit_evaluate (runs6_hash_stream.py:45)")
    assert [r.split()[0] for r in rows[2:]] == ["jit_stage", "jit__threefry_seed", "jit_convert_element_type",
                                                "jit__threefry_fold_in"]  # the eager ops after, in run order


def test_when_eager_ops_are_the_story_they_are_still_listed_after_the_user_s_programs():
    # runs_cache_late: the eager ops compiled before the cache was configured are the headline; the list's order
    # does not change what heads
    assert _listed("runs_cache_late")[:2] == ["jit_train_step", "jit_evaluate"]


@pytest.mark.parametrize("program, users", [
    ("jit_update", True), ("jit_train_step", True), ("SyncTensorsGraph.88", True),
    ("jit_broadcast_in_dim", False), ("jit_multiply", False), ("jit__reduce_sum", False), ("jit_stage", False),
])
def test_which_programs_are_the_user_s(program, users):
    assert is_users_program(program) is users


def test_users_first_keeps_each_part_s_order():
    class V:
        def __init__(self, program):
            self.program = program
    order = [v.program for v in users_first([V("jit_stage"), V("jit_b"), V("jit__normal"), V("jit_a")])]
    assert order == ["jit_b", "jit_a", "jit_stage", "jit__normal"]
