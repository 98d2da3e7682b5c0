"""What round 28 (docs/accuracy.md, "Round 28") changed, shown on the real run it was made for and on the real
look-alikes that share its evidence.

- ``count_of_repeated_inputs`` (cause graph) and ``loop_count_inputs_switched`` (fix): gradient accumulation whose
  micro-batch count ramps once (1, then 4) with one sync per optimizer step unrolls the loop into the step graph;
  the graph takes the same data inputs 4 times and ``loss / accum`` (1 baked, 4 as data) changes with the count.
  The count leads, not "a Python number of exactly 0 or 1".
- ``ops_library_setting_call``: ops traced inside a library function (``F.gumbel_softmax`` with ``hard=`` switched)
  name that function and the user's one line that calls it, read from the installed library and the source on
  disk; without the source the story stays as it was.

Inputs: real captures only (fixtures/scenarios/<engine>/<name>/, fixtures/<engine>/<fixture>/)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_doc, fix_rule_set, head_cause
from helpers import FIXTURES, capture_argv
from hlodiff.dumps.library_functions import library_function

TX = FIXTURES / "scenarios" / "torch_xla"
MAP = ("--source-map", f"/home/user/project={TX}")


def _doc(name: str, *extra: str) -> dict:
    return explain_doc(*capture_argv(f"scenarios/torch_xla/{name}"), "--json", *extra)


def test_a_micro_batch_count_that_ramps_once_leads_with_the_loop_not_the_divisor():
    doc = _doc("r28_tx_microbatch_warmup")
    head = head_cause(doc)
    assert head["kind"] == "inputs" and head["fix_rule"] == "loop_count_inputs_switched"
    assert "after each micro-batch" in head["fix"] and "0 or 1" not in head["fix"]
    rec = next(r for r in doc["recompilations"] if r["graph"] == doc["headline"]["graph"])
    constant = next(c for c in rec["causes"] if c["kind"] == "constant")
    assert constant["follows_from"][0]["rule"] == "count_of_repeated_inputs"


@pytest.mark.parametrize("path", [
    # a 0 or 1 of the user's beside optimizer state created or a loss weight: no data inputs repeated, the
    # constant keeps its own row and leads
    "scenarios/torch_xla/warmup_from_zero", "scenarios/torch_xla/wd_from_zero",
    "scenarios/torch_xla/grl_lambda_zero", "scenarios/torch_xla/kl_beta_anneal",
])
def test_a_constant_without_repeated_inputs_beside_it_keeps_its_own_row(path):
    doc = explain_doc(*capture_argv(path), "--json")
    assert "count_of_repeated_inputs" not in {f["rule"] for r in doc["recompilations"] for c in r["causes"]
                                              for f in c["follows_from"]}


def test_an_accumulation_group_short_at_each_epochs_end_keeps_its_row():
    """accum_tail: the short group comes back every epoch: the row for a count that comes back, not the switch."""
    assert "loop_count_inputs_switched" not in fix_rule_set(_doc("accum_tail"))


def test_ops_traced_in_a_library_function_name_it_and_the_users_call():
    doc = _doc("r28_tx_gumbel_hard_switch", *MAP)
    head = head_cause(doc)
    assert head["fix_rule"] == "ops_library_setting_call"
    assert head["locations"][0]["line"] == 27 and "gumbel_softmax" in head["fix"]
    assert "eval" not in head["fix"]


def test_a_setting_switched_on_inside_a_library_call_is_placed_at_the_users_call():
    """label_smoothing_on: F.cross_entropy's smoothing ops (torch/nn/functional.py) from step 3: the row's words stay
    (a setting switched on), the one line calling cross_entropy leads; checkpoint_toggle's recomputed ops lie first
    in a layer's forward, which no line of the user's calls by name: no library call is placed there, but since the
    fourteenth stop the `if` around the file's one checkpoint call and the call itself are (GUARDED_CALL_ROWS), never
    the layer's forward."""
    head = head_cause(_doc("label_smoothing_on", *MAP))
    assert head["fix_rule"] == "ops_switched_on" and head["locations"][0]["line"] == 13
    lines = [loc["line"] for loc in head_cause(_doc("checkpoint_toggle", *MAP))["locations"]]
    assert lines and set(lines) <= {22, 23}


def test_without_the_source_on_disk_the_library_story_stays():
    head = head_cause(_doc("r28_tx_gumbel_hard_switch"))
    assert head["fix_rule"] == "ops_library_setting" and not head["locations"]


def test_the_library_function_is_read_from_the_installed_package_by_its_package_path():
    import torch.nn.functional as F

    line = F.gumbel_softmax.__code__.co_firstlineno + 5
    assert library_function("/usr/lib/python3.11/site-packages/torch/nn/functional.py", line) == "gumbel_softmax"
    assert library_function("/nowhere/site-packages/no_such_pkg/mod.py", 10) is None
