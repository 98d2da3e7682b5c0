"""The relations of a cause graph, as a table: which kinds of cause follow from which, and the evidence each
needs (:data:`RULES`, one row per relation, each with a test in ``tests/test_cause_graph.py``).

The rules read typed facts only: the causes' kinds and reasons, their origins' opcodes, and the two graphs' entry
computations (:class:`Evidence`: operand edges, shapes), never prose. :mod:`hlodiff.explain.cause_graph` links a
recompilation's causes with them and orders what it found.
"""

from __future__ import annotations

import math
import re

from dataclasses import dataclass
from typing import Callable

from hlodiff.diff.fix_facts import NEVER_REORDERS
from hlodiff.diff.model import Cause
from hlodiff.explain.cause_facts import (LAYOUT_OPS, Evidence, added_inputs, added_refs, bare_shape, input_origin,
                                        int_pair, is_scalar_shape, layout_only, literal_ints, only_opcodes,
                                        origin_computations, own_placement, removed_refs, repeats_kept_inputs,
                                        shape_dims, slice_starts, swaps_path)
from hlodiff.hlo.shapes import ShapeSyntaxError, parse_shape

GRAPH_KINDS = frozenset({"reordered", "shape", "dtype", "layout", "constant", "attribute", "inputs", "outputs",
                         "ops", "sharding", "aliasing"})
"""Kinds seen in the computation (or its header): what a change of the cache key outside it can drag along."""


PLUMBING_OPS = LAYOUT_OPS | {"broadcast", "convert", "reshape"}
"""What a changed input's users add around it: broadcasts to the new shape, converts to the new type."""

RECREATED = frozenset({"redefined_function", "never_seen"})
"""JAX reasons that say the function object itself was new (``Cause.reason``)."""

KEY_REASONS = RECREATED | {"tracing_context"}
"""JAX reasons (``Cause.reason`` of a ``cache_key`` cause) that change what is traced: the graph's own differences
follow from them (a new function's closed-over values, another matmul precision). Another pytree is not among them:
the graph shows it as the inputs that came or went, which is where the user looks (rule ``pytree_as_inputs``)."""


# -- the rules ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """``consequence`` kinds follow from ``roots`` kinds (tried in this order) when ``holds(consequence, root,
    evidence)``; ``fold``: the consequence is told within its root."""

    name: str
    consequence: frozenset[str]
    roots: tuple[str, ...]
    holds: Callable[[Cause, Cause, Evidence], bool]
    fold: bool = False
    why: str = ""


def _always(c: Cause, r: Cause, e: Evidence) -> bool:
    return True


def _traced_from_key(c: Cause, r: Cause, e: Evidence) -> bool:
    """What a static argument or weak type changes is traced inside the function (constants, shapes, ops), not an
    argument's own placement (:func:`own_placement`)."""
    return not own_placement(c)


def _key_reason(c: Cause, r: Cause, e: Evidence) -> bool:
    return r.reason in KEY_REASONS and c.reason is None


def _pytree(c: Cause, r: Cause, e: Evidence) -> bool:
    return c.reason == "pytree"


def _named_by_jax(c: Cause, r: Cause, e: Evidence) -> bool:
    """The same kind of change, seen by the graph comparison (no reason) and named by JAX (its argument)."""
    return r.reason == c.kind and c.reason is None


def _callee_of_input(c: Cause, r: Cause, e: Evidence) -> bool:
    """The root changed an entry parameter (what the caller passes in) and the consequence is inside computations
    the entry calls."""
    entry = e.entry_names()
    return (input_origin(r) and bool(entry) and bool(origin_computations(r) & entry) and bool(origin_computations(c))
            and not (origin_computations(c) & entry))


def _plumbing_of_input(c: Cause, r: Cause, e: Evidence) -> bool:
    return input_origin(r) and only_opcodes(c, PLUMBING_OPS)


def _converts(c: Cause, r: Cause, e: Evidence) -> bool:
    return only_opcodes(c, frozenset({"convert"}))


def _outputs_retyped(c: Cause, r: Cause, e: Evidence) -> bool:
    return bool(added_refs(c)) and bool(removed_refs(c))


def _not_layout(c: Cause, r: Cause, e: Evidence) -> bool:
    return not layout_only(r)


def _reordered_with(c: Cause, r: Cause, e: Evidence) -> bool:
    return not layout_only(r) and r.kind != "reordered"


def _scalar_for_new_ops(c: Cause, r: Cause, e: Evidence) -> bool:
    new = added_inputs(c)
    return (not e.arguments_restructured and bool(new) and all(is_scalar_shape(p.shape) for p in new) and not removed_refs(c) and bool(added_refs(r))
            and (e.right is None or e.reads(set(added_refs(r)), {p.name for p in new})))


