"""Dynamo round 10 (docs/accuracy.md): a Python int that bounds a loop on its guard's line (block-level stochastic
depth, `for blk in self.blocks[:depth]`) sets how many times the body is traced: one graph per value, never "pass it
as a tensor". Checked on the guard as Dynamo prints it, its look-alikes (an int in arithmetic, an index, a counter),
and the real runs."""

from __future__ import annotations

import pytest

from explain_helpers import explain_scenario as _explain, guard_recompiles
from helpers import FIXTURES
from hlodiff.dumps.dynamo_log import guard_failure
from hlodiff.explain.dynamo_guard_lines import bounds_loop
from hlodiff.explain.dynamo_recompile_fixes import choose_fix

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_PAD = " " * 40


def _guard(guard: str, code: str, line: int = 22) -> str:
    """A failed guard as TORCH_LOGS=recompiles prints it: the guard, its source line's code, the user's comment."""
    return f"{guard}{_PAD}# {code}{_PAD}# CAUSE: a comment of the user's  # train.py:{line} in forward"


def _rules(*guards: str, limit: bool = False) -> list:
    found = guard_recompiles(*guards, function="forward", limit_hits=[("0/8", 8)] if limit else None)
    if limit:  # as findings() marks them: this frame ran past the limit
        for r in found:
            r.facts, r.limit = r.facts | {"limit_hit"}, 8
            choose_fix(r)
    return found


def test_the_guard_s_code_is_read_without_the_user_s_comment():
    failure = guard_failure("0/0", _guard("depth == 2", "for blk in self.blocks[:depth]:"))
    assert failure.guard == "depth == 2" and failure.code == "for blk in self.blocks[:depth]:"
    assert failure.source.line == 22 and "code" not in failure.to_json()


@pytest.mark.parametrize("name, code, bounds", [
    ("depth", "for blk in self.blocks[:depth]:", True),
    ("n", "for i in range(n):", True),
    ("L['self'].n_layers", "for i in range(self.n_layers):", True),
    ("n", "while i < n:", True),
    ("k", "for blk in islice(blocks, k):", True),
    # look-alikes: an int in arithmetic, one index, a loop over a container it does not bound
    ("accum", "return torch.nn.functional.mse_loss(net(x), y) / accum", False),
    ("t", "h = cell(torch.cat([xs[:, t], h], -1))", False),
    ("G['CALLS']", "CALLS += 1", False),
    ("k", "for blk in self.blocks:", False),
    ("n", "for x in blocks_n[:2]:", False),
    ("step", "for i in range(step_size):", False),
    ("depth", None, False),
])
def test_an_int_bounds_a_loop_only_when_its_guard_line_loops_over_it(name, code, bounds):
    assert bounds_loop(name, code) is bounds


def test_an_int_that_bounds_a_loop_is_one_graph_per_value_never_a_tensor():
    found = _rules(_guard("depth == 2", "for blk in self.blocks[:depth]:"),
                   _guard("depth == 4", "for blk in self.blocks[:depth]:"))
    assert [r.fix_rule for r in found] == ["dynamo_int_sets_loop"] * 2
    assert "one graph per value" in found[0].fix and "as a tensor" not in found[0].fix
    limited = _rules(_guard("n == 7", "for i in range(n):"), limit=True)
    assert limited[0].fix_rule == "dynamo_int_sets_loop_limit"
    assert "without Dynamo" in limited[0].fix and "mask" in limited[0].fix and "as a tensor" not in limited[0].fix


@pytest.mark.parametrize("guard, code, rule", [
    # look-alikes keep their rows: an int in arithmetic (dyn_int_scale), one index (dyn_loop_index), a float
    ("accum == 1", "return torch.nn.functional.mse_loss(net(x), y) / accum", "dynamo_python_value"),
    ("t == 0", "h = cell(torch.cat([xs[:, t], h], -1))", "dynamo_python_value"),
    ("scale == 0.5", "for i in range(scale):", "dynamo_python_value"),
])
def test_look_alikes_keep_their_rows(guard, code, rule):
    # as in their runs, each fails its guard more than once (an int failing once is round 14's int_once)
    assert _rules(_guard(guard, code), _guard(guard, code))[0].fix_rule == rule


