"""New-user review 19, F8: `hlodiff cost` on P4 led with "donate ... w" for a 128 B buffer beside an 8 KiB batch.
An undonated state under 5% of what its step reads still is the finding when it is the only one, but its words
say it matters nothing at this size and its fix is optional; the committed findings of the kind keep their words."""

from __future__ import annotations

from helpers import FIXTURES, cli_json
from hlodiff.cost.headline import NEGLIGIBLE_SHARE, CostHeadline
from hlodiff.render.cost_headline import fix, summary

COST = FIXTURES / "scenarios" / "cost"


def test_negligible_share_row():
    assert NEGLIGIBLE_SHARE == 0.05


def _undonated(size, step):
    return CostHeadline("not_donated", "d#4", size, None, 1, shapes=["f32[32,1]"], module="jit_train_step",
                        framework="jax", arguments=["w"], step_bytes=step, negligible=size < NEGLIGIBLE_SHARE * step)


def test_a_tiny_undonated_state_says_it_matters_nothing_and_its_fix_is_optional():
    h = _undonated(128, 8600)
    assert summary(h).startswith("nothing that matters at this size:") and "1.5% of the 8.4 KiB" in summary(h)
    assert fix(h).startswith("optional") and "donate_argnames=('w',)" in fix(h)


def test_lookalike_a_state_half_the_step_keeps_its_plain_words():
    h = _undonated(73728, 149760)  # jax_accum_no_donate's share
    assert not summary(h).startswith("nothing") and fix(h).startswith("donate")


def test_lookalike_committed_undonated_findings_are_not_negligible():
    for name in ("jax_accum_no_donate", "jax_adam_no_donate", "jax_kv_cache_no_donate", "x4c_ema_no_donate"):
        head = cli_json("cost", str(COST / name), codes=(0,))["headline"]
        assert head["kind"] == "not_donated" and head["negligible"] is False
