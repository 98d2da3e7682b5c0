"""Blind round 6 (docs/accuracy.md, "Round 6"): the rules it changed, each shown on the real run it was wrong on and
on the real look-alikes that share its evidence.

* a graph a read runs right after the step's sync, from what that sync produced, is no cut step
  (:mod:`hlodiff.explain.after_sync`): attn_weights_logging's attention entropy printed after the sync;
* JAX: an argument None on some calls is lazily created state only when the step returns what it becomes
  (``state_returned``); otherwise an optional argument to pass every call (``inputs_jax_optional_none``)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_capture as _doc


def _head_rule(doc: dict) -> str | None:
    head = doc.get("headline")
    for r in doc["recompilations"]:
        if head and r["graph"] == head.get("graph") and r["causes"]:
            return r["causes"][0]["fix_rule"]
    return None


def test_a_metric_read_after_the_sync_is_no_cut_step():
    doc = _doc("scenarios/torch_xla/attn_weights_logging", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "outputs" and head["location"]["line"] == 17
    assert ".item()" not in head["fix"] and "every step" in head["fix"]
    assert doc["patterns"][0].startswith("periodic:")


@pytest.mark.parametrize("path", [
    "torch_xla/item_partial",            # loss.item() between backward and the optimizer step
    "torch_xla/print_partial",           # print(tensor) before the sync
    "scenarios/torch_xla/rev5_item_clip_adam",   # an .item() guard before Adam.step()
    "scenarios/torch_xla/plateau_sched_read",    # ReduceLROnPlateau's float(loss) after opt.step(), before the sync
])
def test_reads_before_the_sync_still_cut_the_step(path):
    doc = _doc(path, codes=(1,))
    assert doc["headline"]["kind"] == "partial"


def test_read_after_sync_needs_the_line_after_the_sync_and_only_the_syncs_outputs():
    """On the real graphs of attn_weights_logging: the read's graph right after its sync graph is a read after the
    sync (its own family, the sync's family keeps whole steps only); taken the other way round (the read's line
    before the sync's), or a read after a read, it is not."""
    from conftest import FIXTURES
    from helpers import explained
    from hlodiff.dumps.run_folder import discover
    from hlodiff.explain.after_sync import read_after_sync

    result = explained(discover([str(FIXTURES / "scenarios" / "torch_xla" / "attn_weights_logging")], None, None))
    assert [len(f.members) for f in result.families] == [8, 3]   # 8 steps; 3 reads on logging steps, apart
    graphs = result.graphs
    sync, read = graphs[0], graphs[1]
    assert sync.trigger.line == 31 and read.trigger.line == 33
    assert read_after_sync(sync, read)
    assert not read_after_sync(read, sync) and not read_after_sync(read, read)


@pytest.mark.parametrize("path, rule", [
    ("scenarios/jax/jax_optional_mask", "inputs_jax_optional_none"),   # mask=None when nothing is padded
    ("scenarios/jax/jax_lazy_momentum", "inputs_jax_lazy_state"),      # momentum None, then returned updated
])
def test_a_none_argument_is_state_only_when_the_step_returns_it(path, rule):
    assert _head_rule(_doc(path, codes=(1,))) == rule


def test_a_batch_key_absent_is_no_none_argument():
    """jax/optional_key: the dict loses its "mask" key (no None anywhere): the general row, as before."""
    assert _head_rule(_doc("jax/optional_key", codes=(1,))) == "inputs_jax"
