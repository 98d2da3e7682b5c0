"""A step cut in two by .item() every step is "split", not "alternating" (review item 6).

Input: the real torch_xla run of fixtures/torch_xla/item_every_step.py; item_partial (.item() on one step only)
and metric_even_steps (a real alternation) keep their patterns.
"""

from __future__ import annotations


from helpers import FIXTURES, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained

TORCH = FIXTURES / "torch_xla"


def _run(name):
    return explained(discover([str(TORCH / name / "graphs.hlo.0")], None, None), [])


def test_every_step_split_by_the_same_read_is_named_split_at_the_read():
    truth = truth_of(TORCH / "item_every_step")
    result = _run("item_every_step")
    (pattern,) = result.patterns
    assert pattern.startswith("split: each step") and "alternating" not in result.summary
    assert f"early read at item_every_step.py:{truth['user_line']}" in pattern


def test_a_real_alternation_and_a_one_off_cut_keep_their_names():
    assert _run("metric_even_steps").patterns[0].startswith("alternating:")
    assert not _run("item_partial").patterns[0].startswith("split:")


def test_a_step_split_every_step_whose_first_step_warms_up_is_split_after_the_first():
    """Round 4, amp_gradscaler: GradScaler.step reads found_inf every step (A,B,A,C,A,C...: the update graph of
    step 0 bakes the growth tracker's 0, later ones read it): split, told from the second step on; not
    alternating."""
    folder = FIXTURES / "scenarios" / "torch_xla" / "amp_gradscaler"
    (pattern,) = explained(discover([str(folder)], None, None), []).patterns
    assert pattern.startswith("split: each step") and "every step after the first (A,B,A,C,A,C" in pattern
    assert "early read at amp_gradscaler.py:18" in pattern
