"""The fix rule table, row by row: every row can be reached with exactly the evidence it names, each fact it needs
is needed (without it another row answers), each fact in its ``unless`` rules it out; and the rows a real fixture
exercises are the ones that fixture's causes record (``fix_rule``), read from the explanation's JSON."""

from __future__ import annotations

import re

import pytest

from helpers import FIXTURES, cli_json
from hlodiff.diff.fix_rules import ANY, RULES, RULES_BY_NAME
from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.diff.model import CAUSE_KINDS


def _kind(rule) -> str:
    return sorted(rule.kinds)[0] if rule.kinds is not ANY else "ops"


def _facts(rule, kind: str) -> frozenset[str]:
    return frozenset(rule.needs | {f"is:{kind}"})


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_each_row_is_chosen_on_exactly_its_evidence(rule):
    kinds = sorted(rule.kinds) if rule.kinds is not ANY else ["a_kind_no_row_names"] + (["ops"] if rule.needs else [])
    for kind in kinds:
        assert choose(kind, _facts(rule, kind)) is rule, (rule.name, kind)


@pytest.mark.parametrize("rule", [r for r in RULES if r.needs], ids=[r.name for r in RULES if r.needs])
def test_each_fact_a_row_needs_is_needed(rule):
    kind = _kind(rule)
    for fact in rule.needs:
        assert choose(kind, _facts(rule, kind) - {fact}) is not rule, (rule.name, fact)


@pytest.mark.parametrize("rule", [r for r in RULES if r.unless], ids=[r.name for r in RULES if r.unless])
def test_contradicting_evidence_rules_a_row_out(rule):
    kind = _kind(rule)
    for fact in rule.unless:
        assert choose(kind, _facts(rule, kind) | {fact}) is not rule, (rule.name, fact)


def test_every_kind_has_an_answer_and_the_words_fill_in():
    for kind in CAUSE_KINDS:
        rule = choose(kind, frozenset({f"is:{kind}"}))
        text = FixChoice(rule, {"kind": kind}).text
        assert text and "{" not in text


def test_no_row_of_warm_up_or_buckets_asks_for_a_code_change():
    """Rows whose evidence says 'expected' never tell the user to change their code."""
    expected = [r for r in RULES if r.text.startswith(("expected:", "expected warm-up"))]
    assert len(expected) >= 8
    for rule in expected:
        assert "nothing to fix" in rule.text or "if these compilations add up" in rule.text, rule.name


