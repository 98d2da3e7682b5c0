"""The facts a fix may rely on that the cause itself holds: read from its origins (the instructions that changed,
their opcodes, shapes and literals) and their frames (which code made them: :mod:`hlodiff.diff.origin_makers`).
The vocabulary is listed in :mod:`hlodiff.diff.fix_facts`, which joins these to the facts only the run knows."""

from __future__ import annotations

import re

from hlodiff.diff.input_formats import format_switch
from hlodiff.diff.model import Cause, Change
from hlodiff.diff.slice_facts import prefix_of_fixed
from hlodiff.diff.origin_makers import (creation_sides, library_made, library_made_inputs, module_state_copy,
                                        package_path, user_made_inputs)
from hlodiff.diff.summaries import MOVED_OPCODES, computes_anew, new_work
from hlodiff.diff.value_facts import _PRNG_KEY, _special, _values_facts
from hlodiff.hlo.literal import size


SETTING_LAYERS = ("torch/nn/modules/", "torch/nn/functional.py")
"""Library code whose traced ops follow the layer's own settings (GELU's ``approximate``, dropout's ``p``, a
module's ``training`` flag): ops that differ there and nowhere in the user's code come from a setting. Not the
optimizer's code (its first step creates state), nor the dispatcher's frames (``torch/_ops.py``), which any op
reaches."""


def _sharding_annotations_only(cause: Cause) -> bool:
    """Every instruction that appears or goes is an SPMD sharding annotation (``custom-call`` with
    ``custom_call_target="Sharding"``) or layout plumbing, and at least one is an annotation: torch_xla's SPMD
    annotates the tensors it updated with their sharding from the second step on; no work of the user's changed."""
    sides = [c.right or c.left for c in cause.origins if c.left is None or c.right is None]
    if len(sides) != len(cause.origins):
        return False
    calls = [s for s in sides if s.opcode == "custom-call"]
    return bool(calls) and all(s.target == "Sharding" for s in calls) and all(
        s.opcode in ("custom-call", "transpose", "copy", "bitcast", "reshape") for s in sides)


def _sharded_from_replicated(cause: Cause) -> bool:
    """Round 10 (r10_spmd_shard_late): every sharding that changed went from replicated (or none) to a tiled one
    (``{replicated} -> {devices=[4,1]0,1,2,3}``): tensors the earlier steps had whole arrive split over the devices,
    as after an ``xs.mark_sharding`` made once the steps had begun. The other way (a batch left unmarked on some
    steps: tiled -> replicated) is not this."""
    pairs = [c.details["sharding"] for c in cause.origins if "sharding" in c.details]
    return bool(pairs) and all(("replicated" in a or not a.strip(" {}")) and "devices=" in b and "replicated" not in b
                               for a, b in pairs)


RNG_OPS = frozenset({"rng-bit-generator", "rng", "rng-get-and-update-state"})
_PLUMBING = frozenset({"transpose", "copy", "bitcast", "reshape"})


def _rng_removed(cause: Cause) -> bool:
    """Round 8 (eval_no_train_back): the graph stopped drawing random numbers: an RNG op is among the instructions
    that went, and nothing but layout plumbing came (dropout's mask gone: a module left in eval mode, or p set to
    0), as opposed to a setting switched on (ops that came)."""
    gone = {c.left.opcode for c in cause.origins if c.right is None and c.left is not None}
    came = {c.right.opcode for c in cause.origins if c.left is None and c.right is not None}
    return bool(gone & RNG_OPS) and came <= _PLUMBING


