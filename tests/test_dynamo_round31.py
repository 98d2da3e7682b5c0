"""Dynamo round 31 (docs/accuracy.md): a batch cut into unequal micro-batches by ``chunk`` is no epoch's short last
batch (never "drop_last"); a Python float that sets a size (``F.interpolate(scale_factor=...)``) is never "pass it
as a tensor"; a tensor grown by ``torch.cat`` between compiled calls is told "preallocate", not "pad or bucket".
One test per row, its look-alikes, and the round's runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fixes import choose
from hlodiff.dumps.chunk_source import splits_into_pieces

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_MAP = {"HLODIFF_SOURCE_MAP": f"/home/user/project={SCENARIOS}"}


def _explain(name: str, env: dict | None = None) -> dict:
    return json.loads(cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1), env=env).stdout)


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "leading_dim_shrank", "uneven_chunks"}, "dynamo_shape_uneven_chunks"),
    ({"dynamo", "leading_dim_shrank", "last_call"}, "dynamo_shape_last_batch"),      # an epoch's remainder keeps it
    ({"dynamo", "leading_dim_shrank", "full_again"}, "dynamo_shape_short_batch_once"),
    ({"dynamo", "grown_by_cat"}, "dynamo_shape_grown_by_cat"),
    ({"dynamo"}, "dynamo_shape"),                                                      # any other new size
])
def test_the_shape_rows_are_chosen_on_their_evidence(facts, row):
    assert choose("shape", frozenset(facts)).name == row


@pytest.mark.parametrize("facts, row", [
    ({"dynamo", "python_float", "sets_shape"}, "dynamo_float_sets_shape"),
    ({"dynamo", "python_float", "sets_shape", "limit_hit"}, "dynamo_float_sets_shape_limit"),
    ({"dynamo", "python_int", "sets_shape"}, "dynamo_int_sets_shape"),                # an int keeps its mask row
    ({"dynamo", "python_float"}, "dynamo_python_value"),                              # a float in arithmetic: a tensor
    ({"dynamo", "python_float", "limit_hit"}, "dynamo_python_value_limit"),
])
def test_the_number_rows_are_chosen_on_their_evidence(facts, row):
    rule = choose("python_value", frozenset(facts))
    assert rule.name == row
    if row.startswith("dynamo_float_sets_shape"):
        assert "pass it as a tensor" not in rule.text and "a size cannot come from a tensor" in rule.text


@pytest.mark.parametrize("code, splits", [
    ("for xm, ym in zip(xb.chunk(ACCUM), yb.chunk(ACCUM)):", True),
    ("parts = torch.chunk(xb, 4, dim=0)", True),
    ("parts = xb.tensor_split(3)", True),
    ("for xm in torch.split(xb, 8):", True),
    ("pieces = h.split(split_size_or_sections=8)", True),
    ("parts = torch.split(h, [3, 5])", False),          # sizes given piece by piece (d11_split_lengths)
    ("parts = torch.split(h, lengths)", True),           # a name: read as a count or size (chunk's own case)
    ("words = line.split()", False),                     # a string's split: no count
    ("for xb, yb in loader:", False),                    # an epoch's batches (dyn_last_batch_static)
    ("xm = xb[:8]", False),
])
def test_a_line_that_cuts_a_tensor_into_pieces_is_read_as_one(tmp_path, code, splits):
    file = tmp_path / "train.py"
    file.write_text(f"import torch\n{code}\n    pass\n" if code.endswith(":") else f"import torch\n{code}\n")
    assert splits_into_pieces(str(file), 2) is splits
    assert splits_into_pieces(str(file), 1) is False


def test_uneven_micro_batches_are_told_by_the_chunk_never_drop_last():
    """d31_accum_chunk_uneven: 30 rows in 4 chunks (8, 8, 8, 6) each step; the loader's batches are all full."""
    doc = _explain("d31_accum_chunk_uneven", _MAP)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_shape_uneven_chunks"}
    head = doc["headline"]
    assert head["location"]["line"] == 20 and "divides" in head["fix"] and "drop_last" not in head["fix"]


def test_without_the_source_the_short_piece_keeps_the_general_row():
    """The chunk is read from the file on disk only: without it nothing says the split is uneven."""
    doc = _explain("d31_accum_chunk_uneven")
    assert "dynamo_shape_uneven_chunks" not in {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}


def test_an_epochs_short_last_batch_keeps_drop_last():
    """dyn_last_batch_static (28 rows in batches of 8, a batch of 4 each epoch): a loader, no chunk."""
    doc = _explain("dyn_last_batch_static", _MAP)
    assert "dynamo_shape_uneven_chunks" not in {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}
    assert "drop_last" in doc["headline"]["fix"]


