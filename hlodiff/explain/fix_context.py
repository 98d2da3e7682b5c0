"""Fixes that depend on the run, not only on the two graphs: who produced them, where the recompilation sits in
its family, and the family's pattern.

The differ gives every cause a fix from the graphs alone; here it is chosen again with what the run knows. A short
last batch is only "short" when it is the family's last graph; new inputs on the first recompilation of a family
that then settles are an optimizer's warm-up; graphs that each ran once while the program set up need no fix; a
cycle of a handful of variants (gradient accumulation) compiles each variant once. What the run shows beyond the
two graphs is read by :mod:`hlodiff.explain.producing_ops` (the op that made a value),
:mod:`hlodiff.explain.family_values` (the sizes and values over the run), :mod:`hlodiff.explain.static_argument`,
:mod:`hlodiff.explain.after_reads`, :mod:`hlodiff.explain.fix_evidence` (how the graph changed, a library's first
step) and :mod:`hlodiff.explain.first_step_tensors` (tensors made before the loop that the first step computed), where
it sits in its family by :mod:`hlodiff.explain.family_order`; the decision itself is
:func:`hlodiff.diff.fixes.decide`.
"""

from __future__ import annotations


from dataclasses import replace

from hlodiff.diff.origin_facts import transposed_input
from hlodiff.dumps.source_lines import NoSources, SourceLines
from hlodiff.diff.fix_stance import FixStance
from hlodiff.diff.library_reads import library_read
from hlodiff.diff.fixes import FixContext, added_inputs, decide, set_fix, sibling_kind
from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.explain.accumulation import optimizer_in_cycle, rotation
from hlodiff.explain.cause_facts import swaps_path
from hlodiff.explain.families import is_partial, is_sync_frame
from hlodiff.explain.family_buckets import counts_from_of, family_verdicts, grown_in_graph
from hlodiff.explain.returned_dtype import promoted_output_line
from hlodiff.explain.after_reads import branch_lines, graphs_after_reads, read_chose_ops, reads_condition
from hlodiff.explain.family_order import (block_repeats, ops_added_each_step, comes_back, family_runs, first_recompilation, held,
                                          last_of_each_round, never_returns, settles_first, stays, switch_stays)
from hlodiff.explain.family_values import family_constants, family_first_types, family_sizes, grows
from hlodiff.explain.first_step_tensors import first_step_made, materialized
from hlodiff.explain.fix_evidence import (graph_grows, inputs_repeat, joins_grow, library_step, only_added,
                                          ops_use_new_inputs, family_reads_pile_up, scalars_grow, slices_rearranged, state_returned,
                                          updated_in_place, updates_removed, trains_new_tensors, gradient_op_added,
                                          new_inputs_feed_step,
                                          donors_trained, donors_updated)
from hlodiff.explain.library_branches import library_branch, library_start
from hlodiff.explain.update_dropped import update_dropped
from hlodiff.explain.producing_ops import family_ops
from hlodiff.explain.static_argument import (inputs_sized_by, ops_repeat_per_count, slice_start_only, static_structure,
                                             trip_count_changed)
from hlodiff.explain.after_sync import made_after_sync
from hlodiff.explain.running_values import carried_scalar
from hlodiff.explain.optimizer_state import reads_state_begun_late, state_begun_late, state_reset
from hlodiff.explain.patterns import Pattern
from hlodiff.explain.producer import producer
from hlodiff.explain.resized_input import resized_input
from hlodiff.explain.added_parameters import parameters_added, state_added
from hlodiff.explain.batch_rows import batch_rows
from hlodiff.diff.input_formats import dot_shapes
from hlodiff.explain.rng_seed import seed_update_only
from hlodiff.explain.stayed_grown import stayed_grown