def _origin_facts(cause: Cause, ctx, facts: set[str], args: dict[str, str]) -> None:
    first = first_changed(cause)
    added = any(c.right is not None and c.left is None for c in cause.origins) or cause.added
    removed = cause.removed
    facts.update(name for name, on in (("added", added), ("removed", removed)) if on)
    if cause.kind == "dtype" and any(_PRNG_KEY.search(str(t)) for t in cause.element_types or ()):
        facts.add("prng_key")
    if cause.kind == "shape" and cause.jax_types is not None and all(
            _PRNG_KEY.match(t.strip()) for t in cause.jax_types):
        facts.add("prng_keys")  # typed keys in another number: split(key, n) with another n
    if removed and not cause.added:
        facts.add("removed_only")
    if cause.kind == "outputs" and cause.own_work and cause.scalar_outputs:
        facts.add("metric_outputs")  # scalars the graph computes for themselves (a norm, a mean): a metric, a log
    if first is not None:
        _changed_facts(first, facts, args, ctx.entries, getattr(ctx, "first_type", ""))
    if cause.kind == "ops" and not cause.locations and cause.library_locations:
        where = cause.library_locations[0]
        if computes_anew(cause.origins) and package_path(where.file).startswith(SETTING_LAYERS):
            facts.add("library_ops")  # traced inside a layer's own code, and no line of the user's is on them
            args["library_call"] = f"{package_path(where.file)}:{where.line}"
    if cause.kind == "ops" and not cause.locations and cause.library_locations and added and not removed:
        files = {package_path(f.file) for f in cause.library_locations}
        if len(files) == 1 and "/optim/" not in next(iter(files)) and "library_ops" not in facts:
            # round 14 (r14_tx_clip_after_warmup): ops added, all traced in one library file outside the layers
            # and the optimizer (torch_xla's patched clip_grad_norm_): a call of the user's made on some steps
            facts.add("library_call_ops")
            where = cause.library_locations[0]
            args["library_call"] = f"{package_path(where.file)}:{where.line}"
    opcodes = {(c.right or c.left).opcode for c in cause.origins}
    if any("operand_count" in c.kinds and c.left is not None and c.left.opcode == "concatenate"
           for c in cause.origins):
        facts.add("join_grows")
    if "opt-barrier" in {(c.right or c.left).opcode for c in cause.origins if c.left is None or c.right is None}:
        facts.add("barrier_one_side")
    if opcodes and opcodes <= {"convert"}:
        facts.add("converts_only")
    if opcodes and opcodes <= {"transpose", "copy"}:
        facts.add("transpose_copy_only")
    if opcodes and opcodes <= {"transpose", "copy", "bitcast", "reshape"}:
        facts.add("layout_ops_only")
    if opcodes and opcodes <= {"broadcast", "reshape", "bitcast"}:
        facts.add("broadcast_reshape_only")
    if _sharding_annotations_only(cause):
        facts.add("sharding_annotations_only")
    if module_state_copy(cause):
        facts.add("module_state_copy")
    if cause.kind == "sharding" and cause.reason == "device_count":
        facts.add("device_count")  # built for another number of devices on both sides: a resized mesh (review 22)
    if cause.kind == "sharding" and _sharded_from_replicated(cause):
        facts.add("sharded_from_replicated")
    if _rng_removed(cause):
        facts.add("rng_removed")
    if _rewired(cause) or (any("operands" in c.details for c in cause.origins) and not new_work(cause.origins)):
        facts.add("rewired")
    new = [c.right for c in cause.origins if c.left is None and c.right is not None]
    if new and all(r.shape.split("{", 1)[0].endswith("[]") for r in new):
        facts.add("scalar_inputs_only")
    gone = [c.left for c in cause.origins if c.right is None and c.left is not None]
    if gone and not new and all(g.shape.split("{", 1)[0].endswith("[]") for g in gone):
        facts.add("scalar_inputs_removed")
    sides = [s for c in cause.origins for s in (c.left, c.right) if s is not None]
    if sides and all(any("/optim/" in f.file for f in s.frames) for s in sides):
        facts.add("in_optimizer")
    if any("/optim/" in f.file for s in sides for f in s.frames):
        facts.add("optimizer_frames")  # review 9 (F7): plain SGD has no state; its first step adds the grads
    if new:
        args["shapes"] = ", ".join(dict.fromkeys(r.shape.split("{", 1)[0] for r in new[:4]))
    else:
        args["shapes"] = "the tensors listed"
    if transposed_input(cause):
        facts.add("transposed_input")
    switch = format_switch(cause, getattr(ctx, "dot_shapes", frozenset()))
    if switch is not None:
        facts.add("format_switch")
        args["formats"] = " and ".join(switch)
    if added and (cause.instructions_removed or ctx.second_step) and ctx.first_recompilation \
            and ctx.settles:
        facts.add("warmup")
    library = library_made_inputs(cause)
    if library:
        facts.add("library_inputs")
        args.setdefault("library", library)
        if library.startswith("torch/nn/"):  # a module's parameters (torch/nn/modules/linear.py), not optimizer state
            facts.add("module_made_inputs")
            args.setdefault("made", library)
    made = user_made_inputs(cause)
    if made:
        facts.add("user_made_inputs")
        args["made"] = made
    keys = {k.split(":", 1)[1] for c in cause.origins for k in c.kinds if k.startswith("attribute:")}
    if keys & {"slice", "dynamic_slice_sizes"}:
        facts.add("slice_attr")
    if keys & {"dimensions", "sizes", "padding", "window"}:
        facts.add("dims_attr")
    if keys and keys <= _CONTRACTION_KEYS:
        facts.add("contraction_attr")  # round 32: a dot multiplies along other axes (an einsum equation per batch)
    if keys and keys <= _PRECISION_KEYS:
        facts.add("precision_attr")  # review F9: a matmul precision setting, no Python value of the program
    if _width_shared(cause):
        facts.add("width_shared")
    if any(_window_moves(c.details.get("attribute:slice")) for c in cause.origins):
        facts.add("slice_window")
    if any("shape" in c.kinds for c in cause.origins if c.left is not None and c.right is not None
           and c.left.opcode in ("slice", "dynamic-slice")):
        facts.add("slice_resized")
        full = prefix_of_fixed(cause)
        if full is not None:
            facts.add("prefix_of_fixed")
            args["full"] = str(full)
    where = creation_sides(cause)
    if cause.library_casts and "torch_xla" in facts:
        facts.add("library_casts")  # library code recast values (autocast): the user's line made no dtype of its own
        where = None
    if where:
        facts.add("user_created")
    args["where"] = f"; {where}" if where else ""
    if _donates_added_inputs(cause, ctx):
        facts.add("donates_added_inputs")
    if cause.kind == "aliasing" and cause.hlo_identical:
        facts.add("donation_only")  # round 32: the same program, only which buffers were donated differs


