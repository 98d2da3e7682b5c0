"""The evidence a fix is chosen from: typed facts about one cause and its run, as fact names plus the arguments the
fix's words need.

Facts from the cause itself (its origins: opcodes, shapes, literals, frames) are read here; facts only the run
knows (the pattern, the values a size took over the run, the op that made a tensor, a library's first step) arrive
in :class:`~hlodiff.diff.fixes.FixContext`, filled in by ``explain.fix_context``. Fact names:

* producer: ``torch_xla`` / ``jax``; run position: ``setup``, ``eager``, ``cut``, ``last_in_family``, ``settles``,
  ``first_recompilation``, ``second_step``, ``warmup`` (first recompilation of a family that settles, second graph or
  work removed), ``materialized``, ``first_step_made`` (FixContext.first_step_made), ``cycle`` (period > 2), ``optimizer_in_cycle`` (an optimizer's update on some graphs of
  the cycle only: gradient accumulation), ``last_each_round`` (the recompiled graph closes every round of the
  period and only there: the last batch of each epoch), ``switched`` (the family changed once and stayed);
* ``with:<kind>`` for every other cause of the same recompilation (``with:transposed_input``: one of them is a
  tensor handed over transposed), ``lead_change``/``lead_other`` when one of them
  is a kind this cause can follow from;
* ``op:<name>`` for each op that made the changed value (``nonzero``, ``topk``, ``cat``, ``tensor_list``, ...);
* ``grows`` (the size grew at every compilation), ``buckets`` (the sizes are already on a few buckets: the
  bucket planner's verdict ``expected``, :func:`hlodiff.explain.buckets.verdict`), ``library_first_step``,
  ``required_static`` (a JAX static argument that sets loop counts, shapes or branches), ``loop_count_only``
  (it sets a loop's trip count and nothing else), ``unrolled_loop`` (it sets how many times a Python loop's ops
  are repeated in the graph), ``bool_values``,
  ``prng_key`` (a dtype change from or to a typed PRNG key), ``prng_keys`` (a shape change of an argument JAX
  types as PRNG keys both times: another number of keys), ``reciprocal_counts`` (baked 1/n, n counting up: a cumulative average's weight), ``identity_values`` (default object reprs: compared by identity), ``type_only_values`` (one number in other
  types: ``0`` and ``0.0``),
  ``hlo_identical``, ``new_function`` (JAX never saw the function object),
  ``ops_use_new_inputs`` (the ops added read the inputs added, or the ops removed the inputs removed),
  ``read_branch`` (the graphs after an early read differ in ops only), ``block_repeats`` (each
  recompilation adds about the same block of ops, never back: a loop unrolled once more),
  ``none_leaf`` (JAX: a leaf was None on the other call), ``state_returned`` (every input gained comes back as an
  output of its shape: carried state), ``across_ranks`` (two ranks' graphs at one step),
  ``library_read`` (a library function made the early read:
  :mod:`hlodiff.diff.library_reads`), ``join_grows`` (a concatenate joins another number of operands: torch.stack of a list), ``barrier_one_side`` (an optimization barrier on one side only: rematerialization), ``slices_rearranged`` (the slice bounds
  seen on both sides), ``inputs_repeat`` (the inputs one graph lacks are shaped like inputs both keep: a loop over
  more items), ``resized_input`` (an added input has the new shape of a shape change and the old-shape input is still
  read: a parameter rebuilt at another size, its rows copied in), ``choice_values`` (a static argument's values are
  functions, option objects or strings: choices, not sizes),
  ``after_sync`` (an outputs change whose first user line is below the sync, in the loop's own function: computed
  after the previous step's sync, pending into this one), ``made_after_sync`` (wider: the outputs a graph adds are
  made by any user lines below the step's sync, a forward called from a validation block: pending work that rides in
  the next step's graph),
  ``carried_scalar`` (a scalar made at a user line is 0 or absent on one side, device data flowing into a scalar
  output on the other: a running total restarted at the top of a loop);
* from the origins: ``on_input`` (a parameter of an entry computation), ``leading_dim_shrank``, ``inner_dims_only``
  (the same rank and the same first dimension, another size past it: a padded length, not a batch), ``special_values``,
  ``slice_index`` (the changed constant is a dynamic-slice/dynamic-update-slice start: baked for every value),
  ``int_constant``, ``changed_precision``, ``to_low_precision``, ``int_float``, ``to_f64`` (a float input widened to
  float64: NumPy's default), ``library_made``, ``optimizer_made``
  (frames in an ``optim`` package), ``metric_outputs`` (outputs added or removed are scalars computed by
  instructions of their own: a metric), ``sizes_vary`` (a shape whose size took three values or more over the
  run: no epoch's last batch), ``library_inputs``, ``user_created``, ``added``, ``removed``, ``removed_only``,
  ``scalar_inputs_only``, ``transposed_input``, ``scalar_inputs_removed``, ``sharding_annotations_only`` (only SPMD ``Sharding``
  custom-calls and layout ops appear or go), ``in_optimizer`` (every changed instruction has a frame
  in an ``optim`` package), ``optimizer_frames`` (a changed instruction has a frame in an ``optim`` package),
  ``user_made_inputs``, ``module_made_inputs`` (every added input made
  in ``torch/nn``: a module's weights), ``warmup``, ``rewired``, ``converts_only``,
  ``transpose_copy_only``, ``layout_ops_only``, ``broadcast_reshape_only``, ``slice_attr``, ``slice_resized``, ``slice_window`` (a slice's length
  changed where it starts off 0: a box placed and sized per step),
  ``dims_attr``, ``precision_attr`` (only operand_precision/algorithm changed: a matmul precision setting),
  ``donates_added_inputs``, ``library_casts`` (torch_xla: converts between floating types made by library code came
  with a dtype change, on one side only: autocast's casts, :mod:`hlodiff.diff.autocast`); ``is:<kind>`` names the cause's own kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hlodiff.diff.library_reads import LIBRARY_READS
from hlodiff.diff.model import Cause, Change
from hlodiff.diff.summaries import MOVED_OPCODES, computes_anew, new_work
from hlodiff.hlo.literal import number, size
from hlodiff.hlo.model import runs_after


def _special(text: str) -> bool:
    """A scalar of exactly 0, 1 or -1 (in any notation: ``1``, ``1.0``, ``1e0``, ``-0``) or a boolean."""
    value = number(text)
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1, -1))


NEVER_REORDERS = frozenset({"constant"})
"""Cause kinds that leave the program's structure, its output order included, as it was (a baked value that changed):
a reordering never follows from them, in the fix words here and in the cause graph (explain/cause_graph.py)."""

_LEADS = ("dtype", "shape", "constant", "attribute", "ops", "static_argument", "layout", "outputs", "inputs")


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a fix may rely on: fact names, and the arguments its words are filled in with."""

    facts: frozenset[str]
    args: dict[str, str] = field(default_factory=dict)