def test_block_level_stochastic_depth_is_told_one_graph_per_depth():
    doc, code = _explain("dyn_block_depth")
    rules = [r["fix_rule"] for r in doc["dynamo"]["recompiles"]]
    assert rules == ["dynamo_int_sets_loop"] * 2, rules
    assert "one graph per value" in doc["headline"]["fix"] and "as a tensor" not in doc["headline"]["fix"]


@pytest.mark.parametrize("name", ["dyn_int_scale", "dyn_cache_limit", "dyn_loop_index", "dyn_call_counter"])
def test_real_look_alikes_are_never_told_a_loop_bound(name):
    doc, _ = _explain(name)
    rules = [r["fix_rule"] for r in doc["dynamo"]["recompiles"]]
    assert rules and not any(r.startswith("dynamo_int_sets_loop") for r in rules), rules


@pytest.mark.parametrize("name, code, assigned", [
    ("G['CALLS']", "CALLS += 1", True),
    ("L['self'].counter", "self.counter += 1", True),   # pytorch#128319's counter attribute
    ("n", "n = n + 1", True),
    # look-alikes: a read of the value (dyn_step_attr), a comparison, another name that starts alike
    ("L['self'].step", "w = min(1.0, self.step / 10)", False),
    ("x", "x == 3", False),
    ("G['CALLS']", "CALLS_SEEN += 1", False),
    ("L['self'].step", "self.step_size = 3", False),
])
def test_a_value_is_assigned_on_its_guard_line_only_when_that_line_writes_it(name, code, assigned):
    from hlodiff.explain.dynamo_guard_lines import assigned_on_line
    assert assigned_on_line(name, code) is assigned


def test_a_counter_changed_inside_the_compiled_function_is_told_to_move_out():
    (r,) = _rules(_guard("G['CALLS'] == 0", "CALLS += 1"))
    assert r.fix_rule == "dynamo_counter_in_call" and "outside the compiled function" in r.fix
    doc, code = _explain("dyn_call_counter")
    rules = {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}
    assert code == 1 and rules == {"dynamo_counter_in_call"}, rules
    assert "raise" not in doc["headline"]["fix"] and "expected" not in doc["headline"]["fix"]


@pytest.mark.parametrize("name, rule", [("dyn_step_attr", "dynamo_module_number_limit"),
                                        ("dyn_cache_limit", "dynamo_python_value_limit")])
def test_a_counter_kept_by_the_loop_keeps_its_row(name, rule):
    doc, _ = _explain(name)
    assert rule in {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}
    assert "dynamo_counter_in_call" not in {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}


def test_a_slice_bound_baked_into_the_bridge_s_input_sync_is_told_live_with_its_own_fix():
    # windows series[t:t+16] sliced outside the compiled loss: Dynamo never retraces, the bridge's sync of the
    # call's inputs compiles per offset with the slice made at the user's line; live it gets the report's fix
    # (a device index tensor), not "why Dynamo traced again is in Dynamo's log"
    from live_replay import printed, replay

    said = printed(replay(SCENARIOS / "dyn_window_slice", "e"))
    told = [x for x in said if "attribute at dyn_window_slice.py:25" in x]
    assert told, said
    # a fix told once is referred to after (review 22 F7: "fix: as told for step 3 above"); each fix told in full
    # names the index tensor, and none sends the user to Dynamo's log
    full = [x for x in told if "fix:" in x and "fix: as told for" not in x]
    assert full and all("index_select" in x and "Dynamo traced again" not in x for x in full), told
    assert all("Dynamo traced again" not in x for x in told), told
