"""Dynamo round 11 (docs/accuracy.md): a parameter's `.grad is None` guarded by a compiled `opt.step`, a Python int
that is a size on its guard's line (`torch.split(h, lengths)`), the steps Dynamo compiled in (cut by the bridge's
compile-path syncs) and, without Dynamo's log, the bridge's own graphs. Checked on the guards as Dynamo prints them,
their look-alikes and the real runs."""

from __future__ import annotations

import json

import pytest

from explain_helpers import explain_scenario as _explain, guard_recompiles
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.explain.dynamo_guard_lines import sizes_on_line

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_PAD = " " * 40


def _guard(guard: str, code: str, line: int = 22) -> str:
    """A failed guard as TORCH_LOGS=recompiles prints it: the guard, its source line's code, the user's comment."""
    return f"{guard}{_PAD}# {code}{_PAD}# a comment of the user's  # train.py:{line} in step"


def _rules(*guards: str) -> list:
    return guard_recompiles(*guards, function="step")


# -- a gradient that is None on some steps ------------------------------------------------------------------------

def test_a_grad_none_guard_is_told_as_a_missing_gradient_not_an_optional_argument():
    (r,) = _rules(_guard("self.param_groups[0]['params'][4].grad is None",
                         "has_sparse_grad = self._init_group("))
    assert r.fix_rule == "dynamo_grad_none", r.fix_rule
    assert "zero_grad" in r.fix and "every step" in r.fix and "set_to_none=False" in r.fix
    assert "mask" not in r.fix and "as a tensor" not in r.fix


# `self.cache is None` stood here too: an attribute of the compiled module is no argument a caller leaves out, and
# has its own row since round 17 (dynamo_attribute_lazy, tests/test_dynamo_round17.py)
@pytest.mark.parametrize("guard", ["mask is None", "L['mask'] is not None", "gradient_scale is None"])
def test_other_none_guards_keep_the_optional_argument_row(guard):
    (r,) = _rules(_guard(guard, "out = f(x, mask)"))
    assert r.fix_rule == "dynamo_optional_none", (guard, r.fix_rule)


def test_the_compiled_optimizer_over_a_head_used_on_some_steps():
    doc, code = _explain("d11_opt_grad_none")
    assert [r["fix_rule"] for r in doc["dynamo"]["recompiles"]] == ["dynamo_grad_none"]
    assert doc["headline"]["location"]["line"] == 34 and code in (0, 1)
    assert "set_to_none" in doc["headline"]["fix"] and "sgd.py" not in json.dumps(doc["headline"])


# -- an int that is a size on its guard's line --------------------------------------------------------------------

@pytest.mark.parametrize("name, code, sizes", [
    ("lengths[0]", "docs = torch.split(h, lengths)", True),
    ("n", "x = x[:n]", True),
    ("n", "y = x[:, n:]", True),
    ("L['self'].heads", "q = q.view(b, t, self.heads, -1)", True),
    ("grid[0]", "x.reshape(b, grid[0], grid[1], -1)", True),
    # look-alikes: arithmetic, one index, a window at one length, a fill value, another name, a counter
    ("accum", "return mse(net(x), y) / accum", False),
    ("t", "h = cell(torch.cat([xs[:, t], h], -1))", False),
    ("t", "w = series[t:t + 16]", False),
    ("t", "tt = torch.full((x.shape[0], 1), t / 10.0, device=x.device)", False),
    ("step", "x[:, :steps]", False),
    ("G['CALLS']", "CALLS += 1", False),
    ("depth", "for blk in self.blocks[:depth]:", False),   # a loop bound (dyn_block_depth): bounds_loop's row
    ("n", None, False),
])
def test_an_int_is_a_size_only_where_its_guard_line_uses_it_as_one(name, code, sizes):
    assert sizes_on_line(name, code) is sizes


def test_split_sizes_from_a_python_list_are_a_shape_never_a_tensor():
    (r,) = _rules(_guard("lengths[0] == 8", "docs = torch.split(h, lengths)"))
    assert r.fix_rule == "dynamo_int_sets_shape" and "as a tensor" not in r.fix
    doc, code = _explain("d11_split_lengths")
    assert code == 1 and {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_int_sets_shape"}
    assert "mask" in doc["headline"]["fix"] and "torch.tensor(" not in doc["headline"]["fix"]


@pytest.mark.parametrize("guard, code, rule", [
    ("t == 0", "h = cell(torch.cat([xs[:, t], h], -1))", "dynamo_python_value"),
    ("accum == 2", "return mse(net(x), y) / accum", "dynamo_python_value"),
    ("depth == 2", "for blk in self.blocks[:depth]:", "dynamo_int_sets_loop"),
])
def test_look_alike_ints_keep_their_rows(guard, code, rule):
    # as in their runs, each fails its guard more than once (an int failing once is round 14's int_once)
    assert _rules(_guard(guard, code), _guard(guard, code))[0].fix_rule == rule


# -- the steps Dynamo compiled in; the bridge's own graphs without Dynamo's log ----------------------------------

def test_a_periodic_flag_s_compiling_steps_are_a_warm_up_not_a_value_kept_on_some_steps():
    doc, code = _explain("d11_attn_flag")
    assert doc["headline"]["guard"] == "self.keep_attn == True" and code == 0  # was 1: the step's change unexpected
    step = [r for r in doc["recompilations"] if r["graph"].endswith("#12")]
    assert step and step[0]["causes"][0]["fix_rule"] == "dynamo_first_call_sync"
    assert not any("kept on some steps" in (c["fix"] or "") for r in doc["recompilations"] for c in r["causes"])


@pytest.mark.parametrize("name", ["d11_inplace_stats_control", "d11_device_preproc_control", "dyn_channels_last"])
def test_without_dynamo_s_log_the_bridge_s_own_graphs_get_the_bridge_s_words(name):
    doc, code = _explain(name)
    assert code == 0 and doc["headline"] is None
    rules = [c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]]
    assert rules and all(rule in EXPECTED for rule in rules), rules


def test_a_bridge_graph_that_changed_keeps_its_story_without_the_log():
    # dyn_window_slice: the bridge's input sync compiled per window offset, mostly alike its earlier graph: XLA's
    # story (the slice bound), not the bridge's own words
    doc, code = _explain("dyn_window_slice")
    assert code == 1 and "index_select" in doc["headline"]["fix"]
