"""What a fix asks of the user, as a typed fact beside its words.

Analysis decides from it, never from the fix's words: whether a recompilation asks a change (the exit status,
:mod:`hlodiff.explain.verdict`), whether a size gets a bucket plan, which cause is printed first, how many expected
warm-ups the run's summary counts, which of explain's fixes ``compare`` adopts. The words can then be reworded in
the table without changing a decision. A fix chosen from the table takes its row's stance (:func:`stance_of_rule`);
a fix its maker wrote (``fix_rule`` None) says its own (:meth:`hlodiff.diff.model.Cause.write_fix`).
"""

from __future__ import annotations

from enum import Enum

from hlodiff.diff.fix_rules import EXPECTED


class FixStance(Enum):
    CHANGE = "change"
    """Change the code, or check what the fix names: the default."""
    EXPECTED = "expected"
    """Expected, nothing to fix (a setup graph, one graph per bucket, train and eval)."""
    WARMUP = "warm-up"
    """An expected warm-up: the first step differs, every later one reuses a graph; nothing to fix."""
    FOLLOWS = "follows"
    """Follows from another cause told above it: fixing that one removes this."""


NOTHING_TO_FIX = frozenset({FixStance.EXPECTED, FixStance.WARMUP})
"""The stances of a fix that calls the compilation expected."""

WARMUP_RULES = frozenset((
    "dynamo_first_call_sync", "dynamo_optimizer_state_warmup", "inputs_user_warmup", "inputs_module_warmup", "inputs_optimizer_warmup", "inputs_first_step_warmup",
    "inputs_library_warmup", "inputs_library_state_dumped", "inputs_state_dumped", "inputs_library_state",
    "inputs_library_state_kept", "outputs_made_before_loop_unread", "outputs_made_before_loop_library", "outputs_library_warmup",
    "ops_spmd_annotation_warmup", "ops_library_warmup", "reordered_library_warmup", "aliasing_library_warmup"))
"""Rows of :data:`~hlodiff.diff.fix_rules.EXPECTED` that call the compilation the program's warm-up."""

FOLLOWS_RULES = frozenset((
    "cut_follows_mask", "cut_follows", "follows_list_length_jax", "follows_new_function", "rotation_follows",
    "path_swap_follows", "dynamo_bridge_follows", "dynamo_step_follows_guard", "dynamo_past_limit", "shape_loop_length", "slice_rearranged", "inputs_follow_ops",
    "inputs_follow_growth", "inputs_follow_ops_removed", "inputs_follow_shape_scalars",
    "inputs_follow_shape_scalars_removed", "outputs_made_before_loop", "outputs_follow", "ops_rng_seed",
    "ops_converts_follow", "ops_transposes_follow_inputs", "ops_layout_follow", "ops_layout_follow_inputs", "ops_size_follows",
    "ops_optimizer_warmup", "ops_first_step_warmup", "ops_follow_new_argument_jax", "reordered_follow", "sharding_warmup", "aliasing_warmup",
    "aliasing_follow_inputs", "aliasing_follow_frozen", "aliasing_follow_unfrozen",
    "inputs_vs_first_step", "inputs_optimizer_state_late", "cache_key_context_here",
    "ops_update_dropped", "shape_follows_params_added"))
"""Rows whose fix says the cause follows from another one (fix that, and this goes too). Rows that follow from
Dynamo's expected recompilation are expected ones (:data:`~hlodiff.diff.fix_rules.EXPECTED`), not these."""


def stance_of_rule(name: str) -> FixStance:
    """The stance of a row of :data:`~hlodiff.diff.fix_rules.RULES`, by its name."""
    if name in FOLLOWS_RULES:
        return FixStance.FOLLOWS
    if name in WARMUP_RULES:
        return FixStance.WARMUP
    return FixStance.EXPECTED if name in EXPECTED else FixStance.CHANGE