def evidence(cause: Cause, ctx) -> Evidence:
    facts: set[str] = {f"is:{cause.kind}"}
    args: dict[str, str] = {"kind": cause.kind}
    _context_facts(cause, ctx, facts, args)
    _origin_facts(cause, ctx, facts, args)
    if ctx.values and "special_values" in facts and not all(_special(v.strip()) for v in ctx.values):
        facts.discard("special_values")  # 0, 1 and 2 were baked in: not torch_xla's special scalars, an int changing
    args["seen"] = f" ({args['values']})" if "values" in args else ""
    args.setdefault("values", "the values seen in this run")
    args.setdefault("count", "several")
    return Evidence(frozenset(facts), args)


# -- the run --------------------------------------------------------------------------------------------------------


def _context_facts(cause: Cause, ctx, facts: set[str], args: dict[str, str]) -> None:
    if ctx.producer:
        facts.add(ctx.producer)
    for name in ("setup", "eager", "cut", "last_in_family", "settles", "first_recompilation", "second_step",
                 "materialized", "first_step_made", "hlo_identical", "new_function", "ops_use_new_inputs", "comes_back",
                 "two_runs"):
        if getattr(ctx, name):
            facts.add(name)
    if ctx.transposed_input and cause.kind != "inputs":
        facts.add("with:transposed_input")
    if ctx.pattern:
        facts.add(ctx.pattern.replace(" ", "_"))
    if ctx.period > 2:
        facts.add("cycle")
    if ctx.period:
        args["period"] = str(ctx.period)
    facts.update(f"with:{k}" for k in ctx.others)
    others = [k for k in ctx.others if k != cause.kind]
    lead = next((k for k in _LEADS if k in others and k != "inputs"), None)
    if lead is not None:
        facts.add("lead_change")
        args["lead"] = lead.replace("_", " ")
    if lead == "constant" and cause.kind == "outputs" and _recounted(cause):
        # review 10 F4: a value baked or passed changes no output's type or shape; outputs gone or added in another
        # number are other values the step returns (a branch skipped opt.step()), not a consequence of it
        facts.add("outputs_recounted")
    if cause.kind == "reordered":
        others = [k for k in others if k not in NEVER_REORDERS]
    if others:
        facts.add("lead_other")
        args["other"] = others[0].replace("_", " ")
    facts.update(f"op:{op}" for op in ctx.ops)
    if ctx.ops:
        args["op"] = ", ".join(sorted(ctx.ops))
    if ctx.values:
        listed, count, booleans = _values_facts(ctx.values)
        args["values"], args["count"] = listed, count
        if booleans:
            facts.add("bool_values")
        if _reciprocal_counts(ctx.values):
            facts.add("reciprocal_counts")
        unique = set(ctx.values)
        if cause.kind == "shape" and len(unique) >= 3:
            facts.add("sizes_vary")  # three sizes or more: no epoch's last batch (full size and one remainder)
        if len(unique) >= 2 and all(_OBJECT_REPR.match(v.strip()) for v in unique):
            facts.add("identity_values")
        elif len(unique) >= 2 and _equal_numbers(unique):
            facts.add("type_only_values")
        if len(unique) >= 2 and all(_choice_value(v.strip()) for v in unique):
            facts.add("choice_values")
    if ctx.grows:
        facts.add("grows")
    if ctx.buckets:
        facts.add("buckets")
    if ctx.library:
        facts.add("library_first_step")
        args["library"] = ctx.library
    if ctx.structure:
        facts.add("required_static")
        args["structure"] = ctx.structure
    if getattr(ctx, "loop_count_only", False):
        facts.add("loop_count_only")
    if getattr(ctx, "unrolled_loop", False):
        facts.add("unrolled_loop")
    args["arg"] = ctx.argument or "?"
    if getattr(ctx, "read_sets_trace", 0) >= 2:
        facts.add("read_sets_trace")
        args["after_read"] = str(ctx.read_sets_trace)
    if getattr(ctx, "branch_lines", "") and getattr(ctx, "read_branch", False):
        facts.add("branch_lines")
        args["branch_lines"] = ctx.branch_lines
    if getattr(ctx, "library_read", ""):
        row = next((r for r in LIBRARY_READS if r.name == ctx.library_read), None)
        if row is not None:
            facts.add("library_read")
            args.update(read_call=row.call, read_what=row.reads, read_fix=row.fix)
    if getattr(ctx, "made_after_sync", ""):
        facts.add("made_after_sync")
        args["sync_at"] = ctx.made_after_sync
    if getattr(ctx, "keywords", ""):
        facts.add("keyword_call")
        args["keywords"] = ctx.keywords
    for name in ("rng_seed_update", "last_each_round", "optimizer_in_cycle", "updated_in_place", "updates_removed",
                 "carried_scalar",
                 "slice_start", "placement", "pytree", "stays", "short_run", "final_call", "compilations_only", "only_added", "rotation", "path_swap", "log_unjoined", "inputs_repeat", "resized_input",
                 "none_leaf", "state_returned", "slices_rearranged", "read_branch", "across_ranks",
                 "no_collective"):
        if getattr(ctx, name, False):
            facts.add(name)
    if getattr(ctx, "list_length", ""):
        facts.add("list_length")
        args["container"], args["lengths"] = ctx.list_length.split(":", 1)
    if getattr(ctx, "block_repeats", ""):
        facts.add("block_repeats")
        args["added_each"] = ctx.block_repeats
    if getattr(ctx, "graph_grows", ()):
        facts.add("graph_grows")
        counts = ctx.graph_grows
        args["counts"] = ", ".join(str(n) for n in counts[:5]) + (", ..." if len(counts) > 5 else "")
    sync_at = getattr(ctx, "sync_at", None)
    if sync_at is not None and cause.kind in AFTER_SYNC_KINDS and _made_after(cause, sync_at):
        facts.add("after_sync")
        args["sync"] = f"{sync_at.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{sync_at.line}"
    args["first_step"] = str(ctx.variant_steps[0]) if getattr(ctx, "variant_steps", ()) else "this step"
    args["steps"] = _steps_text(getattr(ctx, "variant_steps", ()))
    args["line"] = _user_line(cause)