def apply_run_fixes(recompilations, patterns: dict[str, Pattern], sources: SourceLines | None = None) -> None:
    """Set ``fix`` (and ``fix_rule``) on every cause of every recompilation; ``patterns`` maps family keys to their
    pattern. A cause whose fix its maker wrote from facts only it knew (``fix_is_final``) keeps it. ``sources``: the
    run's Python files, for what only a line of code tells (none: nothing read)."""
    sources = sources if sources is not None else NoSources()
    sizes, baked = family_sizes(recompilations), family_constants(recompilations)
    bucketed = {key for key, found in family_verdicts(recompilations).items() if found == "expected"}
    # round 33: a table extended for one long batch and kept: the data's size came back and compiled again, so the
    # sizes are no buckets "each compiled once", whatever their values
    stayed = {key: stayed_grown(family) for key, family in {r.family.key: r.family for r in recompilations}.items()}
    bucketed -= {key for key, fact in stayed.items() if fact is not None}
    # once per family: the values are the family's. A dump of compilations only (an XLA dump folder) cannot show
    # growth: 5, 7, 9 compiled while 5, 5, 7, 5, 9, 7 ran; the bucket plan's verdict reads it the same way.
    families = {r.family.key: r.family for r in recompilations}
    of_family: dict[str, list] = {}  # each family's recompilations, in order: grouped once, not filtered per family
    for r in recompilations:
        of_family.setdefault(r.family.key, []).append(r)
    seen_all = {key: counts_from_of(family) == "executions" for key, family in families.items()}
    # growth also needs every size left behind: 24, 28, 32 compiled while 24, 28, 24, 32, 24 ran recur, not grow
    onward = {key: never_returns(family) for key, family in families.items()}
    # review 12 F3: 16,16,16,24,24,24,32,32,32 ran: each size held for several steps, a schedule, not growth
    schedule = {key: seen_all.get(key, True) and onward.get(key, True) and held(family)
                for key, family in families.items()}
    growing = {key: grows(seq) and seen_all.get(key, True) and onward.get(key, True) for key, seq in sizes.items()}
    growing_baked = {key: grows(seq) and onward.get(key, True) for key, seq in baked.items()}
    made_by = family_ops(recompilations)
    # crossings round 6: a jitted function concatenating onto an argument it hands back, sizes new and larger at
    # every compilation (0, 8, ..., 40): grown by the graph itself, though a log of compilations cannot show growth
    grown_by_graph = grown_in_graph(recompilations)
    # review 12 F6: a family whose later graphs change a scatter's size (F.one_hot without num_classes) after an
    # early read: the read's own cause names that scatter too, so the headline says what the live line said
    scatter_sized = {key for key, rs in of_family.items()
                     if any("scatter" in made_by[id(x)] and any(c.kind == "shape" for c in x.causes) for x in rs)}
    repeats = {key: block_repeats(members) for key, members in of_family.items()}
    each_step = {key: ops_added_each_step(members) for key, members in of_family.items()}
    # what the whole graphs of a family (no early read in them) changed: sizes, or only which ops run
    whole_kinds: dict[str, set[str]] = {}
    for r in recompilations:
        if r.causes and not any(c.kind == "partial" for c in r.causes):
            whole_kinds.setdefault(r.family.key, set()).update(c.kind for c in r.causes if not _constant_type(c))
    first_types = family_first_types(recompilations)
    library_reads = {key: family_library_read(family) for key, family in families.items()}
    runs = family_runs(recompilations)
    accumulating = {key: optimizer_in_cycle(of_family[key], pattern.period, runs[id(fam)][0])
                    for key, pattern, fam in _families_with_patterns(recompilations, patterns)}
    rotating = {key: rotation(runs[id(fam)][0], pattern.period, accumulating.get(key, False))
                for key, pattern, fam in _families_with_patterns(recompilations, patterns)}
    closest_of = {id(r.graph): r.closest for r in recompilations}
    final = _final_call(recompilations, patterns)
    started: dict[int, str] = {}  # a library's start over several steps (SWA's), by recompilation
    for key, rs in of_family.items():
        ids, words = library_start(rs, runs[id(rs[0].family)][0])
        started.update(dict.fromkeys(ids, words))
    rows_cut = {id(r): _rows_cut(r, sources) for r in recompilations}
    for r in recompilations:
        members, compiled = runs[id(r.family)]
        base = fix_context(r, patterns.get(r.family.key), members, compiled)
        context = replace(
            base, settles=base.settles or (len(compiled) > 2 and compiled[1] is r.graph
                                           and closest_of.get(id(compiled[2])) is r.graph
                                           and settles_first(members, r.graph)),
            cut=any(c.kind == "partial" for c in r.causes),
            state_begun_late=state_begun_late(r, of_family[r.family.key]),
            reads_state_begun_late=reads_state_begun_late(r, of_family[r.family.key]),
            state_reset=state_reset(r, members),
            cpu_fallback=any(c.kind == "partial" and c.reason == "fallback" for c in r.causes),
            anomaly_check=any(c.kind == "partial" and c.reason == "anomaly_check" for c in r.causes),
            added_inputs=added_inputs(r.causes), ops=made_by[id(r)] | _mask_cut(r),
            transposed_input=any(c.kind == "inputs" and transposed_input(c) for c in r.causes),
            new_function=any(c.fix_rule in ("cache_key_new_function", "cache_key_caches_cleared") for c in r.causes),
            ops_use_new_inputs=ops_use_new_inputs(r), final_call=r is final,
            # round 8 (spmd_load_state_mid): graphs of 166, 170, 174 instructions compiled at steps 0, 1 and 4 of
            # an XLA dump read without its executions; "every step compiles" needs the executions seen
            graph_grows=graph_grows(*runs[id(r.family)]) if seen_all.get(r.family.key, True) else (),
            scalars_grow=scalars_grow(runs[id(r.family)][1]), joins_grow=joins_grow(r),
            reads_pile_up=family_reads_pile_up(r.family) if seen_all.get(r.family.key, True) else False,
            inputs_repeat=inputs_repeat(r), resized_input=resized_input(r), batch_rows=batch_rows(r),
            rows_sliced=rows_cut[id(r)] == "slice", rows_filtered=rows_cut[id(r)] == "filter", dot_shapes=dot_shapes(r.graph), slices_rearranged=slices_rearranged(r), state_returned=state_returned(r),
            none_leaf=any(c.reason == "pytree" and c.none_leaf for c in r.causes),
            list_length=list_length(r.causes),
            params_added=parameters_added(r) and trains_new_tensors(r), state_added=state_added(r),
            updated_in_place=updated_in_place(r), trains=trains_new_tensors(r), gradient_added=gradient_op_added(r),
            feeds_step=new_inputs_feed_step(r), updates_removed=updates_removed(r), update_dropped=update_dropped(r), carried_scalar=carried_scalar(r),
            donors_updated=donors_updated(r), donors_trained=donors_trained(r),
            compilations_only=not seen_all.get(r.family.key, True), only_added=only_added(r),
            optimizer_in_cycle=accumulating.get(r.family.key, False), rotation=rotating.get(r.family.key, False),
            path_swap=path_swap(r, patterns.get(r.family.key)), made_after_sync=made_after_sync(r),
            read_condition=reads_condition(r.family) if any(c.kind == "partial" for c in r.causes) else False,
            read_in_condition=_read_in_condition(r.causes, sources),
            read_sets_trace=graphs_after_reads(r.family), library_read=library_reads.get(r.family.key, "") or _cut_library_read(r.causes), first_type=first_types.get(r.family.key, ""),
            read_branch=_read_branch(whole_kinds.get(r.family.key, set()), r.family),
            branch_lines=branch_lines(r.family) if any(c.kind == "partial" for c in r.causes) else "", block_repeats=repeats.get(r.family.key, ""),
            ops_each_step=each_step.get(r.family.key, ""),
            structure="a loop's trip count" if producer(r.graph) == "jax" and trip_count_changed(r) else "")
        family_sizes_seen = sizes.get(r.family.key, ())
        for cause in r.causes:
            if cause.fix_is_final:
                continue
            seen = (family_sizes_seen if cause.kind in ("shape", "attribute") and not _packed_random_bits(cause)
                    else baked.get(r.family.key, ()) if cause.kind == "constant" else ())
            growth = (growing.get(r.family.key, False) if seen is family_sizes_seen or not seen
                      else growing_baked.get(r.family.key, False)) and not schedule.get(r.family.key, False)
            own = context
            if cause.kind == "dtype" and producer(r.graph) == "jax":
                own = replace(own, promoted_at=promoted_output_line(r))
            if cause.kind == "partial" and r.family.key in scatter_sized:
                own = replace(own, ops=own.ops | {"scatter"})
            if cause.kind == "shape" and producer(r.graph) == "jax" and (
                    _fed_its_own_concatenation(cause, sources) or r.family.key in grown_by_graph):
                # the line that made the argument concatenates onto it in a loop: it grows every call, though a
                # log of compilations alone cannot show it (review 8, F9)
                growth, own = True, replace(context, ops=context.ops | {"cat"})
            set_fix(cause, replace(
                own, others=tuple(sibling_kind(c) for c in r.causes if c is not cause), values=seen,
                grows=growth, buckets=r.family.key in bucketed,
                **_stayed_facts(stayed.get(r.family.key), cause),
                size_schedule=schedule.get(r.family.key, False) and cause.kind == "shape", rng_seed_update=seed_update_only(r, cause),
                library=library_step(cause, context), library_branch=library_branch(cause),
                library_start=started.get(id(r), "")))
            _call_first_when_expected(cause)
        r.causes.sort(key=_follows)  # stable: what a cause follows from is printed (and headlined) first