def _ops_on_new_arguments(c: Cause, r: Cause, e: Evidence) -> bool:
    """JAX re-traced because the caller passed another argument structure (review 3, F1b: a Python list one item
    longer each call): the ops that read the new arguments, and the values baked from their count (a mean's
    divisor), follow from the arguments the graph shows coming."""
    new = {p.name for p in added_inputs(r)}
    if not (e.arguments_restructured and new):
        return False
    if c.kind == "constant":
        return not input_origin(c)
    return bool(added_refs(c)) and (e.right is None or e.reads(set(added_refs(c)), new))


def _ops_on_new_state(c: Cause, r: Cause, e: Evidence) -> bool:
    new = added_inputs(r)
    return (bool(new) and not all(is_scalar_shape(p.shape) for p in new) and bool(added_refs(c)) and not removed_refs(c)
            and e.reads(set(added_refs(c)), {p.name for p in new}))


def _donates_new_inputs(c: Cause, r: Cause, e: Evidence) -> bool:
    gained = [b for _, b in c.instructions if b is not None]
    new = {p.name for p in added_inputs(r)}
    return bool(gained) and bool(new) and all(b in new for b in gained)


def _outputs_became_inputs(c: Cause, r: Cause, e: Evidence) -> bool:
    """Every output gone came back as an input of its shape: a tensor computed by the first step, data since."""
    removed = removed_refs(c)
    if added_refs(c) or not removed:
        return False
    new = [bare_shape(p.shape) for p in added_inputs(r)]
    shapes = [bare_shape(s) for name in removed if (s := e.left_shape(name)) is not None]
    if not shapes or len(shapes) != len(removed):
        return False
    for shape in shapes:
        if shape not in new:
            return False
        new.remove(shape)
    return True


def _parameter_shapes(cc) -> list[str]:
    return [bare_shape(str(i.shape)) for i in cc.insts.values() if i.opcode == "parameter"] if cc is not None else []


def _outputs_of_restructured_args(c: Cause, r: Cause, e: Evidence) -> bool:
    """Round 8 (jax_unfreeze_split): JAX said the arguments' pytree changed (a leaf moved from the frozen dict to the
    trainable one) and the step returns an argument updated: each output that came or went has the shape of a
    parameter of its graph, so the returned tree follows the arguments' tree; told once, as the arguments JAX
    named, not as "returns other values on some calls" (a metric). Outputs of any other shape (a metric) keep
    their own story."""
    if r.reason != "pytree":
        return False
    sides = [(name, e.right) for name in added_refs(c)] + [(name, e.left) for name in removed_refs(c)]
    if not sides:
        return False
    for name, cc in sides:
        inst = cc.insts.get(name) if cc is not None else None
        if inst is None or bare_shape(str(inst.shape)) not in _parameter_shapes(cc):
            return False
    return True


def _slice_resized(c: Cause, r: Cause, e: Evidence) -> bool:
    return any("shape" in o.kinds and any(k in o.kinds for k in ("attribute:slice", "attribute:dynamic_slice_sizes"))
               for o in r.origins)


def _slice_index_constant(c: Cause, r: Cause, e: Evidence) -> bool:
    """The constant took the values the slice's start took (``0 -> 1`` beside ``[0:1] -> [1:2]``): the backward of
    ``x[:, i]`` (select_backward) carries the same Python int as a constant; one index, told at the slice."""
    change = next((o for o in c.origins if o.left is not None and o.right is not None), None)
    literal = change.details.get("literal") if change is not None else None
    if not literal or len(literal) != 2:
        return False
    try:
        before, after = (int(str(v).strip()) for v in literal)
    except ValueError:
        return False
    for o in r.origins:
        bounds = o.details.get("attribute:slice")
        if not bounds or len(bounds) != 2:
            continue
        starts = [slice_starts(b) for b in bounds]
        moved = [(a, b) for a, b in zip(*starts) if a != b]
        if moved and all(pair == (before, after) for pair in moved):
            return True
    return False


def _count_of_joined(c: Cause, r: Cause, e: Evidence) -> bool:
    """The constant took the values the join's operand count took (``1 -> 2`` beside a concatenate of 1, then 2
    operands): the count of a list joined in the step (``torch.stack(history).mean()`` divides by it), baked from
    the list's length (review 4, F1). The join is the change; the count comes with it."""
    change = next((o for o in c.origins if o.left is not None and o.right is not None), None)
    values = int_pair(change.details.get("literal")) if change is not None else None
    if values is None or values[0] == values[1]:
        return False
    return any((o.right or o.left).opcode == "concatenate" and int_pair(o.details.get("operand_count")) == values
               for o in r.origins if (o.right or o.left) is not None)