AFTER_SYNC_KINDS = ("outputs",)
"""Kinds whose change can come from work recorded after the step's sync (``after_sync``): a value computed below
``torch_xla.sync()`` in the loop and read on some steps only is pending into the next step's graph on the others,
an output more there (round 3 of the crossings, ``norm_after_sync``)."""


def _made_after(cause: Cause, sync_at) -> bool:
    """The cause's first user frame runs below the sync's line in the same function of the same file."""
    first = next((f for f in cause.locations if not getattr(f, "is_library", False) and f.line is not None), None)
    return first is not None and runs_after([first], [sync_at])


def _steps_text(steps: tuple[int, ...]) -> str:
    """``steps 1, 3, 4 and 7`` (the first eight), or ``some steps`` when unknown."""
    if not steps:
        return "some steps"
    shown = [str(s) for s in steps[:8]]
    if len(steps) > 8:
        return "steps " + ", ".join(shown) + ", ..."
    return ("step " + shown[0]) if len(shown) == 1 else "steps " + ", ".join(shown[:-1]) + " and " + shown[-1]


def _user_line(cause: Cause) -> str:
    """The cause's first user frame as ``file.py:N`` (basename), else words that say no line is known: "the line
    shown" beside "line unknown" contradicted itself (review 6, F6a)."""
    for f in cause.locations:
        if not getattr(f, "is_library", False) and f.line is not None:
            return f"{f.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{f.line}"
    return "a line of yours this capture does not name"


