"""New-user review 14, F2: under a static-argument headline, ``w``'s sharding change (made by ``jnp.zeros``,
uncommitted on the first call, replicated from the second) was told only as "with it"; after fixing the static
argument the step still compiled twice. An argument's own placement is not traced from a static argument
(cause_rules.own_placement): it is told in the headline's block as "also:" with its own fix; what the static value
bakes (the lr constant) stays "with it"."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json

P4 = FIXTURES / "scenarios" / "jax" / "rev14_p4_static_step"


def test_the_second_cause_is_told_with_its_own_fix_in_the_headline_s_block():
    doc = cli_json("explain-recompile", P4, codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "static_argument" and "traced argument" in head["fix"]
    assert [a["kind"] for a in head["also"]] == ["sharding"]
    assert "%w" in head["also"][0]["summary"] and "follows from" not in head["also"][0]["fix"]
    top = cli("explain-recompile", P4, codes=(1,)).output.split("\n  ", 1)[0]
    assert "also: input sharding changed on parameter %w.1" in top and "alone compiles again" in top


def test_what_the_static_value_bakes_stays_with_it():
    out = cli("explain-recompile", P4, codes=(1,)).output
    block = out.split("story:", 1)[1]
    with_it = block.split("with it:", 1)[1].split("\n  sharding", 1)[0]
    assert "constant value changed" in with_it  # the lr baked from `step`: under the static argument
    assert "fix: follows from the static argument" not in out.split("\n  sharding", 1)[1].split("\n", 3)[2]


def test_a_static_headline_without_a_placement_change_has_no_also():
    doc = cli_json("explain-recompile", FIXTURES / "scenarios" / "jax" / "rev6_static_step", codes=(1,))
    assert doc["headline"]["kind"] == "static_argument" and doc["headline"]["also"] == []
