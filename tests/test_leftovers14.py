"""The thirteenth stop's leftovers, mended at the fourteenth (docs/accuracy.md, "Leftovers of the thirteenth stop"):
each on its scenario and on the look-alikes that share its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json
from hlodiff.dumps.python_source import enclosing_choice

SCEN = FIXTURES / "scenarios"
TX_SOURCES = {"HLODIFF_SOURCE_MAP": f"/home/user/project={SCEN / 'torch_xla'}"}


def _head(engine: str, name: str, env=None, codes=(0, 1)) -> dict:
    return cli_json("explain-recompile", str(SCEN / engine / name), codes=codes, env=env)["headline"]


# -- layers that join the step mid-run: the loop (or `if`) that runs them ------------------------------------------

def test_a_depth_curriculum_is_told_at_the_loop_that_runs_the_blocks():
    """r30_tx_depth_curriculum: `for blk in self.blocks[:self.active]` (:24); the new weights' own ops carry
    torch.nn's frames only, their users in the user's file are the block's line (:25)."""
    head = _head("torch_xla", "r30_tx_depth_curriculum", env=TX_SOURCES)
    assert head["location"]["line"] == 24 and "layers" in head["fix"]


def test_without_the_source_the_layers_are_told_where_they_run():
    # the capture alone: the loop header is not read, the residual block's line is in the graph's frames
    head = _head("torch_xla", "r30_tx_depth_curriculum")
    assert head["location"] is not None and head["location"]["line"] == 25


def test_the_choice_around_a_line_is_its_innermost_if_or_for(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(xs, on):\n"          # 1
                   "    for x in xs:\n"          # 2
                   "        y = x + 1\n"         # 3
                   "        if on:\n"            # 4
                   "            y = y * 2\n"     # 5
                   "    def g():\n"              # 6
                   "        return 3\n"          # 7
                   "    return y\n")             # 8
    assert enclosing_choice(str(src), 3) == 2
    assert enclosing_choice(str(src), 5) == 4
    assert enclosing_choice(str(src), 7) is None  # a nested function: the loop around its def is not its choice
    assert enclosing_choice(str(src), 8) is None
    assert enclosing_choice(str(tmp_path / "gone.py"), 3) is None


# -- a sharding hint on some steps: the `if` around the one annotating call that has one ---------------------------

def test_the_hint_graph_is_told_at_the_if_around_its_mark_sharding():
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "r30_tx_spmd_act_hint_some"), codes=(1,),
                   env=TX_SOURCES)
    told = [c for r in doc["recompilations"] for c in r["causes"] if c["fix_rule"] == "ops_sharding_hint_some_steps"]
    assert told and [loc["line"] for loc in told[0]["locations"][:2]] == [32, 33]


def test_without_the_source_the_hint_keeps_its_library_frame_and_hint():
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "r30_tx_spmd_act_hint_some"), codes=(1,))
    told = [c for r in doc["recompilations"] for c in r["causes"] if c["fix_rule"] == "ops_sharding_hint_some_steps"]
    assert told and told[0]["locations"] == [] and "library frames" in told[0]["hint"]


# -- activation checkpointing on some steps: the `if` around the one checkpoint call -------------------------------

def _checkpoint_lines(env) -> list[int]:
    head = _head("torch_xla", "checkpoint_toggle", env=env)
    return [head["location"]["line"]] if head["location"] else []


def test_checkpointing_switched_on_is_told_at_the_if_around_the_checkpoint_call():
    assert _checkpoint_lines(TX_SOURCES) == [22]


def test_two_guarded_checkpoint_calls_leave_the_line_unknown(tmp_path):
    # a look-alike source: checkpointing in two branches; which one ran on some steps is not read
    text = (SCEN / "torch_xla" / "checkpoint_toggle.py").read_text().replace(
        "            h = h + self.block(h)\n",
        "            if self.training:\n"
        "                h = h + torch_xla.utils.checkpoint.checkpoint(self.block, h)\n")
    (tmp_path / "checkpoint_toggle.py").write_text(text)
    assert _checkpoint_lines({"HLODIFF_SOURCE_MAP": f"/home/user/project={tmp_path}"}) == []


# -- a Python `if` adding ops whose own lines lie outside it: the `if` around the causes beside it ----------------

def _loss_dict_line(env) -> int | None:
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev7_loss_dict" / "record"), codes=(0, 1), env=env)
    loc = doc["headline"]["location"]
    return loc["line"] if loc else None


def test_a_loss_term_added_every_third_step_is_told_at_its_if():
    """rev7_loss_dict: the sum of the dict (:13) runs every step; the `if` (:11) adds the l2 key (:12)."""
    assert _loss_dict_line(TX_SOURCES) == 11


def test_without_an_if_around_the_term_the_traced_line_stays(tmp_path):
    # a look-alike source with the same line numbers and no `if` around line 12: nothing to read, :13 stays
    text = (SCEN / "torch_xla" / "rev7_loss_dict.py").read_text().replace(
        "    if step % 3 == 2:", "    for _ in range(1):")
    (tmp_path / "rev7_loss_dict.py").write_text(text)
    assert _loss_dict_line({"HLODIFF_SOURCE_MAP": f"/home/user/project={tmp_path}"}) == 13


# -- a tensor the first step's graph created: told where its ops were traced ---------------------------------------

@pytest.mark.parametrize("name,line", [
    ("x6c_window_cat_control", 14),  # `window = torch.zeros(8)` before the loop, not the read after the sync (:21)
    ("rev4_lr_float", 7),  # `w = torch.randn(...)` on the device, not the update's lines (:15, :11)
])
def test_a_tensor_made_in_the_first_step_is_told_where_it_was_made(name, line):
    head = _head("torch_xla", name, codes=(0,))
    assert head["location"]["line"] == line
    assert f"created on the first step ({name}.py:{line})" in head["fix"]  # the words name the same line


def test_weights_sharded_from_a_step_on_are_told_at_the_if_around_their_mark_sharding():
    """r10_spmd_shard_late: two mark_sharding calls under `if step == 2:` (:35); the batch's at :33 is in no `if`."""
    head = _head("torch_xla", "r10_spmd_shard_late", env=TX_SOURCES)
    assert head["location"]["line"] == 35