_VALUES_SEEN: dict[int, tuple[tuple[str, ...], tuple[str, str, bool]]] = {}


_PRNG_KEY = re.compile(r"\bkey<\w+>")
"""JAX's dtype of a typed PRNG key (``key<fry>``): one of the two types a changed argument had."""
_OBJECT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")
"""Python's default repr: an object whose class defines no __eq__/__hash__, compared (and hashed) by identity."""

_CHOICE_REPR = re.compile(r"""^(<function [\w.<>]+ at 0x[0-9a-fA-F]+>|<built-in function \w+>|[A-Za-z_][\w.]*\(.*\)"""
                          r"""|'[^']*'|"[^"]*")$""")
_NUMERIC_CTOR = re.compile(r"^(?:np\.|numpy\.|jnp\.|Array\(|array\(|u?int\d*\(|float\d*\(|bfloat16\(|complex\d*\()"
                           r"|dtype=")
"""Round 9 (jax_remat_policy_switch): static values that are choices, not sizes: functions (a jax.checkpoint
policy, an activation), constructed option objects with their own repr (DotsSaveable(...)), strings (a mode name).
A NumPy/JAX scalar or array repr is a number, not a choice."""


def _choice_value(value: str) -> bool:
    return bool(_CHOICE_REPR.match(value)) and not _NUMERIC_CTOR.search(value)


def _reciprocal_counts(values: tuple[str, ...]) -> bool:
    """``0.5, 0.333333343, 0.25, 0.2``: 1/n for n counting up by one, three or more: the weight of a cumulative
    average (BatchNorm's momentum=None passes 1/num_batches_tracked; a running mean updated with 1/step)."""
    ns = []
    for v in dict.fromkeys(values):
        x = number(v.strip())
        if isinstance(x, (int, float)) and not isinstance(x, bool) and x in (0, 1):
            continue  # 1 is 1/1; 0 the weight before the first count (BatchNorm starts from 0.0)
        if not isinstance(x, float) or not 0 < x < 1:
            return False
        n = round(1 / x)
        if abs(1 / x - n) > 1e-3 * n:
            return False
        ns.append(n)
    return len(ns) >= 3 and all(b == a + 1 for a, b in zip(ns, ns[1:]))


