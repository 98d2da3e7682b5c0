"""Two and three ranks of torch_xla.launch where only the master computes a metric (review 2026-11-27, F7):
fixtures/torch_xla/review2_rank_metric/ (record on 2 and 3 CPU devices; its truth.json was committed before
hlodiff ran on the recordings). The 2-device job died in the all-reduce's rendezvous."""

from __future__ import annotations

from conftest import FIXTURES
from helpers import cli, truth_of

CASE = FIXTURES / "torch_xla" / "review2_rank_metric"


def _report(folder: str) -> tuple[str, str]:
    res = cli("explain-recompile", str(CASE / folder), codes=(1,))
    return res.stdout, res.stdout.split("\n\n")[0]


def test_two_ranks_name_the_rank_that_computes_more_and_the_failed_collective():
    truth = truth_of(CASE)
    out, head = _report("record")
    assert head.startswith(f"2 ranks: rank {truth['diverging_rank']} ")
    for words in truth["must_mention_2"]:
        assert words in out, words
    for words in truth["must_not_mention_2"]:
        assert words not in out, words
    assert f"{truth['user_file']}:{truth['user_line']}" in out
    # the command died (record's status 1) in a collective the diverging graphs hold: the report connects them
    failure = [line for line in out.splitlines() if line.startswith("note: the command ended with status")]
    assert failure and any(w in failure[0] for w in truth["failure_words"])


def test_three_ranks_keep_the_majority_and_speak_of_ranks_not_steps():
    truth = truth_of(CASE)
    out, head = _report("record3")
    assert head.startswith(f"3 ranks: rank {truth['diverging_rank']} diverged from the majority")
    for words in truth["must_mention_3"]:
        assert words in out, words
    for words in truth["must_not_mention_3"]:
        assert words not in out, words


def test_equal_work_on_two_ranks_keeps_the_lowest_rank_as_reference():
    """Look-alike: JAX ranks that differ by a baked constant or a size (one rank compiles one graph more): the
    rank with the extra graph is still the one named, and no collective note without a failed command."""
    res = cli("explain-recompile", str(FIXTURES / "jax" / "ranks_static_2p"), codes=(1,))
    head = res.stdout.splitlines()[0]
    assert head.startswith("2 ranks: rank 1 diverged from rank 0"), head
    assert "from the majority" not in head and "note: the command" not in res.stdout


def test_jax_launcher_leads_with_the_user_s_program_and_the_uneven_shard():
    """J14 (fixtures/jax/review2_launch): 2 jax.distributed workers, rank 1's shard has 15 rows; the divergence
    section leads with jit_local_step (not the eager jit_stage of jnp.asarray) and says what to do with the data."""
    case = FIXTURES / "jax" / "review2_launch"
    truth = truth_of(case)
    out = cli("explain-recompile", str(case / "record"), codes=(truth["exit_status"],)).stdout
    assert out.startswith(f"2 ranks: rank {truth['diverging_rank']} diverged from rank 0")
    blocks = [b for b in out.split("\n\n") if b.startswith("compilation ")]
    assert blocks and f"({truth['first_divergence_program']})" in blocks[0].splitlines()[0]
    assert all(s in blocks[0] for s in truth["shapes"]) and f"{truth['user_file']}:{truth['user_line']}" in blocks[0]
    fix = next(line for line in blocks[0].splitlines() if line.strip().startswith("fix:"))
    assert any(w in fix for w in truth["fix_any"]), fix
    for words in truth["must_not_mention"]:
        assert words not in out, words