# Rows a real run exercises: the fixture, and the kind of the cause that records the row.
EXERCISED = {
    "setup_once": "torch_xla/setup_accumulate", "eager_op": "jax/debug_print",
    "cut_follows_mask": "torch_xla/mask_index",
    "cut_follows": "torch_xla/item_partial", "partial_mask_index": "torch_xla/mask_index",
    "partial_read": "torch_xla/print_partial", "partial_reads_pile_up": "scenarios/torch_xla/r17_tx_item_no_sync",
    "partial_read_condition": "scenarios/torch_xla/rev13_t3_nan_guard/record",
    "partial_library_read": "scenarios/torch_xla/review2_clip_nonfinite", "shape_topk": "torch_xla/topk_k",
    "shape_growing_cache": "torch_xla/kv_cache", "shape_tensor_list": "torch_xla/index_list",
    "shape_buckets": "torch_xla/collate_buckets", "shape_last_batch_jax": "scenarios/jax/jax_last_batch",
    "shape_last_batch": "torch_xla/batch_shape", "shape_input_jax": "jax/recompile_shape",
    # review 23 F1: one argument (host-filtered negatives) lost a row alone, at a middle step: no batch to drop
    "shape_data_rows_jax": "scenarios/jax/rev23_jx_host_negatives/record",
    # leftovers of the fourteenth stop: a host KV cache passed one row longer each call (1..8), compilations only
    "shape_up_by_one_jax": "scenarios/jax/x14c_jx_kv_host_slice",
    "shape_short_batch_once": "torch_xla/hostile_names",
    "dtype_jax_precision": "jax/dtype_reductions", "dtype_input_int_float_jax": "jax/dtype_int_input",
    "dtype_input": "torch_xla/dtype_input", "dtype_autocast": "torch_xla/autocast_late",
    "dtype_created": "torch_xla/dtype_zeros_like", "constant_lr_special": "torch_xla/lr_zero_one",
    "slice_bound": "torch_xla/slice_index", "inputs_jax": "jax/optional_key",
    "inputs_transposed": "torch_xla/fsdp_linear/plain", "inputs_made_before_loop": "torch_xla/unsynced_init",
    "inputs_follow_ops": "torch_xla/clip_later", "inputs_optimizer_warmup": "torch_xla/momentum_warmup",
    "inputs_library_state": "torch_xla/adamw_split", "inputs_library_state_dumped": "torch_xla/adam_dump_only",
    "inputs_seen": "torch_xla/pipeline/mb2", "accumulation_cycle": "torch_xla/setup_accumulate",
    "inputs_state_dumped": "scenarios/torch_xla/review2_ckpt_dump",
    "inputs_follow_growth": "scenarios/torch_xla/review2_moco_queue/record",
    "rotation_paths": "scenarios/torch_xla/review2_multitask_rr/record", "rotation_follows": "scenarios/torch_xla/review2_multitask_rr/record",
    "ops_optimizer_setting": "scenarios/torch_xla/review2_wd_off",
    "inputs_follow_ops_removed": "scenarios/torch_xla/review2_wd_off",
    "outputs_made_before_loop": "torch_xla/unsynced_init", "outputs_follow": "torch_xla/autocast_late",
    "outputs_some_steps": "torch_xla/metric_even_steps", "ops_converts_follow": "torch_xla/autocast_late",
    # ops_transposes_follow_inputs and ops_layout_follow: on fsdp_linear and lr_warmup_zero those transposes are
    # layout-only consequences, folded into their root's line by the cause graph (no fix of their own is shown).
    "ops_optimizer_warmup": "torch_xla/momentum_warmup", "ops_rewired": "torch_xla/task_order",
    "ops_follow_new_argument_jax": "jax/optional_key", "ops_branch": "torch_xla/xla_dump_extra_op",
    "ops_switched_on": "torch_xla/clip_later",
    "reordered_follow": "torch_xla/grad_norm_order",
    # round 34: a parameter re-registered once (the optimizer rebuilt), the order kept from then on
    "reordered_switched": "scenarios/dynamo/d34_param_reregister_control", "sharding": "jax/other_reasons",
    "aliasing_jax": "jax/donate_toggle", "aliasing_warmup": "torch_xla/record_adamw", "static_flag": "jax/train_flag",
    # review 21, F4: donation lost with the frozen weights' updates (gained with the unfrozen ones'): a consequence
    "aliasing_follow_frozen": "scenarios/torch_xla/rev21_tx_freeze_test/record",
    "aliasing_torch_same_program": "scenarios/torch_xla/r32_tx_spmd_metric_after_sync_control/record_first_try",
    "attribute_contraction": "scenarios/torch_xla/r32_tx_einsum_eq_per_type",
    "aliasing_follow_unfrozen": "scenarios/torch_xla/ulmfit_unfreeze/record",
    "static_structure_shapes": "jax/scan_length", "constant_int_special": "torch_xla/offset_index",
    # eleventh stop: a static tuple of kept blocks picks ops, no size to pad (per-graph rows of the layer-drop run)
    "static_structure": "scenarios/jax/jax_layerdrop_static",
    # round 27: weight-sized tensors trained for good from one step (layers unfrozen), a partial passed static
    "inputs_trained_from_step": "scenarios/torch_xla/r27_tx_prune_schedule",
    # last read of the twelfth stop: an EMA begun after a warm-up, kept every step (no gradient, feeds nothing else)
    "inputs_updated_from_step": "scenarios/torch_xla/lr_ema_after_warmup",
    "static_partial": "scenarios/jax/r27_jx_partial_static_loss",
    "static_partials_kept": "scenarios/jax/lr_jx_two_partials",
    "dtype_input_switched": "torch_xla/bf16_switch", "shape_grows_python": "torch_xla/unbounded_growth",
    "ops_size_follows": "torch_xla/unbounded_growth",
    "sharding_warmup": "torch_xla/spmd_warmup", "static_unused": "jax/static_argument",
    "static_value": "jax/recompile_shape", "follows_new_function": "jax/closure_jit",
    "cache_key_new_function": "jax/closure_jit",
    # issue 30's look-alikes: each row that tells a look-alike apart, on its real run
    "history_carried": "torch_xla/look_rnn_carry", "traced_some_steps": "torch_xla/look_stochastic_depth",
    "inputs_updated_some_steps": "torch_xla/look_ema", "outputs_frozen": "torch_xla/look_frozen_backbone",
    "partial_read_sets_size": "torch_xla/look_host_size", "slice_length_from_read": "torch_xla/look_host_size",
    # a crop side drawn from three sizes, told as a size at the input (dynamo_batch recorded it until review 14 gave
    # the joined graph of a size guard the Dynamo section's words)
    "shape_input": "scenarios/torch_xla/random_crop",
    "dynamo_bridge_follows": "scenarios/dynamo/dyn_tensor_or_float", "shape_input_switched": "torch_xla/look_batch_once",
    "static_slice_start": "jax/look_static_slice",
    "cache_key_keyword": "jax/look_kwarg", "cache_key_placement": "jax/look_device_put",
    # review 12 F5: an eager op under a config context JAX names on its line (look-alike: rev12_jx_eager_device_put)
    "cache_key_context_here": "scenarios/jax/rev12_jx_matmul_precision",
    # round 3: a running total restarted from 0.0 each epoch (its look-alikes: tests/test_round3_rules.py)
    "carried_total_restart": "scenarios/torch_xla/running_loss_epoch",
    "inputs_module_warmup": "scenarios/torch_xla/lazy_linear_control",
    # review 3, F1b: a Python list passed to jit one item longer each call, and what follows from it
    "inputs_jax_list_length": "scenarios/jax/review3_list_arg", "follows_list_length_jax": "scenarios/jax/review3_list_arg",
    # review 3: a batch gaining a key every 3rd step (F2)
    "inputs_cycle_data": "scenarios/torch_xla/review3_collate_key/record",
    # round 4: torch_xla SPMD's second-step annotations (its look-alike, the replayed unsharded batch, is a
    # sharding cause of the same run)
    "ops_spmd_annotation_warmup": "scenarios/torch_xla/spmd_replay_unsharded",
    # review 4, F3: tensors made before the loop, computed by the first step's graph and updated by every step
    "inputs_made_first_step": "scenarios/torch_xla/rev4_kvcache", "ops_made_first_step": "scenarios/torch_xla/rev4_kvcache",
    # round 7: typed PRNG keys split in another number (its look-alike, a key's type changed: jax_key_type)
    "shape_prng_keys_jax": "scenarios/jax/jax_split_count",
    # review 7 (#12): two heads picked by a Python `if`, alternating; look-alikes: review2_multitask_rr (three
    # heads, rotation rows), multitask_missing_key, the dtype rows' own runs (dtype_zeros_like, dtype_input)
    # review 8 (T3): float32 targets, then float64 from a NumPy cache: keep float32 (look-alikes: noise_aug_float64,
    # f64 on some batches only: a cast; bf16_switch: a switch to a low precision keeps dtype_input_switched)
    "dtype_input_to_f64": "scenarios/torch_xla/rev8_np_cache_f64",
    # review 8 (T2): validation below the sync, never synced: its ops ride in the next step (look-alikes keeping
    # outputs_some_steps: tests/test_unannounced_compilations.py's metric-in-the-step runs)
    "outputs_pending_after_sync": "scenarios/torch_xla/rev8_eval_nosync",
    "path_swap": "scenarios/torch_xla/rev7_two_heads/record", "path_swap_follows": "scenarios/torch_xla/rev7_two_heads/record",
    # crossings round 3: a metric computed below the sync, pending into the next step's graph (its look-alikes:
    # metric_even_steps, a metric kept on some steps above the sync: outputs_some_steps; attn_weights_logging, a
    # metric read right after the sync)
    "outputs_after_sync": "scenarios/torch_xla/norm_after_sync",
    # review 9 (F7): plain SGD accumulating gradients: the first micro-batch creates them (its look-alike with
    # momentum: momentum_warmup, the optimizer rows)
    "inputs_first_step_warmup": "scenarios/torch_xla/rev9_accum_remainder/record",
    "ops_first_step_warmup": "scenarios/torch_xla/rev9_accum_remainder/record",
    # review 10 (F1): a compiled call's input drawn on the device, never synced (look-alikes: the synced twin,
    # inputs made on the host: tests/test_review10_dynamo.py)
    "dynamo_bridge_lazy_random_input": "scenarios/dynamo/rev10_dc_control_break/record",

    # round 9: a static jax.checkpoint policy switched mid-run (look-alikes keeping static_structure: scan_length,
    # jax_static_topk, jax_layerdrop_static: tests/test_round9.py)
    "static_choice": "scenarios/jax/jax_remat_policy_switch",
    # round 9: an embedding rebuilt with more rows mid-run, its rows copied in (look-alikes keeping their rows:
    # tests/test_round9.py)
    "inputs_resized": "scenarios/torch_xla/embed_vocab_grow",
    "inputs_params_added": "scenarios/torch_xla/rev21_tx_lora_added/record",
    "shape_follows_params_added": "scenarios/torch_xla/rev21_tx_lora_added/record",
    # crossings round 4: a Python sum over a list of every step's loss, one more scalar input each step (its
    # look-alikes keeping their rows: center_no_detach and look_rnn_carry, non-scalar history: history_carried;
    # loss_history, rev4_history, torch.stack of the list: history_list_joined)
    "history_scalars_summed": "scenarios/torch_xla/x4c_loss_list_sum",
    # crossings round 5: a list of tensors (a gradient history) never emptied, stacked each step (its look-alikes
    # keeping their rows: tests/test_x5c_crossings.py)
    "history_tensors_joined": "scenarios/torch_xla/x5c_grad_list_unreset",

    # round 10 (look-alikes keeping their rows: tests/test_round10.py)
    "sharding_marked_late": "scenarios/torch_xla/r10_spmd_shard_late",
    "inputs_vs_first_step": "scenarios/torch_xla/r10_r1_lazy_reg/record",
    "ops_periodic": "scenarios/torch_xla/r10_r1_lazy_reg/record",
    # round 11: an op run on the CPU (torch.nanmedian), its empty out= buffers handed back (look-alikes keeping
    # their rows: tests/test_round11.py)
    "partial_cpu_fallback": "scenarios/torch_xla/r11_tx_nanmedian_fallback",
    # round 11: optimizer state begun after the first steps (SGD momentum raised from 0.0)
    "outputs_optimizer_state_late": "scenarios/torch_xla/r11_tx_momentum_warmup",
    "inputs_optimizer_state_late": "scenarios/torch_xla/r11_tx_momentum_warmup",
    # round 14: an optimizer built anew each epoch, its first step's graph back from the cache (look-alikes
    # keeping their rows: tests/test_round14.py)
    "inputs_optimizer_state_reset": "scenarios/torch_xla/r14_tx_opt_rebuild_control/record",
    # round 14: a library call's ops added in a capture of compilations only (torch_xla's patched clip_grad_norm_)
    "ops_library_call_added": "scenarios/torch_xla/r14_tx_clip_after_warmup",

    # review 11: a ring buffer made before the loop beside a rotating slot index; equal Python scalars merged
    "rotation_input_made_first_step": "scenarios/torch_xla/rev11_tx_ring_index/record",
    "inputs_equal_scalars": "scenarios/torch_xla/rev11_tx_ema_control/record",
    # round 17: autograd anomaly mode's NaN checks, compiled inside backward() and never logged (look-alikes keeping
    # their rows: tests/test_round17.py)
    "partial_anomaly_check": "scenarios/torch_xla/r17_tx_detect_anomaly",
    # round 17: a pytree node's aux_data a new object compared by identity each call (look-alikes: test_round17.py)
    "cache_key_pytree_identity": "scenarios/jax/r17_jx_pytree_aux_identity",
    # round 22: functions made anew in a pytree's metadata (an optimizer rebuilt as a static field; look-alikes:
    # tests/test_round22.py)
    "cache_key_pytree_functions": "scenarios/jax/r22_jx_tx_rebuild_epoch",
    # round 18: a static argument NaN on every call, never equal to itself (look-alikes: tests/test_round18.py)
    "static_nan": "scenarios/jax/r18_jx_static_nan",
    # round 19: a static class count computed from each batch (look-alikes: tests/test_round19.py)
    "static_data_ceiling": "scenarios/jax/r19_jx_onehot_max_label",
    # eleventh stop: a static that is a size of the inputs passed with it (look-alikes: tests/test_static_input_size.py)
    "static_input_size": "scenarios/jax/r23_jx_segment_num_nodes",
    # tenth stop: a static int stage an `if` reads (look-alikes: tests/test_static_branch.py)
    "static_branch": "scenarios/jax/lead47_jx_static_stage_branch",
    # tenth stop: a short batch mid-run under torch.compile (look-alikes: tests/test_dynamo_short_batch.py)
    "dynamo_shape_short_batch_once": "scenarios/dynamo/lead47_d_filtered_batch",
    # round 20 (look-alikes keeping their rows: tests/test_round20.py): a static dtype spelled two ways, RAdam's
    # rectification in its own code, a float that became a Python int, an AveragedModel's copy made before the loop
    "static_dtype_spelling": "scenarios/jax/r20_jx_static_dtype_spelling",
    "ops_library_step_branch": "scenarios/torch_xla/r20_tx_radam_rect_control",
    # eleventh stop: AveragedModel's start over three steps (look-alikes: tests/test_library_start.py)
    "library_start": "scenarios/torch_xla/r20_tx_swa_update_read",
    "dtype_input_number_became_int": "scenarios/torch_xla/r20_tx_warmup_min_int/record",
    "outputs_made_before_loop_library": "scenarios/torch_xla/r20_tx_swa_update_read",
    "shape_model_width": "scenarios/jax/r20_jx_teacher_student_control/record",
    "constant_int_special_library": "scenarios/torch_xla/r20_tx_adaptive_softmax",
    # round 21: a device randperm over a growing pool (look-alikes: tests/test_round21.py; cache_key_caches_cleared
    # needs the JAX log and the source, also there)
    "shape_randperm": "scenarios/torch_xla/r21_tx_randperm_pool",
    # round 24: soft and hard targets by turns; a prefix slice of a head that keeps its size (look-alikes:
    # tests/test_round24.py)
    "inputs_format_switch": "scenarios/torch_xla/r24_tx_mixup_soft_hard",
    "slice_prefix_of_fixed": "scenarios/torch_xla/r24_tx_class_incremental",
    "shape_made_pieces_joined": "scenarios/torch_xla/r24_tx_packed_blockdiag",
    # round 30 (look-alikes keeping their rows: tests/test_round30.py): a static vmap in_axes spec; an activation's
    # sharding hint on even steps; layers joining the step by a depth schedule
    "static_axes_spec": "scenarios/jax/r30_jx_vmap_bagging_axes",
    "ops_sharding_hint_some_steps": "scenarios/torch_xla/r30_tx_spmd_act_hint_some",
    "inputs_layers_joined": "scenarios/torch_xla/r30_tx_depth_curriculum",
    "inputs_state_added": "scenarios/torch_xla/lr50_tx_queue_begun_late/record",
    # (torch_xla/slice_length, `x[:n]` of a batch that keeps its 8 rows, records slice_prefix_of_fixed since round
    # 24: keep the 8 rows and mask; slice_length stays for a slice whose operand changed size too)
    # round 33: rotary tables extended for one long batch and kept (look-alikes: tests/test_round33.py)
    "shape_stayed_grown": "scenarios/torch_xla/r33_tx_rope_cache_extend",
    "shape_stayed_grown_data": "scenarios/jax/r33_jx_rope_table_grow",
}