def _stayed_facts(fact, cause) -> dict:
    """Round 33: the grown input's change gets ``stayed_grown`` (``16 -> 32``); the data's own change in that
    family (the long batch itself, compiled once for its size) gets ``stayed_other``, so the story leads with the
    input that stayed grown."""
    if fact is None or cause.kind != "shape":
        return {}
    words = f"{fact.grown_from} -> {fact.grown_to}"
    return {"stayed_grown": words} if fact.names_grown(cause) else {"stayed_other": words}


def _call_first_when_expected(cause) -> None:
    """An expected answer (a final evaluation's one compilation for its size) leads with the call that compiled,
    not the line that made the argument: nothing is to change there, and the call is the event the story names
    (tenth stop, jax_final_eval_size: the 50-row test set's line :32 led, the final call :33 is what the user
    reads). A fix to make keeps the making line first (where the size or dtype is chosen)."""
    made = cause.made_at
    if made is None or cause.fix_rule not in EXPECTED or len(cause.locations) < 2 or cause.locations[0] != made:
        return
    cause.locations = [cause.locations[1], made, *cause.locations[2:]]


def _final_call(recompilations, patterns: dict[str, Pattern]):
    """Round 8 (jax_final_eval_size): the run's last recompilation of a user's function (eager operations
    aside), when its family compiled exactly twice: ``predict`` compiled for batches of 8 all run long, then once
    for the 50 rows of the held-out set after training. None otherwise (several families end together: no order)."""
    mine = [r for r in recompilations
            if (patterns.get(r.family.key) is None or patterns[r.family.key].name != "eager op")]
    if not mine:
        return None
    order = [getattr(r.graph.record, "module_number", None) for r in mine]
    if None in order or len(set(order)) != len(order):
        return None
    last = max(mine, key=lambda r: r.graph.record.module_number)
    return last if len(last.family.compiled) == 2 else None


