"""A slice whose length follows a Python int (review item 5).

Input: the real torch_xla run of fixtures/torch_xla/slice_length.py (`x[:n]` with n = 4, 5, 4, 5); the
fixed-length window of fixtures/torch_xla/slice_index keeps its device-index fix.
"""

from __future__ import annotations


from helpers import FIXTURES, truth_of
from hlodiff.dumps.run_folder import discover
from helpers import explained

TORCH = FIXTURES / "torch_xla"


def _first(name):
    return explained(discover([str(TORCH / name / "graphs.hlo.0")], None, None), []).recompilations[0]


def test_the_slice_leads_and_the_shapes_follow_from_it():
    truth = truth_of(TORCH / "slice_length")
    r = _first("slice_length")
    assert [c.kind for c in r.causes[:2]] == ["attribute", "shape"]
    assert r.causes[0].locations[0].line == truth["user_line"]
    assert r.causes[1].fix.startswith("follows from the slice change")


def test_a_changing_length_is_fixed_by_a_fixed_length_not_a_device_index():
    fix = _first("slice_length").causes[0].fix
    assert "index_select" not in fix and "fixed length" in fix
    assert "index_select" in _first("slice_index").causes[0].fix  # same length, moving window: device index
