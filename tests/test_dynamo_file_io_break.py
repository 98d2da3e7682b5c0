"""A file opened inside the compiled function (a statistic appended to a log per call): Dynamo breaks at the
builtin ``open`` on every call; its row says to return the value and write it after the call. In a capture of
compilations only (no torch_xla execution log), the pieces a graph break cuts each call into count toward the
bridge's warm-up variants, so the step graphs of the eager remainder are not told as a change of the user's code
(the first try printed "drop `dtype=` in zeros_like/full_like" for cross_entropy's own constant)."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli, cli_json

DYN = FIXTURES / "scenarios" / "dynamo"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")


def test_a_file_write_in_the_compiled_loss_is_told_to_move_after_the_call():
    doc = cli_json("explain-recompile", DYN / "d23_file_log_break", *DYN_MAP, codes=(0, 1))
    b = doc["dynamo"]["graph_breaks"][0]
    assert b["fix_rule"] == "dynamo_graph_break_file_io" and b["location"]["line"] == 21
    assert "after the call" in b["fix"] and "`open`" in b["fix"]


def test_the_eager_remainder_of_a_broken_call_is_no_dtype_change_of_the_user_s():
    out = cli("explain-recompile", DYN / "d23_file_log_break", *DYN_MAP, codes=(0, 1)).stdout
    story = out.split("\n\n", 2)[1]  # the XLA story below Dynamo's section
    assert "dtype=" not in story and "expected if in the first steps" in story


@pytest.mark.parametrize("name", ["d20_layerdrop_random", "d12_fullgraph_item", "dyn_print_break"])
def test_other_breaks_keep_their_rows(name):
    folder = DYN / name
    target = folder / "record" if (folder / "record").is_dir() else folder
    doc = cli_json("explain-recompile", target, *DYN_MAP, codes=(0, 1))
    assert all(b["fix_rule"] != "dynamo_graph_break_file_io" for b in doc["dynamo"]["graph_breaks"])