def _dims(shape: str) -> list[int | None] | None:
    m = re.search(r"\[([^\]]*)\]", shape)
    return None if m is None else [size(d) for d in m.group(1).split(",") if d.strip()]


def _width_shared(cause: Cause) -> bool:
    """Round 20 (r20_jx_teacher_student_control): float weights of rank 2 or more, each changed on one axis only,
    from one size to one other size (64 -> 16), that size the last axis of one and the first of another
    (``f32[8,64]`` -> ``[8,16]`` and ``f32[64,4]`` -> ``[16,4]``: a matmul chain's hidden width): a model of another
    width came through the function, not a batch or a length (those move the same axis of every input; a square
    mask holds a length on two axes of one input; a sequence length on axis 1 of the activations and the last axis
    of an attention mask, ``f32[8,L,32]`` and ``f32[8,1,1,L]``, is on no first axis: the tenth stop's last read)."""
    ends: dict[tuple[int, int], set[str]] = {}
    for c in cause.origins:
        if c.left is None or c.right is None or c.left.opcode != "parameter" or c.right.opcode != "parameter":
            continue
        if not (c.left.shape.startswith(("f", "bf")) and c.right.shape.startswith(("f", "bf"))):
            continue  # token ids and positions are ints: no weight
        a, b = _dims(c.left.shape), _dims(c.right.shape)
        if a is None or b is None or len(a) != len(b) or len(a) < 2 or None in a or None in b:
            continue
        changed = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        if len(changed) != 1:
            continue
        axis = changed[0]
        end = "first" if axis == 0 else "last" if axis == len(a) - 1 else "inner"
        ends.setdefault((a[axis], b[axis]), set()).add(end)
    return any({"first", "last"} <= found for found in ends.values())


_RANGE = re.compile(r"\[(-?\d+):(-?\d+)(?::\d+)?\]")