def _count_of_repeated_inputs(c: Cause, r: Cause, e: Evidence) -> bool:
    """The graph gained (or lost) inputs that repeat the data inputs it keeps (round 28, r28_tx_microbatch_warmup:
    one micro-batch per optimizer step, then 4, all traced before one sync): a Python loop ran another number of
    times, and a number made from that count changed with it (``loss / accum``: 1 baked as a constant, 4 passed as
    device data). Fixing the number alone leaves the graph to compile again; the loop's count is the change, told
    at the inputs."""
    if c.kind != "constant":
        return False
    added = added_inputs(r)
    gone = [o.left for o in r.origins if o.right is None and o.left is not None and o.left.opcode == "parameter"]
    if added and not gone:
        return repeats_kept_inputs(e.right, added)
    if gone and not added:
        return repeats_kept_inputs(e.left, gone)
    return False


def _size_as_constant(c: Cause, r: Cause, e: Evidence) -> bool:
    """Every value of the constant that changed is a size of the shape change beside it, before and after (``{0, 8}
    -> {0, 12}`` beside ``s64[2,8] -> s64[2,12]``: EmbeddingBag's offsets, a mean's divisor taken from the padded
    length; review 8, F8): a number traced from the size, not a Python int of the user's. Only sizes an argument
    brought count: a baked trip count whose stacked outputs change shape (a static ``lax.scan`` length,
    fixtures/jax/scan_length) is the origin of those shapes, not their consequence."""
    change = next((o for o in c.origins if o.left is not None and o.right is not None), None)
    literal = change.details.get("literal") if change is not None else None
    if not literal or len(literal) != 2:
        return False
    before, after = literal_ints(literal[0]), literal_ints(literal[1])
    if before is None or after is None or len(before) != len(after):
        return False
    moved = {(a, b) for a, b in zip(before, after) if a != b}
    return bool(moved) and moved <= _argument_sizes(r, e)


def _argument_sizes(r: Cause, e: Evidence) -> set[tuple[int, int]]:
    """(before, after) of every dimension that changed on an argument among ``r``'s shape changes."""
    sizes = set()
    for o in r.origins:
        if "shape" not in o.kinds or o.left is None or o.right is None or not _argument(o.left, e):
            continue
        left, right = shape_dims(str(o.left.shape)), shape_dims(str(o.right.shape))
        if len(left) == len(right):
            sizes |= {(a, b) for a, b in zip(left, right) if a != b}
    return sizes


def _size_as_attribute(c: Cause, r: Cause, e: Evidence) -> bool:
    """Every number that moved in the changed attributes is a size of an argument's shape change, before and after
    (``padding=0_0x0_200 -> 0_0x0_199`` beside ``negatives f32[200,32] -> f32[199,32]``: jnp.concatenate's pad of
    the negatives' scores; review 23, F7): the op's dimensions are traced from the new shape, not a Python value
    of the user's to keep fixed. A number that moved otherwise (a window placed elsewhere) keeps its own fix."""
    sizes = _argument_sizes(r, e)
    if not sizes:
        return False
    moved = set()
    for o in c.origins:
        for key, pair in o.details.items():
            if not key.startswith("attribute:") or not pair or len(pair) != 2:
                continue
            before, after = (re.findall(r"-?\d+", str(v)) for v in pair)
            if len(before) != len(after):
                return False
            moved |= {(int(a), int(b)) for a, b in zip(before, after) if a != b}
    return bool(moved) and moved <= sizes


_FLOAT = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan")


def _element_type(shape) -> str:
    return str(shape or "").split("[", 1)[0]


def _constant_retyped(c: Cause, r: Cause, e: Evidence) -> bool:
    """The constant holds the same numbers in another float type (``6.28318548 -> 6.2831853071795862``, f32[] ->
    f64[]: 2*pi inside torch.randn drawn in the parameters' new dtype), beside a dtype change: it changed only
    because the type did (new-user review 20, F5: told as a Python number to pass as a device tensor). A constant
    whose value moved (0.1 -> 0.05) is a change of its own, whatever its type."""
    change = next((o for o in c.origins if o.left is not None and o.right is not None), None)
    literal = change.details.get("literal") if change is not None else None
    if not literal or len(literal) != 2 or _element_type(change.left.shape) == _element_type(change.right.shape):
        return False
    before, after = _FLOAT.findall(str(literal[0])), _FLOAT.findall(str(literal[1]))
    if not before or len(before) != len(after):
        return False
    try:
        pairs = [(float(a), float(b)) for a, b in zip(before, after)]
    except ValueError:
        return False
    return all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-30) or (a != a and b != b) for a, b in pairs)