def _recorded_rules(fixture: str) -> set[str]:
    folder = FIXTURES / fixture
    dump = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder / "dump"
    dump = dump if dump.exists() else folder  # a `hlodiff record` folder
    doc = cli_json("explain-recompile", str(dump))
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}


@pytest.mark.parametrize("fixture", sorted(set(EXERCISED.values())))
def test_real_runs_record_the_rows_they_exercise(fixture):
    assert set(RULES_BY_NAME) >= set(EXERCISED)
    wanted = {name for name, f in EXERCISED.items() if f == fixture}
    assert wanted <= _recorded_rules(fixture)


_TORCH_WORDS = re.compile(r"\btorch\b|torch\.|autocast|DataLoader|\.item\(\)|xm\.|\.to\(device\)|index_select|"
                          r"\bsync\b|device tensor|x\.float\(\)")
_JAX_WORDS = re.compile(r"\bjnp\b|jax\.|\bjit\b|traced (array|argument|int)|static argument|donate_argnums|lax\.")


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_on_each_row_s_evidence_the_fix_speaks_the_run_s_framework(rule):
    """Whatever a row needs, a JAX run never gets torch's words and a torch_xla run never JAX's."""
    kind = _kind(rule) if rule.kinds is not ANY else "a_kind_no_row_names"
    for producer, foreign in (("jax", _TORCH_WORDS), ("torch_xla", _JAX_WORDS)):
        other = "torch_xla" if producer == "jax" else "jax"
        facts = (_facts(rule, kind) - {other}) | {producer}
        chosen = choose(kind, facts)
        assert not foreign.search(chosen.text), (producer, chosen.name)