def _fed_its_own_concatenation(cause, sources: SourceLines) -> bool:
    """The cause's first line of the user's (where JAX's argument was made) concatenates onto that argument in a
    loop (:meth:`hlodiff.dumps.source_lines.SourceLines.fed_its_own_concatenation`, when the file is on disk)."""
    first = next((f for f in cause.locations if not f.is_library), None)
    return first is not None and sources.fed_its_own_concatenation(first.file, first.line)


def _rows_cut(r, sources: SourceLines) -> str:
    """How a JAX shape cause's arguments are cut from the data at its lines of the user's on disk (``slice``,
    ``filter``, or ""): a leading dimension that shrank in a log of compilations says neither (stop 51)."""
    if producer(r.graph) != "jax":
        return ""
    kinds = {sources.rows_cut_by(f.file, f.line) for c in r.causes if c.kind == "shape"
             for f in c.locations if not f.is_library and f.file}
    return "filter" if "filter" in kinds else "slice" if "slice" in kinds else ""


def _read_in_condition(causes, sources: SourceLines) -> bool:
    """An early read's line of the user's is the test of an ``if``/``while`` in the source on disk (``if
    loss.item() > 1e6: continue``): the comparison is in Python, so the cut graph hands back a number, not the
    boolean :func:`reads_condition` looks for, yet the value still decides whether the step runs (review 14, F1).
    False when no source is on disk (the capture alone cannot tell a comparison from a logged value)."""
    for cause in causes:
        if cause.kind != "partial":
            continue
        first = next((f for f in cause.locations if not f.is_library), None)
        if first is not None and sources.read_in_condition(first.file, first.line):
            return True
    return False


