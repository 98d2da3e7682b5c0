"""A library's start told over several steps (SWA's AveragedModel: the first update_parameters() copies the weights,
the next averages with its counter baked as the number 1, then as data, then one graph every step): the family's
run of graphs that each ran once, ending in the graph that stays, whose changes are all in one LIBRARY_BRANCHES
file (a change with no frame, outputs reordered by the copy, with them), is expected once. The first try told the
copy's reorder 'follows from the ops layout change', exit 1, on a control."""

from __future__ import annotations

from types import SimpleNamespace as NS

from helpers import FIXTURES, cli_json

from hlodiff.explain.library_branches import library_start

SC = FIXTURES / "scenarios"
SWA = "/usr/lib/python3.11/site-packages/torch/optim/swa_utils.py"
USER = "/home/user/project/train.py"


def _frame(file):
    from hlodiff.hlo.model import SourceFrame

    return SourceFrame(file, 10, "f")


def _r(key, *files):
    refs = [NS(frames=(_frame(f),)) for f in files]
    cause = NS(origins=[NS(left=None, right=ref) for ref in refs])
    return NS(graph=NS(cache_key=key), causes=[cause])


def _members(letters):
    return [NS(cache_key=k) for k in letters]


def test_once_graphs_that_settle_in_one_library_file_are_its_start():
    rs = [_r("C"), _r("D", SWA), _r("E", SWA)]
    ids, words = library_start(rs, _members("ABBCDEEE"))
    assert ids == {id(r) for r in rs} and "AveragedModel" in words


def test_a_user_frame_a_graph_that_comes_back_or_no_settling_is_no_start():
    assert library_start([_r("C"), _r("D", SWA), _r("E", USER)], _members("ABBCDEEE"))[0] == frozenset()
    assert library_start([_r("C", SWA), _r("D", SWA)], _members("ABCDCD"))[0] == frozenset()  # switches
    assert library_start([_r("C", SWA), _r("D", SWA)], _members("ABCD"))[0] == frozenset()  # ends on a new one
    assert library_start([_r("E", SWA)], _members("AAEE"))[0] == frozenset()  # one change: library_branch's


def test_the_swa_control_is_expected_at_exit():
    doc = cli_json("explain-recompile", SC / "torch_xla" / "r20_tx_swa_update_read" / "graphs.hlo.0", codes=(0,))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert rules == {"outputs_made_before_loop_library", "library_start"}


def test_radam_keeps_its_branch_row_and_its_state_warm_up():
    """RAdam's one change (its rectification) stays the cause-level row on its ops; its first step's state is its
    warm-up, not the branch (an early draft told the warm-up's inputs by the branch's words)."""
    doc = cli_json("explain-recompile", SC / "torch_xla" / "r20_tx_radam_rect_control", codes=(0,))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "ops_library_step_branch" in rules and "library_start" not in rules
    assert doc["headline"]["fix"].startswith("expected warm-up: torch/optim/radam.py creates its state")