def _argument(ref, e: Evidence) -> bool:
    """A parameter of the entry computation (any computation's parameter when the entries are not known)."""
    entries = e.entry_names()
    return ref.opcode == "parameter" and (not entries or ref.computation in entries)


def _sizes_rearranged(c: Cause, r: Cause, e: Evidence) -> bool:
    """Every instruction whose shape changed keeps its element count (``f32[8,10,8] -> f32[4,2,10,8]``: the same
    values with heads split out), none is an argument of the program, and the root only adds or only removes
    outputs (a value kept on some steps only, not the same outputs retyped): another code path arranged the same
    sizes otherwise (nn.MultiheadAttention with or without its weights), no size followed a Python value."""
    if r.kind == "outputs" and added_refs(r) and removed_refs(r):
        return False
    pairs = [(o.left, o.right) for o in c.origins if "shape" in o.kinds and o.left is not None and o.right is not None]
    if not pairs or any(a.opcode == "parameter" or b.opcode == "parameter" for a, b in pairs):
        return False
    for a, b in pairs:
        try:
            left, right = parse_shape(a.shape), parse_shape(b.shape)
        except ShapeSyntaxError:
            return False
        if left.is_tuple or right.is_tuple or left.dims == right.dims or left.num_elements() != right.num_elements():
            return False
    return True


def _path_swapped(cause: Cause, root: Cause, evidence: Evidence) -> bool:
    return swaps_path(root)


_PARTIAL_OK = GRAPH_KINDS | {"cache_key", "static_argument", "weak_type", "compile_options"}

