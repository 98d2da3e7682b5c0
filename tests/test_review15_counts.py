"""New-user review 15, F7: counts and words that did not add up. jax_static_lr: "5 recompilations (1 of them an eager
op outside jit)" above "story: 4 recompilations", whose lines said "(step 2)" though a JAX dump marks no step;
tx_ranks: "rank 1 diverged from rank 0 at 1 compilation (compilation 3)" where position 3 of a record is step 3."""

from __future__ import annotations

from helpers import FIXTURES, cli
from hlodiff.explain.ranks import STEP_KINDS, positions_text

SCEN = FIXTURES / "scenarios"


def test_a_jax_story_says_which_of_the_runs_recompilations_it_holds_and_counts_compilations():
    out = cli("explain-recompile", str(SCEN / "jax" / "rev15_jx_static_lr"), codes=(1,)).stdout
    # review 17, F5: the eager op is counted apart, not among the recompilations: the story holds all 4
    assert out.splitlines()[0].startswith("13 graphs, 13 compilations, 4 recompilations (+1 eager op outside jit")
    assert "story: 4 recompilations, one root (static_argument at rev15_jx_static_lr.py:19)" in out
    others = [x.strip() for x in out.splitlines() if x.startswith("    #")]
    assert [x.split(":")[0] for x in others] == [f"#{n} (compilation {c} of jit_train_step)"
                                                 for n, c in ((10, 3), (11, 4), (12, 5))]
    assert "(step " not in out


def test_lookalike_a_story_of_every_recompilation_keeps_its_count_and_its_steps():
    """loss_history (a save-tensors file: one entry per step): the story holds all 6, told by step."""
    out = cli("explain-recompile", str(SCEN / "torch_xla" / "loss_history" / "graphs.hlo.0"), codes=(1,)).stdout
    assert "story: 6 recompilations, one root" in out and "    #2 (step 2): " in out


def test_positions_of_a_divergence_in_words():
    assert STEP_KINDS == ("save_tensors", "executions")
    assert positions_text("step", [3]) == "step 3"
    assert positions_text("compilation", [2, 4]) == "2 compilations (compilations 2, 4)"
    assert positions_text("step", list(range(1, 11))).endswith("(steps 1, 2, 3, 4, 5, 6, 7, 8, ...)")


def test_a_record_of_two_ranks_names_the_step_where_they_parted():
    """rev6_ddp_uneven (hlodiff record, two ranks each with a short last batch): its positions are steps."""
    out = cli("explain-recompile", str(SCEN / "torch_xla" / "rev6_ddp_uneven" / "record"), codes=(0, 1)).stdout
    assert out.splitlines()[0].startswith("2 ranks: both recompiled at step 2, each for a graph of its own")
    assert "at 1 step" not in out and "compilation 2" not in out.splitlines()[0]
