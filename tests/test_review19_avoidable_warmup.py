"""New-user review 19, F8: P1 (LambdaLR warm-up whose lr is exactly 0 on step 0) read "warm-up only ... then
steady" and exited 1. The exit status follows README's rule (a warm-up whose fix asks for a change is not
expected); the first line now says so: "(avoidable: the fix asks for a change ...)". A warm-up the report calls
expected keeps its plain words and exit 0. The capture is the reviewer's (fixtures/reviews/rev19_warmup_lr)."""

from __future__ import annotations

from helpers import FIXTURES, cli

P1 = FIXTURES / "reviews" / "rev19_warmup_lr" / "record"
EXPECTED_WARMUP = FIXTURES / "scenarios" / "torch_xla" / "rev8_steady_sched" / "record"


def test_a_warmup_whose_fix_asks_a_change_says_it_is_avoidable_and_exits_1():
    run = cli("explain-recompile", str(P1), codes=(1,))
    first = run.stdout.splitlines()[0]
    assert "warm-up only" in first and "(avoidable: the fix asks for a change" in first
    assert run.stdout.splitlines()[1].startswith("fix: an optimizer setting of exactly 0 or 1")


def test_lookalike_an_expected_warmup_keeps_its_words_and_exits_0():
    first = cli("explain-recompile", str(EXPECTED_WARMUP), codes=(0,)).stdout.splitlines()[0]
    assert "warm-up only" in first and "avoidable" not in first


def test_compare_on_the_reviewers_record_names_the_line_explain_names():
    """F7 on the reviewer's own capture: line 19, the opt.step() call, not sgd.py."""
    out = cli("compare", f"{P1}#0", f"{P1}#1", codes=(1,)).stdout
    assert "p1_tx_warmup_lr.py:19" in out and "in library code" not in out
