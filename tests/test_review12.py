"""New-user review 12 (2026-11-27), findings F3 and F4, each on the reviewer's program captured as a scenario
(fixtures/scenarios/*/rev12_*) and on the look-alikes that share its evidence."""

from __future__ import annotations

from explain_helpers import fix_rule_set as _rules
from helpers import FIXTURES, cli, cli_json
from hlodiff.diff.fix_stance import FixStance, stance_of_rule

SCEN = FIXTURES / "scenarios"
RESIZE = SCEN / "torch_xla" / "rev12_tx_progressive_resize" / "record"
MASK = SCEN / "torch_xla" / "rev12_tx_bool_mask_loss" / "record"


# -- F3: sizes held for several steps each, never back, are a schedule, not a cache growing every step ------------

def test_a_size_schedule_is_told_as_one_bounded_compilation_per_size():
    """tx_progressive_resize: 16,16,16,24,24,24,32,32,32; no cache to preallocate, no length to pass."""
    doc = cli_json("explain-recompile", str(RESIZE), codes=(0,))
    assert _rules(doc) == {"shape_size_schedule"}
    fix = doc["recompilations"][0]["causes"][0]["fix"]
    assert "schedule" in fix and "(16, 24, 32)" in fix
    assert not any(w in fix for w in ("cache", "every step", "current length", "batch size"))
    assert stance_of_rule("shape_size_schedule") is FixStance.EXPECTED


def test_a_length_curriculum_is_a_schedule_too():
    # look-alike: token lengths 8,8,16,16,32,32 (ids read by an embedding): held two steps each
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "seq_len_curriculum"), codes=(0,))
    assert _rules(doc) == {"shape_size_schedule"}


def test_a_size_that_grows_every_step_keeps_its_growth_rows():
    # look-alikes: a KV cache grown by cat and a Python size, one step per size (A,B,C,D,E): growth, unbounded
    assert "shape_growing_cache" in _rules(cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "kv_cache"),
                                                    codes=(1,)))
    assert "shape_grows_python" in _rules(cli_json("explain-recompile",
                                                   str(FIXTURES / "torch_xla" / "unbounded_growth"), codes=(1,)))


def test_sizes_that_come_back_are_no_schedule():
    # look-alike: a random scale per step (recurring): one graph per bucket, not a schedule
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev11_tx_multiscale" / "record"), codes=(0, 1))
    assert "shape_size_schedule" not in _rules(doc)


# -- F4: x[mask] over a 2-D mask is a boolean mask index, not an index list made on the host ----------------------

def test_a_boolean_mask_index_without_an_early_run_is_told_as_a_mask():
    """tx_bool_mask_loss: per_tok[valid] with valid uploaded: torch_xla passes the mask's coordinates (s64[N,2])."""
    doc = cli_json("explain-recompile", str(MASK), codes=(1,))
    assert _rules(doc) == {"shape_mask_index"}
    fix = doc["headline"]["fix"]
    assert "(x * mask).sum() / mask.sum()" in fix and "torch.tensor(list)" not in fix
    assert "index_input" not in fix and "mask_coords" not in fix  # markers, no op the user wrote


def test_an_index_list_made_on_the_host_keeps_its_row():
    # look-alike: torch.tensor(rows) of 6, 5, 3 rows (s64[n] and s64[n,1]): a list, not coordinates
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "index_list"), codes=(1,))
    assert "shape_tensor_list" in _rules(doc) and "shape_mask_index" not in _rules(doc)


def test_a_mask_index_run_early_keeps_its_row():
    # look-alike: x[mask] whose mask is computed in the step (an early run to count the rows)
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "mask_index"), codes=(1,))
    assert doc["headline"]["kind"] == "partial" and "torch.where" in doc["headline"]["fix"]


# -- F6: the report's read names one_hot when the graphs after it change a scatter's size -------------------------

def test_a_read_that_sizes_a_one_hot_names_num_classes_in_the_report():
    """tx_onehot_nc: F.one_hot(y) without num_classes; the live line said num_classes, the report now says it too."""
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev12_tx_onehot_nc" / "record"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] == 16
    assert "num_classes=C" in head["fix"] and "pad to the maximum" not in head["fix"]
    assert "partial_read_sets_scatter" in _rules(doc)