def list_length(causes) -> str:
    """``"list:1 -> 2"`` when JAX's pytree reason says an argument's list (tuple) changed length, else ""."""
    return next((c.list_length for c in causes if c.reason == "pytree" and c.list_length), "")


def _cut_library_read(causes) -> str:
    """The library read that cut the step this graph finishes (a remainder's cut is in another family: Dynamo round
    24, save_on_cpu's pack hook), or ""."""
    return next((c.library_read for c in causes if c.kind == "partial" and c.library_read), "")


def family_library_read(family) -> str:
    """The name of the library read (:mod:`hlodiff.diff.library_reads`) that made every early read of the family,
    or "" when any early read is the user's own (or no stack says). Review F10: torch_xla's clip_grad_norm_."""
    rows = set()
    for g in family.members:
        if g.record.frames and is_partial(g):
            row = library_read(g.record.frames)
            if row is None:
                return ""
            rows.add(row.name)
    return min(rows) if len(rows) == 1 else ""


def _families_with_patterns(recompilations, patterns: dict[str, Pattern]):
    """(key, pattern, family) once per family of ``recompilations`` that has a pattern."""
    seen = {}
    for r in recompilations:
        if r.family.key not in seen and patterns.get(r.family.key) is not None:
            seen[r.family.key] = (r.family.key, patterns[r.family.key], r.family)
    return list(seen.values())


_RNG_BITS = frozenset({"rng-bit-generator", "rng-get-and-update-state"})


def _packed_random_bits(cause) -> bool:
    """The size change is first seen on XLA's random bits (torch.randn(2, 8) draws u32[1,2,8], one row u32[1,4,2]):
    their dims and the broadcasts after them are XLA's packing, not the user's sizes, so the fix quotes none
    (review F6: "(1, 4)" for batches of 2 and 1)."""
    first = next((o for o in cause.origins if o.left is not None and o.right is not None), None)
    return first is not None and first.left.opcode in _RNG_BITS


def _read_branch(kinds: set[str], family) -> bool:
    """What a value read early decided was a branch: the whole graphs differ in ops only, or (no size, attribute
    or type changed between them) the graphs after the reads all use the same sizes (review 10, F2)."""
    return _only_ops(kinds) or (not kinds & {"shape", "attribute", "dtype"} and read_chose_ops(family))


def _constant_type(cause) -> bool:
    """A type change on constants only (an int count's constant s64 where a mean's is s32): what two branches
    compute differently, no type of an input or a value the step carries (round 31, r31_tx_mask_any_branch: the
    positives' count against the batch size)."""
    changes = [ch.left or ch.right for ch in cause.origins]
    return cause.kind == "dtype" and bool(changes) and all(
        i is not None and i.opcode == "constant" for i in changes)


def _only_ops(kinds: set[str]) -> bool:
    """The whole graphs differ in which ops run, never in a size: what a value read early decided was a branch."""
    return "ops" in kinds and not kinds & {"shape", "attribute", "dtype", "constant"}


RECUR = ("alternating", "periodic", "recurring", "one-off")  # the other graph came back (one-off: A,B,A)


def path_swap(r, pattern) -> bool:
    """The family's graphs recur (or only two are known yet, live) and this recompilation's shape change on a
    parameter comes with many instructions
    added and many removed (:func:`hlodiff.explain.cause_graph.swaps_path`): another code path (head, loss)
    replaced the one compared with."""
    # live, at the second graph, no pattern can say yet whether it comes back: the evidence of the swap decides
    if pattern is not None and pattern.name not in RECUR and pattern.graphs > 2:
        return False
    return any(swaps_path(c) for c in r.causes)


def _follows(cause) -> bool:
    return cause.fix_stance is FixStance.FOLLOWS


