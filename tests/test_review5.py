"""New-user review 5 (docs/reviews/2026-11-27-new-user-5.md): what the user noticed, on the real captures of
fixtures/scenarios (their truths in tests/test_accuracy.py), and each new rule against the look-alike that shares
its evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import cli
from hlodiff.diff.origin_makers import STATE_MAKERS, library_made_inputs
from hlodiff.diff.model import Cause, Change, InstructionRef
from hlodiff.dumps.python_source import argument_made_at
from hlodiff.explain.dynamo_log_findings import _absolute
from hlodiff.explain.family_order import last_of_each_round
from hlodiff.hlo.model import SourceFrame

SCEN = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios"
SITE = "/usr/lib/python3.11/site-packages/"


def _added(*frames: SourceFrame) -> Cause:
    ref = InstructionRef("main", "p21", "parameter", "f32[50,16]{1,0}", frames=tuple(frames))
    return Cause("inputs", "1 input added", origins=[Change(None, ref)])


# -- F1: an optimizer's first-step state, with the user's opt.step() below it on the stack (a tensors report) -----

@pytest.mark.parametrize("folder", [f for f, _ in STATE_MAKERS])
def test_each_state_maker_row_makes_inputs_its_library_s_even_called_from_a_user_line(folder):
    cause = _added(SourceFrame(SITE + folder + "adam.py", 447, "_init_group"),
                   SourceFrame("/home/user/project/train.py", 29, "<module>"))
    assert library_made_inputs(cause) == folder + "adam.py"


def test_library_code_outside_the_state_makers_called_from_a_user_line_made_the_user_s_value():
    """The look-alike: F.pad in the user's collate is library code too, but the padded batch is the user's."""
    cause = _added(SourceFrame(SITE + "torch/nn/functional.py", 5096, "pad"),
                   SourceFrame("/home/user/project/train.py", 12, "collate"))
    assert library_made_inputs(cause) == ""
    assert library_made_inputs(_added(SourceFrame("/home/user/project/train.py", 12, "<module>"))) == ""


def test_record_of_adamw_with_a_short_last_batch_leads_with_the_batch_not_adam_s_state():
    out = cli("explain-recompile", str(SCEN / "torch_xla/rev5_partial_batch_record/record")).output
    head = out.split("\n\n", 1)[0]
    assert "2 recompilations (1 of them an expected warm-up)" in head  # F6: counted apart, as its block says
    assert "(shape at rev5_partial_batch_record.py:26)" in head
    assert "drop_last=True" in head and "sync at the same points" not in out
    assert "expected warm-up: torch/optim/adam.py creates its state" in out


def test_by_hand_capture_of_the_same_run_names_drop_last_not_an_index_tensor_made_on_the_host():
    """F8: a DataLoader batch, the short last batch of each epoch behind AdamW's first-step warm-up."""
    head = cli("explain-recompile", str(SCEN / "torch_xla/rev5_partial_batch_byhand")).output.split("\n\n", 1)[0]
    assert "last batch of each epoch is short" in head and "drop_last=True" in head
    assert "index tensor enters the graph as data" not in head


@pytest.mark.parametrize("keys, last, period, expected", [
    ("WABAAB", "B", 0, True),     # Adam's first step, then the epoch's short last batch (recurring): F1/F8
    ("AABAAB", "B", 3, True),     # no warm-up: the rule as before
    ("WABABA", "B", 0, False),    # alternating after the warm-up: not the last of each round
    ("WABAAB", "A", 0, False),    # the steady graph is no last batch
    ("WAB", "B", 0, False),       # too short to show rounds
])
def test_last_batch_of_each_round_sees_past_a_first_step_warm_up(keys, last, period, expected):
    members = [type("G", (), {"cache_key": k})() for k in keys]
    graph = next(g for g in members if g.cache_key == last)
    assert last_of_each_round(members, graph, period) is expected


# -- F2: the argument grown by the loop's own line, not the line before the loop ------------------------------------

def _made_at(tmp_path: Path, source: str, call_line: int) -> int | None:
    path = tmp_path / "gen.py"
    path.write_text(source)
    return argument_made_at(str(path), call_line, "forward", "ids", ["params", "ids"])


GROWING = """ids = jnp.array([[1, 2, 3]])
for t in range(5):
    logits = forward(params, ids)
    nxt = jnp.argmax(logits[:, -1], axis=-1)
    ids = jnp.concatenate([ids, nxt], axis=1)
"""

PROMPTS = """ids = None
for prompt in prompts:
    ids = jnp.array([prompt])
    logits = forward(params, ids)
    other = jnp.concatenate([ids, ids], axis=1)
"""

CARRIED_BY_THE_CALL = """ids = jnp.array([[1, 2, 3]])
for t in range(5):
    ids, logits = forward(params, ids)
    print(logits)
"""

PLACED = """ids = collate(batch)
ids, mask = jax.device_put((ids, mask), sharding)
logits = forward(params, ids)
"""

PADDED = """ids = collate(batch)
ids = jnp.pad(ids, ((0, 0), (0, 8)))
logits = forward(params, ids)
"""

NO_LOOP = """ids = jnp.array([[1, 2, 3]])
ids = ids * 2
logits = forward(params, ids)
"""