RULES: tuple[Rule, ...] = (
    Rule("mode_switch", frozenset(GRAPH_KINDS), ("mode",), _always,
         why="a train step against an eval step: dropout's random bits and the backward come or go with the mode"),
    Rule("early_read", frozenset(_PARTIAL_OK), ("partial",), _always,
         why="a step cut short by an early execution: the rest of it (outputs, inputs) differs because of the cut"),
    Rule("static_key", frozenset(GRAPH_KINDS), ("static_argument", "weak_type"), _traced_from_key,
         why="a static argument or weak type JAX keys its cache on changed: the traced program follows from it "
             "(not another argument's placement: an input sharding is a cause of its own)"),
    Rule("jax_key", frozenset(GRAPH_KINDS), ("cache_key",), _key_reason,
         why="JAX saw a new function object (its new closed-over values change the ops) or another tracing "
             "context: the graph's differences follow from it"),
    Rule("pytree_as_inputs", frozenset({"cache_key"}), ("inputs",), _pytree,
         why="JAX's 'pytree structure changed' is the inputs the graph shows coming or going: one change, told "
             "where the graph shows it"),
    Rule("outputs_follow_restructured_args", frozenset({"outputs"}), ("cache_key",), _outputs_of_restructured_args,
         why="the step returns an argument updated: when JAX says the arguments' pytree changed, outputs shaped like "
             "its parameters come or go with it; one change, told where JAX names it"),
    Rule("named_by_jax", frozenset({"sharding"}), ("sharding",), _named_by_jax,
         why="JAX's log names the argument whose sharding the graph shows changed: one change, told where it is "
             "named"),
    Rule("options_of_sharding", frozenset({"compile_options"}), ("sharding",),
         lambda c, r, e: c.reason == "partitioning",
         why="an argument placed with another sharding makes JAX compile for another partition count and devices "
             "(num_partitions, computation_count, replica_device_ids: diff.header.PARTITIONING): options no user "
             "set, following from the sharding"),
    Rule("sharding_of_resized_mesh", frozenset({"sharding", "compile_options"}), ("sharding",),
         lambda c, r, e: r.reason == "device_count" and c is not r and c.reason != "device_count",
         why="the program is built for another number of devices on both sides (num_partitions 4 -> 2: the mesh was "
             "resized, diff.header.resized_mesh): every argument's sharding names the new mesh's devices, so the "
             "shardings follow from the device count, not the other way round (review 22, F1)"),
    Rule("input_reaches_callee", frozenset({"shape", "dtype", "layout"}), ("shape", "dtype"), _callee_of_input,
         why="an input's new shape or type reaches the computations it is passed to (a scan body, a call)"),
    Rule("slice_index_in_backward", frozenset({"constant"}), ("attribute",), _slice_index_constant,
         why="the backward of a slice `x[:, i]` carries the same Python int as a constant: one index, told at the "
             "slice"),
    Rule("slice_sets_length", frozenset({"shape"}), ("attribute",), _slice_resized,
         why="a slice whose bounds changed its length sets the shapes of everything that uses it"),
    Rule("layout_only", frozenset({"ops", "layout"}),
         ("reordered", "inputs", "shape", "dtype", "constant", "attribute", "outputs", "ops", "sharding"),
         lambda c, r, e: layout_only(c) and _not_layout(c, r, e), fold=True,
         why="a transpose/copy that only comes with another change: the tracer lays out the same values otherwise"),
    Rule("input_plumbing", frozenset({"ops"}), ("shape", "dtype"), _plumbing_of_input,
         why="an input whose shape or type changed drags its users' broadcasts, reshapes and converts"),
    Rule("converts_of_dtype", frozenset({"ops"}), ("dtype",), _converts,
         why="a type change brings converts with it"),
    Rule("sizes_rearranged", frozenset({"shape"}), ("outputs", "ops"), _sizes_rearranged,
         why="instructions inside the step whose dimensions changed but not their element count, beside outputs "
             "or ops that came or went: another code path (attention with or without its weights) arranged the "
             "same values otherwise; the path is the change, told where its outputs or ops differ"),
    Rule("outputs_retyped", frozenset({"outputs"}), ("dtype", "shape", "constant", "attribute", "ops"),
         _outputs_retyped, why="outputs added and removed together: the same values with another type or shape"),
    Rule("outputs_became_inputs", frozenset({"outputs"}), ("inputs",), _outputs_became_inputs,
         why="a tensor the first step computed is device data from then on: its output went, an input came"),
    Rule("scalar_for_new_ops", frozenset({"inputs"}), ("ops",), _scalar_for_new_ops,
         why="new operations read a Python number, which torch_xla passes in as an input"),
    Rule("ops_on_new_state", frozenset({"ops"}), ("inputs",), _ops_on_new_state,
         why="new inputs (optimizer state, accumulators) bring the operations that update them"),
    Rule("ops_on_new_arguments", frozenset({"ops", "constant"}), ("inputs",), _ops_on_new_arguments,
         why="JAX saw another argument structure (a longer list): the ops reading the new arguments and the values "
             "baked from their count follow from the arguments that came"),
    Rule("constant_retyped", frozenset({"constant"}), ("dtype",), _constant_retyped,
         why="the same numbers in another float type: a constant computed in the tensors' dtype (2*pi inside "
             "torch.randn) follows their dtype change, not a Python number to pass as a tensor"),
    Rule("size_as_attribute", frozenset({"attribute"}), ("shape",), _size_as_attribute,
         why="the changed attribute's numbers are the sizes an argument's shape change took (a pad or slice "
             "traced from the new length): one change, told at the argument"),
    Rule("size_as_constant", frozenset({"constant"}), ("shape",), _size_as_constant,
         why="the constant's values are the sizes that changed: traced from the new shape, not a Python int"),
    Rule("count_of_joined", frozenset({"constant"}), ("ops",), _count_of_joined,
         why="a list joined in the step (torch.stack of a history) grows by one, and its length is baked as a "
             "constant (a mean's divisor): one change, told at the join"),
    Rule("count_of_repeated_inputs", frozenset({"constant"}), ("inputs",), _count_of_repeated_inputs,
         why="a loop traced into one graph ran another number of times (inputs repeating the data it keeps came or "
             "went), and a number made from the count (a loss divided by it) changed with it: one change, told at "
             "the inputs"),
    Rule("donates_new_inputs", frozenset({"aliasing"}), ("inputs",), _donates_new_inputs,
         why="torch_xla donates the buffers of the tensors a step overwrites: the new inputs among them"),
    Rule("path_swapped", frozenset({"dtype", "constant", "inputs"}), ("shape",), _path_swapped,
         why="a parameter of another shape arriving with many instructions added and many removed is another code "
             "path (a Python `if` picking another head and loss): the other loss's constant types and scalar inputs "
             "come with it (review 7, #12)"),
    Rule("reordered_with", frozenset({"reordered"}),
         tuple(k for k in ("ops", "inputs", "shape", "dtype", "constant", "attribute", "outputs", "sharding")
               if k not in NEVER_REORDERS), _reordered_with,
         why="outputs in another order because the values reaching them changed (never a changed baked value: "
             "diff.fix_facts.NEVER_REORDERS)"),
)
"""One row per relation; a cause follows from the first (rule, root) that holds, in this order."""