def test_a_float_scale_factor_is_one_graph_per_scale_never_a_tensor():
    """d31_multiscale_interp: scale drawn from (0.5, 0.75, 1.0), F.interpolate(scale_factor=scale): 3 frames."""
    doc = _explain("d31_multiscale_interp", _MAP)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_float_sets_shape"}
    head = doc["headline"]
    assert head["fix"].startswith("expected") and "as a tensor" not in head["fix"]


def test_a_float_in_arithmetic_keeps_pass_it_as_a_tensor():
    """rev14_p7_temperature: a KD temperature annealed as a float divides the logits: no size changes with it."""
    doc = _explain("rev14_p7_temperature", _MAP)
    rules = {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}
    assert not rules & {"dynamo_float_sets_shape", "dynamo_float_sets_shape_limit"}
    assert "tensor" in doc["headline"]["fix"]


def test_a_queue_grown_by_cat_is_told_preallocate():
    """d31_queue_grow: a MoCo-style queue started empty, grown by torch.cat to 32 rows after each step: 5 frames."""
    doc = _explain("d31_queue_grow", _MAP)
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_shape_grown_by_cat"}
    head = doc["headline"]
    assert "preallocate" in head["fix"] and "bucket" not in head["fix"]


def test_sizes_that_go_up_and_down_are_not_a_grown_tensor():
    """dyn_static_lengths: ten sequence lengths in no order; no tensor grows by cat."""
    doc = _explain("dyn_static_lengths", _MAP)
    assert "dynamo_shape_grown_by_cat" not in {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}


@pytest.mark.parametrize("code, name, line", [
    ("for s in range(8):\n    net.queue = torch.cat([k, net.queue])[:K]\n", "queue", 3),
    ("while True:\n    self.bank = torch.cat([self.bank, z.detach()], dim=0)\n", "bank", 3),
    ("for s in range(8):\n    hist = torch.concat((hist, x))\n", "hist", 3),
    ("net.queue = torch.cat([k, net.queue])\n", "queue", None),                  # once, not in a loop
    ("for s in range(8):\n    net.queue = torch.cat([k, other])\n", "queue", None),  # not fed itself
    ("for s in range(8):\n    net.queue = net.queue * 0.9\n", "queue", None),       # no concatenation
    ("for s in range(8):\n    net.keys = torch.cat([k, net.queue])\n", "queue", None),  # another name rebound
])
def test_a_name_rebound_to_a_concatenation_with_itself_in_a_loop_is_found(tmp_path, code, name, line):
    from hlodiff.dumps.cat_growth_source import grown_by_cat

    file = tmp_path / "train.py"
    file.write_text("import torch\n" + code)
    assert grown_by_cat(str(file), name) == line


def test_without_the_source_the_xla_story_still_tells_the_queue_grown_by_cat():
    """At exit the XLA graphs name the cat (shape_growing_cache) whether or not the file is on disk."""
    doc = _explain("d31_queue_grow")
    assert {r["fix_rule"] for r in doc["dynamo"]["recompiles"]} == {"dynamo_shape_grown_by_cat"}


def test_a_kv_cache_grown_inside_the_compiled_step_keeps_its_story():
    """dyn_kv_cat: the cache grows by torch.cat inside the compiled function (its truth: the cat or the call,
    a static cache): the round's rows must not take another story's place there."""
    doc = _explain("dyn_kv_cat", _MAP)
    assert "preallocate" in doc["headline"]["fix"] or "static" in doc["headline"]["fix"]


@pytest.mark.parametrize("case_id, update", [
    # +dynamo: the guard `scale == 0.5` is read after the XLA graph of the new size, told first as a size Dynamo's
    # symbolic graph left to XLA; the recompilation read later is that story's update, with its fix
    ("dynamo/d31_multiscale_interp", "expected: scale is a Python number that sets a size"),
    ("dynamo/d24_prompt_pool_grow", "a Python int that sets a shape"),
])
def test_a_size_told_waiting_for_dynamo_is_updated_by_the_recompilation_read_later(case_id, update):
    from live_replay import printed, replay_case

    said = printed(replay_case(case_id))
    first = next(x for x in said if "XLA compiled another size for Dynamo's symbolic graph" in x)
    step = first.split(" recompiled", 1)[0].split("hlodiff: ", 1)[1]
    assert any(x.startswith(f"hlodiff: {step}, now that more of the run is known") and update in x for x in said), said
