"""The evidence a fix is chosen from: typed facts about one cause and its run, as fact names plus the arguments the
fix's words need.

Facts from the cause itself (its origins: opcodes, shapes, literals, frames) are read in
:mod:`hlodiff.diff.origin_facts`, what the values seen say in :mod:`hlodiff.diff.value_facts`; facts only the run
knows (the pattern, the values a size took over the run, the op that made a tensor, a library's first step) arrive
in :class:`~hlodiff.diff.fixes.FixContext`, filled in by ``explain.fix_context``. Fact names:

* producer: ``torch_xla`` / ``jax``; run position: ``setup``, ``eager``, ``cut``, ``last_in_family``, ``settles``,
  ``first_recompilation``, ``second_step``, ``warmup`` (first recompilation of a family that settles, second graph or
  work removed), ``materialized``, ``first_step_made`` (FixContext.first_step_made), ``cycle`` (period > 2), ``optimizer_in_cycle`` (an optimizer's update on some graphs of
  the cycle only: gradient accumulation; for two alternating graphs, seen in both graphs' source lines), ``last_each_round`` (the recompiled graph closes every round of the
  period and only there: the last batch of each epoch), ``switched`` (the family changed once and stayed);
* ``with:<kind>`` for every other cause of the same recompilation (``with:transposed_input``: one of them is a
  tensor handed over transposed), ``lead_change``/``lead_other`` when one of them
  is a kind this cause can follow from;
* ``op:<name>`` for each op that made the changed value (``nonzero``, ``topk``, ``cat``, ``tensor_list``, ...);
* ``grows`` (the size grew at every compilation), ``size_schedule`` (each size held several steps, never back:
  FixContext.size_schedule), ``promoted_output`` (FixContext.promoted_at), ``stayed_grown`` (an input grew once and stayed while the data's size came back: FixContext.stayed_grown), ``buckets`` (the sizes are already on a few buckets: the
  bucket planner's verdict ``expected``, :func:`hlodiff.explain.buckets.verdict`), ``library_first_step``,
  ``required_static`` (a JAX static argument that sets loop counts, shapes or branches), ``loop_count_only``
  (it sets a loop's trip count and nothing else), ``unrolled_loop`` (it sets how many times a Python loop's ops
  are repeated in the graph), ``bool_values``,
  ``prng_key`` (a dtype change from or to a typed PRNG key), ``prng_keys`` (a shape change of an argument JAX
  types as PRNG keys both times: another number of keys), ``reciprocal_counts`` (baked 1/n, n counting up: a cumulative average's weight), ``identity_values`` (default object reprs: compared by identity), ``redefined_function`` (functions of one name at several addresses: the same ``def`` made again; ``{function}``), ``partial_values`` (every value a functools.partial: compared by identity, however alike they print), ``nan_values`` (every value NaN: never equal to itself), ``dtype_spellings`` (one dtype in several spellings: a string, a scalar type, an np.dtype; ``{dtype}``), ``type_only_values`` (one number in other
  types: ``0`` and ``0.0``),
  ``hlo_identical``, ``new_function`` (JAX never saw the function object),
  ``ops_use_new_inputs`` (the ops added read the inputs added, or the ops removed the inputs removed),
  ``read_branch`` (the graphs after an early read differ in ops only), ``read_condition`` (the early reads hand
  back one-element booleans only: a Python ``if`` on a tensor, :mod:`hlodiff.diff.condition_read`), ``read_in_condition``
  (an early read's line is the test of an ``if``/``while`` in the source on disk: ``if loss.item() > 1e6: continue``), ``reads_pile_up`` (a growing family's graphs, all but the last, ran early for a read: nothing marks the step between the reads), ``block_repeats`` (each
  recompilation adds about the same block of ops, never back: a loop unrolled once more),
  ``none_leaf`` (JAX: a leaf was None on the other call), ``nondiff_static`` (a static argument fed to a
  custom_vjp/custom_jvp function's nondiff_argnums, in the source), ``metadata_identity`` (JAX: a pytree node's aux_data
  is a new object of a class compared by identity on each call), ``metadata_functions`` (JAX: a pytree node's
  metadata holds functions made anew on each call), ``state_returned`` (every input gained comes back as an
  output of its shape: carried state), ``across_ranks`` (two ranks' graphs at one step),
  ``state_begun_late`` (outputs added that the next graph reads back in torch.optim: optimizer state begun late),
  ``reads_state_begun_late`` (the optimizer's inputs read back the state begun one graph earlier),
  ``state_reset`` (the first step's graph comes back after this one, which reads state made in torch.optim: an
  optimizer built anew), ``library_call_ops`` (ops added, all traced in one library file outside torch/nn's layers
  and torch/optim, no line of the user's: a library call made on some steps),
  ``cpu_fallback`` (the early execution handed back empty out= buffers: an op ran on the CPU),
  ``anomaly_check`` (the early execution was autograd anomaly mode's NaN check, compiled inside backward()),
  ``library_read`` (a library function made the early read:
  :mod:`hlodiff.diff.library_reads`), ``join_grows`` (a concatenate joins another number of operands: torch.stack of a list), ``barrier_one_side`` (an optimization barrier on one side only: rematerialization), ``slices_rearranged`` (the slice bounds
  seen on both sides), ``inputs_repeat`` (the inputs one graph lacks are shaped like inputs both keep: a loop over
  more items), ``resized_input`` (an added input has the new shape of a shape change and the old-shape input is still
  read: a parameter rebuilt at another size, its rows copied in), ``choice_values`` (a static argument's values are
  functions, option objects or strings: choices, not sizes), ``axes_values`` (a static argument's values are tuples of
  axis numbers and None: vmap's in_axes, no size), ``branch_values`` (a static argument of whole numbers
  that changed only which ops are traced: a stage or mode an ``if`` reads, not a loop count), ``data_values`` (three or more whole numbers >= 1, the
  largest at most twice the smallest: a statistic of each batch under the data's ceiling, ``value_facts.data_ceiling``),
  ``library_start`` (the family's once-only graphs settling into one, every change in one file of
  :data:`hlodiff.explain.library_branches.LIBRARY_BRANCHES`: a library's start over several steps), ``inputs_follow`` (a static argument's value is a dimension of entry inputs that changed with it: a size of the batch
  itself, FixContext.inputs_follow), ``structure_shapes`` (the structure a static sets is shapes or slice bounds, which
  padding can fix; not which ops are traced),
  ``after_sync:<made_by>`` (an outputs change made below the step's sync, pending into the next step's graph; the
  field says by what: ``after_sync:metric`` when the cause's first user line is below the sync in the loop's own
  function, a value computed after the previous step's sync; else ``after_sync:validation``, wider, when every user
  line of the outputs the graph adds is below it, a forward called from a validation block: FixContext.made_after_sync),
  ``carried_scalar`` (a scalar made at a user line is 0 or absent on one side, device data flowing into a scalar
  output on the other: a running total restarted at the top of a loop);
* from the origins: ``on_input`` (a parameter of an entry computation), ``leading_dim_shrank``, ``inner_dims_only``
  (the same rank and the same first dimension, another size past it: a padded length, not a batch), ``special_values``,
  ``slice_index`` (the changed constant is a dynamic-slice/dynamic-update-slice start: baked for every value),
  ``int_constant``, ``changed_precision``, ``to_low_precision``, ``int_float``, ``width_shared`` (parameters each changed on one axis, one size pair on different axes: a model's width), ``number_became_int`` (a one-element input from a float type to an integer one), ``to_f64`` (a float input widened to
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
  changed where it starts off 0: a box placed and sized per step), ``prefix_of_fixed`` (a prefix slice whose operand
  keeps its size: ``{full}``, :mod:`hlodiff.diff.slice_facts`), ``format_switch`` (one input gone and one come, an
  integer and a float tensor of other ranks: ``{formats}``, :mod:`hlodiff.diff.input_formats`),
  ``dims_attr``, ``contraction_attr`` (only a dot's contracting/batch dimensions changed),
  ``precision_attr`` (only operand_precision/algorithm changed: a matmul precision setting),
  ``donates_added_inputs``, ``donation_only`` (an aliasing cause whose HLO is identical: only donation differs),
  ``library_casts`` (torch_xla: converts between floating types made by library code came
  with a dtype change, on one side only: autocast's casts, :mod:`hlodiff.diff.autocast`); ``is:<kind>`` names the cause's own kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.diff.library_reads import LIBRARY_READS
from hlodiff.diff.model import Cause
from hlodiff.diff.origin_facts import _origin_facts
from hlodiff.diff.value_facts import (_OBJECT_REPR, _all_nan, _choice_value, _equal_numbers, _reciprocal_counts, _special,
                                      _values_facts, axes_specs, data_ceiling, dtype_spelling, partial_objects,
                                      redefined_function, up_by_one, whole_numbers)
from hlodiff.hlo.model import runs_after


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


_FLAGS = ("inputs_follow", "loop_count_only", "unrolled_loop", "state_begun_late", "reads_state_begun_late",
          "cpu_fallback", "anomaly_check", "rng_seed_update", "last_each_round", "optimizer_in_cycle", "state_reset",
          "updated_in_place", "updated_from_step", "trains", "gradient_added", "feeds_step", "updates_removed",
          "update_dropped", "donors_updated", "donors_trained", "carried_scalar", "slice_start",
          "loop_counter", "placement", "pytree", "stays", "short_run", "final_call", "compilations_only", "only_added",
          "rotation", "path_swap", "log_unjoined", "inputs_repeat", "resized_input", "params_added", "state_added", "none_leaf", "state_returned",
          "slices_rearranged", "read_branch", "across_ranks", "no_collective", "size_schedule", "read_condition",
          "read_in_condition", "pullback", "batch_rows", "rows_sliced", "rows_filtered")
"""Context flags that are facts by their own name when set (a context without the field: not set)."""


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
        if _all_nan(ctx.values):
            facts.add("nan_values")
        if len(unique) >= 2 and all(_OBJECT_REPR.match(v.strip()) for v in unique):
            facts.add("identity_values")
        if partial_objects(ctx.values):
            facts.add("partial_values" if getattr(ctx, "value_remade", False) else "partials_kept")
        redefined = redefined_function(ctx.values)
        if redefined is not None:
            facts.add("redefined_function")
            args["function"] = redefined
        elif len(unique) >= 2 and _equal_numbers(unique):
            facts.add("type_only_values")
        spelled = dtype_spelling(ctx.values)
        if spelled is not None:
            facts.add("dtype_spellings")
            args["dtype"] = spelled
        if len(unique) >= 2 and all(_choice_value(v.strip()) for v in unique):
            facts.add("choice_values")
        if axes_specs(ctx.values) and getattr(ctx, "axes_passed", None) is not False:
            facts.add("axes_values")  # tuples of axes and None: vmap's in_axes, no size to pad
        if getattr(ctx, "branch_on_static", False) and whole_numbers(ctx.values):
            facts.add("branch_values")
        largest = up_by_one(ctx.values) if cause.kind == "shape" else None
        if largest is not None:
            facts.add("up_by_one")
            args["largest"] = str(largest)
        ceiling = data_ceiling(ctx.values)
        if ceiling is not None:
            facts.add("data_values")
            args["ceiling"] = str(ceiling)
    if ctx.grows:
        facts.add("grows")
    if ctx.buckets:
        facts.add("buckets")
    if getattr(ctx, "stayed_grown", ""):
        facts.add("stayed_grown")
        args["stayed"] = ctx.stayed_grown
    if getattr(ctx, "stayed_other", ""):
        facts.add("stayed_other")
        args["stayed"] = ctx.stayed_other
    if ctx.library:
        facts.add("library_first_step")
        args["library"] = ctx.library
    if ctx.structure:
        facts.add("required_static")
        args["structure"] = ctx.structure
        if ctx.structure.startswith(("shapes", "slice bounds")):
            facts.add("structure_shapes")  # sizes a static sets can be padded; ops it picks cannot
    args["arg"] = ctx.argument or "?"
    if getattr(ctx, "read_sets_trace", 0) >= 2:
        facts.add("read_sets_trace")
        if cause.kind == "partial" and cause.reason == "read":
            facts.add("own_read")  # this cut is a value read (.item()), not a mask's early run beside it
        args["after_read"] = str(ctx.read_sets_trace)
    if getattr(ctx, "branch_lines", "") and getattr(ctx, "read_branch", False):
        facts.add("branch_lines")
        args["branch_lines"] = ctx.branch_lines
    if getattr(ctx, "library_read", ""):
        row = next((r for r in LIBRARY_READS if r.name == ctx.library_read), None)
        if row is not None:
            facts.add("library_read")
            args.update(read_call=row.call, read_what=row.reads, read_fix=row.fix)
    if getattr(ctx, "caches_cleared", ""):
        facts.add("caches_cleared")
        args["cleared_at"] = ctx.caches_cleared
    if getattr(ctx, "keywords", ""):
        facts.add("keyword_call")
        args["keywords"] = ctx.keywords
    facts.update(name for name in _FLAGS if getattr(ctx, name, False))
    if getattr(ctx, "library_start", ""):
        facts.add("library_start")
        args["branch"] = ctx.library_start
    if getattr(ctx, "library_branch", ""):
        facts.add("library_step_branch")
        args["branch"] = ctx.library_branch
    if getattr(ctx, "context_setting", ""):
        facts.add("context_here")
        args["setting"], args["context_line"] = ctx.context_setting, ctx.context_line
    if getattr(ctx, "promoted_at", ""):
        facts.add("promoted_output")
        args["promoted_at"] = ctx.promoted_at
    if getattr(ctx, "nondiff_callee", ""):
        facts.add("nondiff_static")
        args["callee"] = ctx.nondiff_callee
    if getattr(ctx, "metadata_identity", ""):
        facts.add("metadata_identity")
        args["node_class"], args["meta_class"] = ctx.metadata_identity.split(":", 1)
    if getattr(ctx, "metadata_functions", ""):
        facts.add("metadata_functions")
        args["node_class"], args["function"] = ctx.metadata_functions.split(":", 1)
    if getattr(ctx, "list_length", ""):
        facts.add("list_length")
        args["container"], args["lengths"] = ctx.list_length.split(":", 1)
    if getattr(ctx, "block_repeats", ""):
        facts.add("block_repeats")
        args["added_each"] = ctx.block_repeats
    if getattr(ctx, "reads_pile_up", False):
        facts.add("reads_pile_up")
    if getattr(ctx, "graph_grows", ()):
        facts.add("graph_grows")
        if getattr(ctx, "ops_each_step", ""):
            facts.add("ops_each_step")
            args["added_each"] = ctx.ops_each_step
        if getattr(ctx, "scalars_grow", False):
            facts.add("scalars_grow")
        if getattr(ctx, "joins_grow", False):
            facts.add("joins_grow")
        counts = ctx.graph_grows
        args["counts"] = ", ".join(str(n) for n in counts[:5]) + (", ..." if len(counts) > 5 else "")
    after_sync = _after_sync(cause, ctx)
    if after_sync is not None:
        facts.add(f"after_sync:{after_sync[0]}")
        args["sync"] = after_sync[1]
    # a position among a family's graphs is a step only when its executions were seen: in a capture of
    # compilations only (an XLA dump, PT_XLA_DEBUG_LEVEL=1) it is the graph's index, which "step 1" would misstate
    steps = () if getattr(ctx, "compilations_only", False) else getattr(ctx, "variant_steps", ())
    args["first_step"] = f"step {steps[0]}" if steps else "the step that compiled it"
    args["steps"] = _steps_text(steps)
    args["line"] = _user_line(cause)


AFTER_SYNC_KINDS = ("outputs",)
"""Kinds whose change can come from work recorded after the step's sync (``after_sync:metric``): a value computed
below ``torch_xla.sync()`` in the loop and read on some steps only is pending into the next step's graph on the
others, an output more there (round 3 of the crossings, ``norm_after_sync``)."""


def _after_sync(cause: Cause, ctx) -> tuple[str, str] | None:
    """One fact, two sources: ``("metric", sync)`` when the cause's own first user line runs below the sync in the
    loop's function (the narrower evidence, checked first), ``("validation", sync)`` when explain found every user
    line of the outputs the graph adds below it (``FixContext.made_after_sync``, review 8, T2); ``sync`` is the
    sync's line as ``file.py:N``. None when neither holds."""
    sync_at = getattr(ctx, "sync_at", None)
    if sync_at is not None and cause.kind in AFTER_SYNC_KINDS and _made_after(cause, sync_at):
        return "metric", f"{sync_at.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{sync_at.line}"
    if getattr(ctx, "made_after_sync", ""):
        return "validation", ctx.made_after_sync
    return None


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


def _recounted(cause: Cause) -> bool:
    """An outputs cause whose added and removed outputs differ in number (1 added, 2 removed): not one output
    changing type or shape (one removed for each added). Beside a constant change, the step returns other values (a
    branch that skipped the optimizer's update); beside a dtype change (autocast) it may be the type's own doing."""
    pairs = cause.instructions or ()
    return sum(1 for a, b in pairs if b is None) != sum(1 for a, b in pairs if a is None)