def _window_moves(detail: tuple[str, str] | None) -> bool:
    """A slice (``{[0:4], [5:7]}`` -> ``{[0:4], [0:7]}``) whose length changed on a dimension where it does not
    start at 0 on both sides: a window or box placed and sized per step (a crop, a CutMix patch), not a prefix
    ``x[:n]`` (start 0) and not an index ``x[i]`` (length 1 on both sides)."""
    if not detail:
        return False
    left, right = (_RANGE.findall(t) for t in detail)
    if len(left) != len(right):
        return False
    for (a0, a1), (b0, b1) in zip(left, right):
        la, lb = int(a1) - int(a0), int(b1) - int(b0)
        if la != lb and (int(a0) != 0 or int(b0) != 0):
            return True
    return False


def _changed_facts(first: Change, facts: set[str], args: dict[str, str], entries: frozenset[str],
                   first_type: str = "") -> None:
    if first.left.opcode == "parameter" and (not entries or first.left.computation in entries):
        facts.add("on_input")
        args["param"] = first.left.name.split(".", 1)[0]
    if _leading_dim_shrank(first):
        facts.add("leading_dim_shrank")
        (full, *_), (short, *_) = _both_dims(first)
        args["rows_before"], args["rows_after"] = str(full), str(short)
    if _leading_dim_shrank(Change(first.right, first.left)):
        facts.add("leading_dim_grew")
    if _inner_dims_only(first):
        facts.add("inner_dims_only")
    values = _values(first)
    moved = "opcode" in first.kinds  # between constant and parameter
    special = {v for v in values if _special(v)}
    if (moved and special) or (values and special == values):
        facts.add("special_values")
    if "index_of" in first.details:
        facts.add("slice_index")
    before, after = (_element(s.shape) for s in (first.left, first.right))
    args["before"], args["after"] = _JNP.get(before, before), _JNP.get(after, after)
    if first.left.opcode == "constant" or first.right.opcode == "constant":
        const = first.left if first.left.opcode == "constant" else first.right
        if _element(const.shape) in _INTS:
            facts.add("int_constant")
    if values and "values" not in args:
        args["values"] = _values_facts(tuple(sorted(values)))[0]
    if _changed_precision(first):
        facts.add("changed_precision")
        if after in _LOW_NAMES:
            facts.add("to_low_precision")
    if (before in _INTS and after in _FLOATS) or (before in _FLOATS and after in _INTS):
        facts.add("int_float")
    if before in _FLOATS and after in _INTS and _one_element(first.left.shape) and _one_element(first.right.shape):
        facts.add("number_became_int")
    if after == "f64" and before in _FLOATS - {"f64"}:
        facts.add("to_f64")
    if library_made(first):
        facts.add("library_made")
    if any("/optim/" in f.file for s in (first.left, first.right) for f in s.frames):
        facts.add("optimizer_made")
    args["torch_dtype"] = _TORCH.get(after, after)
    keep = after if "switched" in facts else before
    if first_type and "switched" not in facts and "stays" not in facts:
        keep = first_type  # the type the run started with: one cast for the whole story
    args["keep"] = _JNP.get(keep, keep)
    args["cast"] = _CAST.get(keep, f"x.to({_TORCH.get(keep, keep)})")


_PRECISION_KEYS = frozenset({"operand_precision", "algorithm"})
_CONTRACTION_KEYS = frozenset({"lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims"})
"""A dot's dimension numbers: which axes of the same operands are multiplied and summed (an einsum equation, a
transpose or operand order picked in Python), not a size (round 32, r32_tx_einsum_eq_per_type)."""
"""Attributes a matmul precision setting writes on dot/convolution (``precision=``, jax_default_matmul_precision)."""
_INTS = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}
_LOW_NAMES = {"bf16", "f16", "f8e4m3fn", "f8e5m2"}
_FLOATS = {"f64", "f32"} | _LOW_NAMES
_TORCH = {"bf16": "torch.bfloat16", "f16": "torch.float16", "f32": "torch.float32", "f64": "torch.float64",
          "s32": "torch.int32", "s64": "torch.int64"}
_JNP = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64", "s32": "int32", "s64": "int64",
        "pred": "bool"}
_CAST = {"f32": "x.float()", "f64": "x.double()", "bf16": "x.bfloat16()", "f16": "x.half()", "s64": "x.long()",
         "s32": "x.int()"}