def _equal_numbers(values: set[str]) -> bool:
    """Different texts of one number (``0`` and ``0.0``, ``1`` and ``True``): equal, only their types differ."""
    numbers = [number(v.strip().lower()) for v in values]
    if any(not isinstance(n, (bool, int, float)) for n in numbers):
        return False
    return all(n == numbers[0] for n in numbers[1:])


def _values_facts(values: tuple[str, ...]) -> tuple[str, str, bool]:
    """The values as listed in a fix, how many there are, whether they are booleans. Every cause of a family shares
    one tuple of values (2,000 sizes in a run of 2,000 recompilations): worked out once per tuple, found again by
    identity (the tuple is kept with the answer, so its id cannot be reused meanwhile)."""
    known = _VALUES_SEEN.get(id(values))
    if known is not None and known[0] is values:
        return known[1]
    unique = list(dict.fromkeys(values))
    answer = (", ".join(unique[:6]) + (", ..." if len(unique) > 6 else ""), str(len(unique)),
              all(isinstance(number(v.lower()), bool) for v in unique))  # JAX's log prints True
    if len(_VALUES_SEEN) > 256:
        _VALUES_SEEN.clear()
    _VALUES_SEEN[id(values)] = (values, answer)
    return answer


# -- the cause's origins ----------------------------------------------------------------------------------------------


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


MODULE_BASE = "torch/nn/modules/module.py"
"""torch.nn.Module's own file: its code traces no op of a layer (forward is the layer's file); what it traces is a
copy into the module's tensors (load_state_dict's ``param.copy_``, ``_apply`` for ``.to()`` / ``.half()``)."""


def _module_state_copy(cause: Cause) -> bool:
    """Round 8 (spmd_load_state_mid): no line of the user's is on the cause and every library frame on it is
    torch.nn.Module's own code: the change was traced where the module copies tensors into its parameters
    (``model.load_state_dict(best)`` restoring host tensors mid-run), not in a layer's forward."""
    return (not cause.locations and bool(cause.library_locations)
            and all(package_path(w.file) == MODULE_BASE for w in cause.library_locations))


RNG_OPS = frozenset({"rng-bit-generator", "rng", "rng-get-and-update-state"})
_PLUMBING = frozenset({"transpose", "copy", "bitcast", "reshape"})


def _rng_removed(cause: Cause) -> bool:
    """Round 8 (eval_no_train_back): the graph stopped drawing random numbers: an RNG op is among the instructions
    that went, and nothing but layout plumbing came (dropout's mask gone: a module left in eval mode, or p set to
    0), as opposed to a setting switched on (ops that came)."""
    gone = {c.left.opcode for c in cause.origins if c.right is None and c.left is not None}
    came = {c.right.opcode for c in cause.origins if c.left is None and c.right is not None}
    return bool(gone & RNG_OPS) and came <= _PLUMBING


def _recounted(cause: Cause) -> bool:
    """An outputs cause whose added and removed outputs differ in number (1 added, 2 removed): not one output
    changing type or shape (one removed for each added). Beside a constant change, the step returns other values (a
    branch that skipped the optimizer's update); beside a dtype change (autocast) it may be the type's own doing."""
    pairs = cause.instructions or ()
    return sum(1 for a, b in pairs if b is None) != sum(1 for a, b in pairs if a is None)


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
    if _module_state_copy(cause):
        facts.add("module_state_copy")
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
    if added and (cause.instructions_removed or ctx.second_step) and ctx.first_recompilation \
            and ctx.settles:
        facts.add("warmup")
    library = _library_made_inputs(cause)
    if library:
        facts.add("library_inputs")
        args.setdefault("library", library)
        if library.startswith("torch/nn/"):  # a module's parameters (torch/nn/modules/linear.py), not optimizer state
            facts.add("module_made_inputs")
            args.setdefault("made", library)
    made = _user_made_inputs(cause)
    if made:
        facts.add("user_made_inputs")
        args["made"] = made
    keys = {k.split(":", 1)[1] for c in cause.origins for k in c.kinds if k.startswith("attribute:")}
    if keys & {"slice", "dynamic_slice_sizes"}:
        facts.add("slice_attr")
    if keys & {"dimensions", "sizes", "padding", "window"}:
        facts.add("dims_attr")
    if keys and keys <= _PRECISION_KEYS:
        facts.add("precision_attr")  # review F9: a matmul precision setting, no Python value of the program
    if any(_window_moves(c.details.get("attribute:slice")) for c in cause.origins):
        facts.add("slice_window")
    if any("shape" in c.kinds for c in cause.origins if c.left is not None and c.right is not None
           and c.left.opcode in ("slice", "dynamic-slice")):
        facts.add("slice_resized")
    where = _creation_sides(cause)
    if cause.library_casts and "torch_xla" in facts:
        facts.add("library_casts")  # library code recast values (autocast): the user's line made no dtype of its own
        where = None
    if where:
        facts.add("user_created")
    args["where"] = f"; {where}" if where else ""
    if _donates_added_inputs(cause, ctx):
        facts.add("donates_added_inputs")


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
    if after == "f64" and before in _FLOATS - {"f64"}:
        facts.add("to_f64")
    if _library_made(first):
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