@pytest.mark.parametrize("source, call_line, made", [
    (GROWING, 3, 5),   # p08: the concatenate after the call feeds the next iteration
    (PROMPTS, 4, 3),   # the look-alike: a prompt of another length made in the loop before the call
    (NO_LOOP, 3, 2),   # no loop: the last assignment before the call
    (CARRIED_BY_THE_CALL, 3, 3),  # the call rebinds its own argument (params = step(params)): not line 1
    (PLACED, 3, 1),    # jax.device_put places the batch, the line before made it (PLACING_CALLS)
    (PADDED, 3, 2),    # the look-alike: a call that takes the name and changes its shape made it
])
def test_argument_made_at_follows_a_loop_carried_value(tmp_path, source, call_line, made):
    assert _made_at(tmp_path, source, call_line) == made


def test_a_run_without_a_warm_up_counts_none():
    out = cli("explain-recompile", str(SCEN / "jax/rev5_generate_concat")).output
    assert "warm-up" not in out.splitlines()[0]


def test_jax_generate_concat_names_the_concatenate_not_the_initial_prompt():
    """With the script on disk (as the user had it), the line that grows the argument; the capture alone gives the
    call (:15), which its truth accepts too."""
    out = cli("explain-recompile", str(SCEN / "jax/rev5_generate_concat"),
              "--source-map", f"/home/user/project={SCEN / 'jax'}").output
    assert "(shape at rev5_generate_concat.py:17)" in out.splitlines()[0]
    assert "the size at rev5_generate_concat.py:17 grows by 1 every step" in out
    assert "rev5_generate_concat.py:13" not in out.split("\n\n", 1)[0]


# -- F6: Adam's two first steps are not the read's two branches ---------------------------------------------------

def test_item_split_before_adam_does_not_call_adam_s_warm_up_a_second_branch():
    head = cli("explain-recompile", str(SCEN / "torch_xla/rev5_item_clip_adam")).output.split("\n\n", 1)[0]
    assert "split in two by an early read at rev5_item_clip_adam.py:14" in head
    assert "2 different graphs followed the read" not in head
    # review 13 F1: the read gates Adam's step (`continue` on a non-finite norm), so "after the sync" cannot serve
    # it; the condition is decided on the device (this reviewer's truth accepts torch.where as well)
    assert "torch.where" in head and "add_step_closure" not in head
    # review 10 F2 added the first step's second graph to the asides: "(1 of them an expected warm-up; 1 of them ...)"
    # review 20 F2: that second graph is a first compilation, so the warm-up is the only recompilation counted
    assert "1 recompilation (an expected warm-up; the first step's second graph is a first compilation" in head
    out = cli("explain-recompile", str(SCEN / "torch_xla/rev5_item_clip_adam")).output
    assert "expected warm-up: torch/optim/adam.py creates its state" in out
    assert "sync at the same points every step" not in out  # F1's words, by hand behind a split step


def test_a_read_whose_branches_recur_still_asks_for_torch_where():
    """The look-alike: `if loss > 4.0` takes both branches again and again (A,B,A,B,A,C,...)."""
    head = cli("explain-recompile", str(SCEN / "torch_xla/if_loss_spike")).output.split("\n\n", 1)[0]
    assert "2 different graphs followed the read" in head and "torch.where" in head


# -- F4: record's TORCH_TRACE is read: do not ask for it; print the guard's file whole ---------------------------

def test_a_trace_that_was_read_is_not_asked_for_again():
    out = cli("explain-recompile", str(SCEN / "dynamo/dyn_int_scale")).output
    assert "TORCH_TRACE log read here records only the compiled function's own frame" in out
    assert "a TORCH_TRACE log (TORCH_TRACE=DIR) records the call" not in out


def test_a_text_log_still_points_to_torch_trace():
    out = cli("explain-recompile", str(SCEN / "dynamo/dyn_attr_switch")).output
    assert "a TORCH_TRACE log (TORCH_TRACE=DIR) records the call that recompiled" in out


def test_a_guard_path_the_trace_printed_relative_is_made_whole_from_the_definition():
    defined = SourceFrame("/work/notes/review5/scripts/p10.py", 8, "update")
    assert _absolute(SourceFrame("notes/review5/scripts/p10.py", 10, "update"), defined) == \
        SourceFrame("/work/notes/review5/scripts/p10.py", 10, "update")
    other = SourceFrame("lib/other.py", 3, "f")  # another file: left as printed
    assert _absolute(other, defined) is other


def test_a_compiled_module_is_named_in_the_user_s_terms_not_torch_s_wrapper():
    """F8: 'your compiled module or method (torch's wrapper of it)' read as torch's, not the user's."""
    head = cli("explain-recompile", str(SCEN / "dynamo/dyn_eval_mode")).output.splitlines()[0]
    assert head.startswith("Dynamo compiled the module or method you passed to torch.compile 2 times")
    assert "wrapper" not in head


def test_a_block_the_report_judges_expected_says_so_in_its_heading():
    """F6 (p03): 'dump#4 recompiled' for what its own fix calls nothing to fix."""
    heads = [line for line in cli("explain-recompile", str(SCEN / "torch_xla/rev5_partial_batch_record/record")
                                  ).output.splitlines() if " recompiled (" in line]
    # review 13 F5: the short batch to act on is told first, Adam's warm-up after it
    assert heads[0].endswith(("alike", "other shapes")) and heads[1].endswith("; expected")