def _one_element(shape: str) -> bool:
    """A scalar or a one-element array (``f32[]``, ``s64[1]{0}``, ``f32[1,1]``): a single number carried in."""
    dims = re.search(r"\[([^\]]*)\]", shape)
    if dims is None:
        return False
    return all(size(d) == 1 for d in dims.group(1).split(",") if d.strip())


def _element(shape: str) -> str:
    return shape.split("[", 1)[0].strip("(")


def first_changed(cause: Cause) -> Change | None:
    return next((c for c in cause.origins if c.left is not None and c.right is not None), None)


def _values(change: Change) -> set[str]:
    found = set()
    for key in ("literal", "value"):
        found |= {v.strip() for v in change.details.get(key, ()) if v}
    return found


def _rewired(cause: Cause) -> bool:
    """The same operations with their inputs combined in another order (`sum(d.values())` over a dict whose order
    varies): every changed instruction differs in its operands only, and what appears or goes besides is layout
    plumbing (a transpose placed elsewhere), no more of it than there are rewired instructions."""
    changed = [c for c in cause.origins if c.side == "changed"]
    moved = [c for c in cause.origins if c.side != "changed"]
    return (bool(changed) and all(set(c.kinds) == {"operands"} for c in changed) and len(moved) <= len(changed)
            and all((c.right or c.left).opcode in MOVED_OPCODES for c in moved))


def _donates_added_inputs(cause: Cause, ctx) -> bool:
    """Donation was only gained, and only by parameters the recompiled graph added."""
    if cause.kind != "aliasing":
        return False
    gained = [b for _, b in cause.instructions]
    return bool(gained) and not cause.removed and all(b in ctx.added_inputs for b in gained)


def transposed_input(cause: Cause) -> bool:
    """One input added and one removed, same element type, same dimensions in another order: the same tensor
    handed over transposed."""
    added = [c.right.shape for c in cause.origins if c.left is None and c.right is not None]
    removed = [c.left.shape for c in cause.origins if c.right is None and c.left is not None]
    if not added or len(added) != len(removed):
        return False
    return sorted(_array_key(s) for s in added) == sorted(_array_key(s) for s in removed) and added != removed


_DIMS = re.compile(r"\[([^\]]*)\]")


def _array_key(shape: str) -> tuple:
    m = _DIMS.search(shape)
    dims = sorted(m.group(1).split(",")) if m else []
    return (shape.split("[", 1)[0], tuple(dims))


_LOW = ("bf16[", "f16[", "f8")
_FLOAT = ("f64[", "f32[") + _LOW


def _changed_precision(change: Change) -> bool:
    """Between two floating types: what autocast does to the values it touches (either way round)."""
    return change.left.shape.startswith(_FLOAT) and change.right.shape.startswith(_FLOAT) and \
        _element(change.left.shape) != _element(change.right.shape)


def _inner_dims_only(change: Change) -> bool:
    """Only dimensions past the first changed (``s64[4,4]`` -> ``s64[4,6]``): as many rows on both sides, another
    length per row. Review 9 (F4): two ranks padding their batches to their own longest sentence differ so; a
    short last batch changes the first dimension instead."""
    dims = _both_dims(change)
    if dims is None:
        return False
    ld, rd = dims
    return len(ld) >= 2 and len(ld) == len(rd) and ld[0] == rd[0] and ld[1:] != rd[1:]


def _leading_dim_shrank(change: Change) -> bool:
    dims = _both_dims(change)
    if dims is None:
        return False
    ld, rd = dims
    return bool(ld) and len(ld) == len(rd) and rd[0] < ld[0] and ld[1:] == rd[1:]


def _both_dims(change: Change) -> tuple[list[int], list[int]] | None:
    """The left and right sizes of a changed shape, when both are static (None otherwise)."""
    a, b = _DIMS.search(change.left.shape), _DIMS.search(change.right.shape)
    if not a or not b:
        return None
    ld = [size(x) for x in a.group(1).split(",") if x]
    rd = [size(x) for x in b.group(1).split(",") if x]
    return None if None in ld or None in rd else (ld, rd)