def _library_made(change: Change) -> bool:
    """Both sides' innermost frames are library code (torch's Module.to, nn.functional): no user line made it."""
    frames = [s.frames[0] for s in (change.left, change.right) if s is not None and s.frames]
    return bool(frames) and all(f.is_library for f in frames)


def _creation_sides(cause: Cause) -> str | None:
    """Where each side created the changed value, when a user line did (``f32 at t.py:10, bf16 at t.py:12``).

    The first changed non-input with frames decides: a user frame there means the user's code built the value with
    that dtype; a library frame (nn.functional under autocast) means an op was recast. None when no user line."""
    if cause.kind != "dtype":
        return None
    for change in cause.origins:
        if change.left is None or change.right is None or change.left.opcode == "parameter":
            continue
        sides = [(s.shape.split("[", 1)[0], s.frames[0]) for s in (change.left, change.right) if s.frames]
        if not sides:
            continue
        if any(f.is_library for _, f in sides):
            return None
        if len(sides) == 2 and sides[0][1] != sides[1][1]:
            return ", ".join(f"{t} at {f.short()}" for t, f in sides)
        return f"at {sides[0][1].short()}"
    return None


def _user_made_inputs(cause: Cause) -> str:
    """User lines that made the added inputs (``t.py:11``), empty when library code (an optimizer) made them."""
    lines = []
    for change in cause.origins:
        if change.left is None and change.right is not None and change.right.frames:
            mine = [f for f in change.right.frames if not f.is_library]
            if len(mine) != len(change.right.frames) or not mine:
                return ""
            lines.append(mine[0].short())
    return ", ".join(dict.fromkeys(lines))


STATE_MAKERS = (
    ("torch/optim/", "an optimizer's state (Adam's exp_avg, exp_avg_sq, step) is created by its first step()"),
)
"""Library folders whose code creates state on its first call that every later call reads as inputs: an added
input made there is that library's warm-up even when the stack reaches the user's call below it (a live-tensor
report's stack: ``adam.py:447`` called from ``train.py:29 opt.step()``), review 5 F1. Other library code called
from a user line (``F.pad`` in a user's collate) made the user's own value, so it must name a folder here."""


def _state_maker(file: str) -> bool:
    path = file.replace("\\", "/")
    return any(folder in path for folder, _ in STATE_MAKERS)


def _library_made_inputs(cause: Cause) -> str:
    """The library file that made every added input (``torch/optim/adam.py``: optimizer state), empty when any
    added input has a user frame or none has frames. A user frame below the library's (its caller: ``opt.step()``)
    is allowed when the innermost frame is in a :data:`STATE_MAKERS` folder."""
    files = []
    for change in cause.origins:
        if change.left is None and change.right is not None:
            frames = change.right.frames
            if not frames or not frames[0].is_library:
                return ""
            if not all(f.is_library for f in frames) and not _state_maker(frames[0].file):
                return ""
            files.append(frames[0].file)
    return package_path(max(set(files), key=files.count)) if files else ""


def package_path(file: str) -> str:
    """``/usr/lib/python3.11/site-packages/torch/optim/adamw.py`` -> ``torch/optim/adamw.py``."""
    path = file.replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return "/".join(path.rsplit("/", 3)[-3:])


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