@pytest.mark.parametrize("name", sorted(__import__("hlodiff.diff.fix_rules", fromlist=["EXPECTED"]).EXPECTED))
def test_a_row_called_expected_says_so_in_its_fix(name):
    """explain-recompile exits 0 for a recompilation led by these rows: each one's fix must say it is expected."""
    assert RULES_BY_NAME[name].text.startswith("expected")


def test_every_row_whose_fix_says_expected_is_listed_as_expected():
    from hlodiff.diff.fix_rules import EXPECTED

    assert {r.name for r in RULES if r.text.startswith("expected")} == EXPECTED


def _one_sided(*ops):
    from hlodiff.diff.model import Cause, Change, InstructionRef

    return Cause("ops", "instructions added", origins=[
        Change(None, InstructionRef("main", f"i{n}", opcode, "f32[4]", target=target)) for n, (opcode, target)
        in enumerate(ops)])


def test_only_sharding_annotations_and_layout_ops_make_the_spmd_fact():
    """Round 4: SPMD's second-step annotations (custom-call Sharding, a transpose) are the fact; a custom-call of
    another target (a kernel), an op of real work, or a changed pair next to them is not."""
    from hlodiff.diff.origin_facts import _sharding_annotations_only

    assert _sharding_annotations_only(_one_sided(("custom-call", "Sharding"), ("custom-call", "Sharding"),
                                                 ("transpose", "")))
    assert not _sharding_annotations_only(_one_sided(("custom-call", "Sharding"), ("custom-call", "lapack_sgetrf")))
    assert not _sharding_annotations_only(_one_sided(("custom-call", "Sharding"), ("multiply", "")))
    assert not _sharding_annotations_only(_one_sided(("transpose", ""), ("copy", "")))