def test_a_read_that_sets_a_slice_length_keeps_the_size_row():
    # look-alike: look_host_size, a length read to the host then sliced (no scatter): "pad to the maximum" stays
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "look_host_size"), codes=(1,))
    assert "partial_read_sets_size" in _rules(doc) and "partial_read_sets_scatter" not in _rules(doc)


# -- F2: the step graph of every step Dynamo compiled in, and of no other, is the bridge's cut, not a metric -------

def test_the_first_call_after_each_dynamo_compile_is_the_bridges_warm_up():
    """dc_global_flag: sync graphs A,B,B,A,B,B,B, A exactly on the steps Dynamo compiled in (0, and 3 where a cache
    hit): no "a value is kept on some steps only (a metric, a log)" anywhere in the report."""
    doc = cli_json("explain-recompile", str(SCEN / "dynamo" / "rev12_dc_global_flag" / "record"), codes=(0, 1))
    assert "dynamo_first_call_sync" in _rules(doc)
    out = cli("explain-recompile", str(SCEN / "dynamo" / "rev12_dc_global_flag" / "record"), codes=(0, 1)).stdout
    assert "a metric" not in out and "G['USE_NOISE']" in out


def test_the_requires_grad_guard_still_heads_the_fgsm_run():
    # dc_adv_requires_grad: its step-5 graph (the first uncut FGSM step) is no first-call cut, and is left as it was
    doc = cli_json("explain-recompile", str(SCEN / "dynamo" / "rev12_dc_adv_requires_grad" / "record"), codes=(1,))
    assert doc["headline"]["kind"] == "guard" and "requires_grad" in doc["headline"]["fix"]


def test_an_inner_size_switched_once_is_no_batch_size():
    """tx_progressive_resize seen up to step 3 (A,A,A,B): the image side changed, the batch did not."""
    from hlodiff.diff.fix_rules import RULES
    (row,) = [r for r in RULES if r.name == "shape_input_switched_inner"]
    names = [r.name for r in RULES]
    assert names.index("shape_input_switched_inner") < names.index("shape_input_switched")
    assert "batch" not in row.text and "accumulate" not in row.text


def test_a_batch_size_switched_once_keeps_its_row():
    # look-alike: look_batch_once, the leading (batch) size changed once and stayed
    doc = cli_json("explain-recompile", str(FIXTURES / "torch_xla" / "look_batch_once"), codes=(0, 1))
    assert "shape_input_switched" in _rules(doc) and "shape_input_switched_inner" not in _rules(doc)


# -- F7: a JAX argument the function itself hands back in another dtype: the cast belongs at the update's line -----

def test_a_dtype_the_function_promotes_and_the_loop_feeds_back_is_told_at_the_update():
    """jx_param_dtype_drift: train_step returns bf16 params as f32 (:14, `p - lr * g` with f32 lr and grads)."""
    doc = cli_json("explain-recompile", str(SCEN / "jax" / "rev12_jx_param_dtype_drift"), codes=(1,))
    fix = doc["headline"]["fix"]
    assert "rev12_jx_param_dtype_drift.py:14" in fix and "astype(p.dtype)" in fix
    assert "dtype_returned_promoted_jax" in _rules(doc)


def test_a_dtype_changed_on_the_host_keeps_the_cast_at_the_call():
    # look-alike: an int argument passed as a float by the caller (not the function's output): its own row stays
    doc = cli_json("explain-recompile", str(FIXTURES / "jax" / "dtype_int_input"), codes=(1,))
    assert "dtype_input_int_float_jax" in _rules(doc) and "dtype_returned_promoted_jax" not in _rules(doc)


def test_token_ids_read_by_an_embedding_are_no_mask_coordinates():
    # look-alike: ids s64[4,8] -> s64[2,8] (the short last batch), read by an embedding whose backward puts by index
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev5_partial_batch_record" / "record"), codes=(1,))
    assert "shape_mask_index" not in _rules(doc) and "drop_last" in doc["headline"]["fix"]