def fix_context(r, pattern: Pattern | None = None, members: list | None = None,
                compiled: list | None = None) -> FixContext:
    """``members`` (the family's whole graphs) and ``compiled`` may be given when known: a family of thousands of
    recompilations would otherwise walk all its graphs for each of them."""
    members = [g for g in r.family.members if not is_partial(g)] if members is None else members
    compiled = r.family.compiled if compiled is None else compiled
    settles = len(compiled) == 2 and len(members) >= 3 and stays(members, r.graph)
    name = pattern.name if pattern is not None else ""
    period = pattern.period if pattern is not None else 0
    return FixContext(producer=producer(r.graph), last_in_family=bool(members) and members[-1] is r.graph,
                      settles=settles, first_recompilation=first_recompilation(compiled, r.graph),
                      setup=name == "setup", period=period, eager=name == "eager op", pattern=name,
                      second_step=len(members) > 1 and members[1] is r.graph,
                      materialized=len(members) > 1 and members[1] is r.graph and materialized(r),
                      first_step_made=len(members) > 1 and members[1] is r.graph and not comes_back(members, r)
                      and first_step_made(r),
                      hlo_identical=bool(r.diff is not None and r.diff.equal), entries=_entries(r),
                      comes_back=comes_back(members, r), stays=switch_stays(members, r),
                      short_run=len(members) <= 2, last_each_round=last_of_each_round(members, r.graph, period),
                      variant_steps=tuple(
                          i for i, g in enumerate(members) if g.cache_key == r.graph.cache_key),
                      sync_at=_sync_at(r.graph))


def _sync_at(graph):
    """The user's line of the sync that ran ``graph`` (a whole step's graph), None for a graph a read ran."""
    frames = graph.record.frames
    return graph.trigger if frames and any(is_sync_frame(f) for f in frames) else None


def static_argument_fix(cause, r, argument: str, values: tuple[str, ...], pair: tuple[str, ...] = (),
                        nondiff: str = "", loop_counter: bool = False, axes_passed: bool | None = None):
    """The fix for a static argument JAX named, from what it changed in the graph: nothing (only Python reads it),
    values (a baked constant: tracing it is right), or the program's structure (a loop's trip count, shapes, the
    ops a Python `if` traces), which JAX requires static: then reduce the values, never "make it traced"."""
    kinds = {c.kind for c in r.causes}
    loop_only = trip_count_changed(r) and not kinds & {"shape", "ops", "inputs", "outputs", "attribute"}
    unrolled = len(pair) == 2 and ops_repeat_per_count(r, *pair)
    branch = bool(kinds & {"ops", "inputs", "outputs"}) and not kinds & {"shape", "attribute"} \
        and not trip_count_changed(r) and not unrolled
    context = FixContext(producer="jax", argument=argument, values=values, structure=static_structure(r),
                         loop_count_only=loop_only, unrolled_loop=unrolled, branch_on_static=branch,
                         hlo_identical=bool(r.diff is not None and r.diff.equal), entries=_entries(r),
                         slice_start=slice_start_only(r), nondiff_callee=nondiff, loop_counter=loop_counter,
                         inputs_follow=inputs_sized_by(r, pair or values[:2]),
                         value_remade=value_remade(pair, values, len(r.family.compiled)),
                         axes_passed=axes_passed)
    return decide(cause, context)


def value_remade(pair: tuple[str, ...], values: tuple[str, ...], compilations: int) -> bool:
    """A static value made again, not a few values each kept (last read of the twelfth stop, lr_jx_two_partials):
    one miss shows the same printed value on both sides, or the function compiled more often than it saw distinct
    printed values. Two partials made once and passed in turn compile once each: 2 values, 2 compilations."""
    if len(pair) == 2 and pair[0].strip() == pair[1].strip():
        return True
    return compilations > len({v.strip() for v in values})


def _entries(r) -> frozenset[str]:
    """The entry computations' names of both graphs: where a changed parameter is an argument of the program."""
    return frozenset(g._canonical.entry.name for g in (r.closest, r.graph)
                     if g is not None and getattr(g, "_canonical", None) is not None)


def _mask_cut(r) -> frozenset[str]:
    """``{"nonzero"}`` when a cut of this recompilation ran early for a mask's values (its early graph hands back a
    boolean tensor: :func:`hlodiff.explain.cuts.cut_reason`), whatever the comparisons show: a step's first cut of a
    live run, compared with another early graph only, shows no index input yet (round 30, r30_tx_moe_where_route:
    `torch.where(assign == e)` per expert, told "read it after the sync" live)."""
    return frozenset({"nonzero"}) if any(c.kind == "partial" and c.reason == "data_dependent"
                                         for c in r.causes) else frozenset()
