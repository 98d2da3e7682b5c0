"""Why did this run compile again? Over a run's dumps: which graphs compiled, and for each recompilation the
closest earlier graph of its family, the causes in the shared vocabulary, the user's line, and (when captured)
the live tensors behind added or removed outputs and the PT_XLA_DEBUG record of the compilation.

Only compiled graphs are parsed: cache hits share their compiled graph's facts, so a 1 GB dump of 250 graphs with
3 cache keys costs three parses, not 250.
"""

from __future__ import annotations

from dataclasses import replace

from hlodiff._runtime import sparse_collections
from hlodiff import progress
from hlodiff.diff import ModuleDiff, diff_canonical
from hlodiff.diff.model import Cause
from hlodiff.dumps.debug_log import CompilationEvent
from hlodiff.dumps.evidence import Run
from hlodiff.dumps.graph_record import TRACED_KINDS, GraphRecord
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.explain.fix_context import apply_run_fixes
from hlodiff.explain.first_step_tensors import place_created_tensors, place_made_tensors
from hlodiff.explain.grown_lines import place_grown_tensors
from hlodiff.explain.after_sync import read_after_sync
from hlodiff.explain.families import bridge_graph, Family, group, is_partial, place_inputs_at_compiled_call
from hlodiff.explain.candidates import POOL, Candidates
from hlodiff.explain.positions import Positions
from hlodiff.explain.inventory import GraphSummary, summarize
from hlodiff.explain.decision_line import place_decisions, place_dynamo_decisions
from hlodiff.explain.setting_lines import place_setting_lines
from hlodiff.explain.dynamo_backends import place_other_backends
from hlodiff.explain.dynamo_converted import converted_after_compile
from hlodiff.explain.dynamo_call_line import place_bridge_inputs_at_calls, place_dynamo_calls
from hlodiff.explain.dynamo_parametrized import mark_parametrized
from hlodiff.explain.dynamo_branch_only import mark_branch_only
from hlodiff.explain.dynamo_grown_cat import mark_grown_in_source
from hlodiff.explain.dynamo_detach_pair import mark_detached_pairs
from hlodiff.explain.dynamo_uneven_chunks import mark_uneven_chunks
from hlodiff.explain.dynamo_instance_attrs import mark_per_instance
from hlodiff.explain.jax_causes import jax_compilations, merge_jax, static_values
from hlodiff.explain.jax_contexts import contexts_by_line
from hlodiff.explain.jax_functions import function_splits, same_name_doubts
from hlodiff.explain.cache_loads import loaded_refs
from hlodiff.explain.locate import OUTSIDE_KINDS, hint_for, locate_carried, output_tensors, outputs_added_removed
from hlodiff.explain.outside import option_causes, same_computation_causes
from hlodiff.explain.pair_lines import locate_lines
from hlodiff.explain.library_call_lines import instruction_files, place_library_calls, place_library_entries
from hlodiff.explain.optimizer_state_lines import place_state_begun
from hlodiff.explain.sibling_lines import place_from_siblings
from hlodiff.explain.layers_joined_lines import place_joined_layers
from hlodiff.explain.family_buckets import attach_plans
from hlodiff.explain.compile_cost import compile_time_note
from hlodiff.explain.later_lines import borrow_later_reports
from hlodiff.explain.lineless_inputs import place_lineless_inputs
from hlodiff.explain.live_tensors import aligned_reports
from hlodiff.explain.cuts import cut_follows, partial_cause, remainder_cause, same_cut
from hlodiff.explain.dynamo import explain_dynamo
from hlodiff.explain.dynamo_bridge import bridge_run
from hlodiff.explain.dynamo_bridge_words import bridge_own_patterns
from hlodiff.explain.dynamo_compile_steps import compile_time_families, compile_time_patterns
from hlodiff.explain.modes import mode_cause, mode_switch
from hlodiff.explain.cause_graph import Evidence, link
from hlodiff.explain.explanation import Recompilation, RunExplanation, TensorNote
from hlodiff.explain.headline import headline_of
from hlodiff.explain.pattern_words import pattern_text
from hlodiff.explain.patterns import Pattern, pattern_of
from hlodiff.explain.run_summary import cut_note, run_counts, run_hints, summary_line, unread_note
from hlodiff.explain.stories import tell
from hlodiff.graph import Normalization


# -- analysis ---------------------------------------------------------------------------------------------------------


def explain_run(run: Run, warnings: list[InputWarning], options: Normalization = Normalization()) -> RunExplanation:
    """The whole explanation of one run's evidence (:func:`hlodiff.dumps.evidence.read_run`): the graphs, then
    Dynamo's side of it when its log is there, then what compiling cost."""
    with sparse_collections():
        explanation = explain_records(run, options, warnings=warnings)
    # issue 31: Dynamo's reason leads, joined to the graphs
    explanation.dynamo = explain_dynamo(run.dynamo_logs or [], explanation, run.events, warnings,
                                        logs=run.read_dynamo(warnings) if run.dynamo_logs else [],
                                        empty_logs=run.empty_logs)
    if explanation.dynamo is not None:
        users = user_files(explanation)
        place_dynamo_decisions(explanation.dynamo, run.sources, users)
        mark_per_instance(explanation.dynamo, run.sources, users)
        mark_parametrized(explanation.dynamo, run.sources, users)
        mark_branch_only(explanation.dynamo, run.sources)  # review 17, F1
        mark_uneven_chunks(explanation.dynamo, run.sources)  # round 31: micro-batches by chunk
        mark_detached_pairs(explanation.dynamo, run.sources)  # round 32: X and X.detach() to one compiled module
        mark_grown_in_source(explanation.dynamo, run.sources, users)  # round 31: a queue grown by cat
        place_dynamo_calls(explanation.dynamo, run.sources, users)
        place_other_backends(explanation.dynamo, run.sources, users)  # round 30: no failed guard, two backends
        place_bridge_inputs_at_calls(explanation.dynamo, explanation.recompilations)  # review 15, F8
        explanation.dynamo.converted = converted_after_compile(explanation, explanation.dynamo, run.sources, users)
        explanation.summary = f"{explanation.dynamo.sentence()}. XLA: {explanation.dynamo.xla_summary(explanation)}"
        bridge_own_patterns(explanation)
    at_compiles = compile_time_families(explanation)  # review 19, F4: the bridge's graphs of Dynamo's compiles only
    compile_time_patterns(explanation, at_compiles)
    eager = {f.key for f, p in zip(explanation.families, explanation.pattern_facts) if p.name == "eager op"}
    # JAX's eager ops compile once per shape and are no recompilation of a step (review 4, F8: "0 recompilations
    # ... recompilations cost 0.15 s"): their seconds count as compiling, not as recompiling
    note = compile_time_note(explanation.graphs, [r.graph for r in explanation.recompilations
                                                  if r.family.key not in eager], run, set(explanation.loaded))
    attach_plans(explanation, run, skip=at_compiles)
    if note:
        explanation.summary += f"; {note}"
    return explanation


def user_files(explanation) -> list[str]:
    """The user's files the XLA graphs' frames name, in order (where a Dynamo decision's line is looked for). When
    every execution stack ends in torch.compile's bridge (a compiled module called under ``torch.no_grad()``: the
    user's own syncs run nothing; review 17, C2 by hand), the files the compiled graphs' instructions name (the
    inputs made in the user's loop) stand in."""
    files: dict[str, None] = {}
    for g in explanation.graphs:
        for f in g.record.frames or ():  # None: a compilation the PT_XLA_DEBUG log never announced
            if not f.is_library and f.file:
                files.setdefault(f.file)
    return list(files) or instruction_files([g for g in explanation.graphs if g.compiled])


def explain_records(run: Run | list[GraphRecord], options: Normalization = Normalization(), *,
                    reports: dict | None = None, events: dict[str, CompilationEvent] | None = None,
                    warnings: list[InputWarning] | None = None) -> RunExplanation:
    """The analysis proper, over a run's evidence (or bare records, the entries one test produced: their protos and
    option files are still read from beside them, nothing else).

    ``reports`` maps (save file, entry index) to live-tensor reports, ``events`` graph hashes to PT_XLA_DEBUG
    compilations (both added to the run's own); the run's report files are aligned with the graphs here.
    """
    if not isinstance(run, Run):
        run = Run(list(run))
    records = run.records
    reports = {**run.reports, **(reports or {})}
    events = {**run.events, **(events or {})}
    unread: list[GraphRecord] = []
    graphs = summarize(records, options, keep=True, parse_hits=False, warnings=warnings, unread=unread,
                       protos=run.protos())
    if not graphs and not records and getattr(run.inputs, "dynamo_logs", None):
        # Dynamo's log alone (it raised before XLA compiled anything, Dynamo round 12): Dynamo's side tells it
        return RunExplanation([], [], [], "nothing compiled (no XLA dump beside Dynamo's log)", [])
    if not graphs:
        raise HlodiffError("no graph could be read", path=records[0].source if records else None)
    if run.report_files:
        reports = {**reports, **aligned_reports(run, graphs, warnings)[0]}
    reports = borrow_later_reports(graphs, reports)
    # issue 31: a graph the Dynamo bridge ran (compiling or calling a torch.compile graph) is never a cut step
    partial = Positions(len(graphs), (i for i, g in enumerate(graphs) if is_partial(
        g, events[g.record.graph_hash].cause if g.record.graph_hash in events else None) and not bridge_run(
        g.record.frames, events[g.record.graph_hash].cause if g.record.graph_hash in events else None)
        and not (i and read_after_sync(graphs[i - 1], g))))  # round 6: a metric read after the sync, no cut
    cut_sources = {c.source for c in run.cut}  # their sequences stop where the file was cut (review F10)
    joined = jax_compilations(run, graphs, warnings)
    # JAX_EXPLAIN_CACHE_MISSES was on and its compile lines join: a compilation without a miss reused its trace. A
    # join by function name (no compile lines) says nothing of a module it left out: its log was not matched there.
    by_name = any(c.by_name for c in joined.values())
    explained = not by_name and any(c.cache_miss is not None for c in joined.values())
    loaded = loaded_refs(graphs, joined)  # programs a persistent cache gave: not compilations
    families = group(graphs, partial, function_splits(graphs, joined, explained))  # review F5: one name, 2 functions
    order = {id(g): i for i, g in enumerate(graphs) if g.compiled}  # positions of compilations, by identity
    # The graph that finishes a step an early execution cut short: what was already computed is missing from it.
    by_ref = {g.ref: g for g in graphs if g.compiled}
    remainder_of = _remainders(graphs, partial)
    recompilations = []
    bar = progress.task("comparing recompilations", sum(max(len(f.compiled) - 1, 0) for f in families),
                         "graphs")
    candidates = Candidates()
    for family in families:
        compiled = family.compiled
        for position, graph in enumerate(compiled[1:], start=1):
            earlier = compiled[max(0, position - POOL):position]  # a bounded slice: linear in compilations
            recompilation = _explain_one(graph, earlier, family, order[id(graph)] in partial, reports, events,
                                         candidates, run)
            bar.advance()
            cut_follows(recompilation.graph, recompilation.closest, recompilation.causes, order, partial)
            recompilation.mode = mode_switch(recompilation)
            if recompilation.mode is not None:
                recompilation.causes.insert(0, mode_cause(recompilation.mode))
            if id(graph) in remainder_of:
                if same_cut(remainder_of, graph, recompilation.closest, by_ref):
                    recompilation.read_at = remainder_of[id(graph)].trigger
                else:
                    recompilation.causes.insert(0, remainder_cause(remainder_of[id(graph)], by_ref))
            recompilations.append(recompilation)
    bar.close()
    recompilations.sort(key=lambda r: order[id(r.graph)])
    run_values = static_values(recompilations, joined)
    contexts = contexts_by_line([*joined.values(), *run.jax_whole_run()])
    for r in recompilations:
        merge_jax(r, joined.get(r.graph.ref), explained=explained, log_given=bool(run.jax_logs) and (
                  not joined or by_name),
                  sources=run.sources, run_values=run_values, contexts=contexts)
    place_made_tensors(recompilations)
    place_grown_tensors(recompilations)
    facts = [pattern_of(f, recompilations, families, cut=cut_sources) for f in families]
    apply_run_fixes(recompilations, {f.key: p for f, p in zip(families, facts)}, run.sources)
    for r in recompilations:  # the one step that decides what follows from what; the report keeps its order
        r.links = link(r.causes, _evidence(r))
        r.causes[:] = r.links.causes
    place_decisions(recompilations, run.sources)  # the `if`, requires_grad_, device_put: from the source on disk
    place_joined_layers(recompilations, run.sources)  # layers joining mid-run: the loop or `if` that runs them
    place_library_entries(recompilations, run.sources)  # library frames only: the user's one call into it
    place_library_calls(recompilations, run.sources)  # a library function's ops: the user's call of it
    place_setting_lines(recompilations, run.sources)  # a setting's cut no capture locates: its call
    place_state_begun(recompilations)  # optimizer state begun late: at the line of the graph that reads it back
    place_from_siblings(recompilations)  # one change repeated per stage: a line found at one is every one's
    place_created_tensors(recompilations)  # a tensor the first step made: where its ops were traced
    doubts = same_name_doubts(families, joined, explained)  # no JAX log: two functions, or one recompiling?
    for r in recompilations:
        if r.graph.ref in doubts and r.causes:
            lead = r.causes[0]
            words = doubts[r.graph.ref].fix(r.family.module_name, log_given=bool(run.jax_logs))
            lead.write_fix(words)
            lead.fix_is_final = True
    # leading causes may have moved
    facts = [pattern_of(f, recompilations, families, cut=cut_sources) for f in families]
    if loaded:  # programs a persistent cache gave are counted apart (.cache_loads)
        facts = [replace(p, loaded=sum(1 for g in f.members if g.ref in loaded)) for f, p in zip(families, facts)]
    patterns = [pattern_text(p) for p in facts]
    hints = run_hints(graphs, recompilations, reports, reports_given=bool(run.report_files))
    counts = run_counts(graphs, recompilations, facts, families, loaded)
    summary = summary_line(counts, recompilations, facts, families, loaded) + unread_note(unread) + cut_note(run.cut)
    from hlodiff.explain.steps import graph_steps

    stories = tell(_real_story_first(recompilations, families, facts), graph_steps(graphs, families))
    return RunExplanation(graphs, families, recompilations, summary, patterns, hints,
                          headline_of(families, facts, recompilations),
                          [r.ref for r in unread] + [f"{c.source}#{c.index}" for c in run.cut], facts, stories,
                          loaded=[g.ref for g in graphs if g.ref in loaded], counts=counts)


def _evidence(r: Recompilation) -> Evidence:
    left = r.closest._canonical if r.closest is not None else None
    right = r.graph._canonical
    return Evidence(left.entry if left is not None else None, right.entry if right is not None else None)


def _real_story_first(recompilations: list[Recompilation], families: list[Family],
                      facts: list[Pattern]) -> list[Recompilation]:
    """JAX's eager-op compilations (a primitive run outside jit) after the real story."""
    eager = {f.key for f, p in zip(families, facts) if p.name == "eager op"}
    return sorted(recompilations, key=lambda r: r.family.key in eager)


def _remainders(graphs: list[GraphSummary], partial: Positions) -> dict[int, GraphSummary]:
    """{id of the graph that finishes a cut step: the graph cut short}. Never a graph the Dynamo bridge ran: it runs
    Dynamo's graph whole, a read before it cut nothing of it (review 8 F3, tc_varlen: the bridge's forward told "the
    rest of a step" took a boolean-mask fix); the bridge's runs between the cut and the step's sync are passed over
    to that sync (Dynamo round 24, d24_save_on_cpu_steps: a read inside a compiled call's forward, then the bridge's
    backward and input syncs, then the step's sync, whose graph lacks what the read computed)."""
    remainders = {}
    for i in partial:
        j = i + 1
        while j < len(graphs) and j not in partial and bridge_graph(graphs[j]):
            j += 1
        if j < len(graphs) and j not in partial:
            remainders[id(graphs[j])] = graphs[i]
    return remainders


def _explain_one(graph: GraphSummary, earlier: list[GraphSummary], family: Family, partial: bool,
                 reports: dict, events: dict[str, CompilationEvent], candidates: Candidates, run: Run
                 ) -> Recompilation:
    closest = candidates.closest(graph, earlier)  # ranked by cheap signatures; only the winner is diffed
    diff = diff_canonical(closest._canonical, graph._canonical)
    options = option_causes(closest, graph, run.module_options)
    causes = list(diff.causes) if not diff.equal else same_computation_causes(diff, closest, graph, options)
    causes += options
    if diff.equal:
        for cause in causes:
            if cause.kind in OUTSIDE_KINDS | {"layout"} and not cause.hlo_identical:
                cause.summary, cause.hlo_identical = "the HLO is identical; " + cause.summary, True
    if partial:
        causes.insert(0, partial_cause(graph, closest, events.get(graph.record.graph_hash or "")))
    notes = _tensor_notes(diff, closest, graph, reports)
    locate_lines(causes, diff, closest, graph, reports, run.sources)  # the same lines `compare` finds (review 19 F7)
    locate_carried(causes, graph, family.members, earlier)
    place_lineless_inputs(causes, closest, graph, run.sources)  # review 20, F1: not where the earlier value was made
    place_inputs_at_compiled_call(causes, graph)  # issue 31: torch_xla.compile's input came from its call
    # Options are set where a function is jitted or in the environment, not where it is called: no call site.
    outside = [c for c in causes if c.kind in OUTSIDE_KINDS and not c.locations and c.kind != "compile_options"]
    # An argument's sharding is chosen by the caller (device_put before the call), not inside the function.
    placed = [c for c in causes if c.kind == "sharding" and _on_a_parameter(c) and graph.record.kind not in TRACED_KINDS]
    # where the user's code ran the graph: torch_xla's sync line, or the line that called a jitted function
    where = graph.trigger if outside or placed else None
    for cause in causes:
        if where is not None and any(cause is c for c in outside):
            cause.locations = [where]
        if where is not None and any(cause is c for c in placed) and where not in cause.locations:
            cause.locations = [where]
            cause.callers = {}
        cause.hint = hint_for(cause, graph, has_reports=bool(reports)) or cause.hint
    _callers_of_this_execution(causes, graph)
    return Recompilation(graph, closest, family, causes, diff, notes, events.get(graph.record.graph_hash or ""))


def _callers_of_this_execution(causes: list[Cause], graph: GraphSummary) -> None:
    """A location's callers come from the stacks recorded when its graph was traced and compiled; torch_xla
    reuses a compiled graph for a later, identical trace from elsewhere (another test calling the same helper),
    and its HLO then holds the first caller. When the execution's own stack (the sync's frames) passes through the
    location's function, the callers are that stack's user frames outside it."""
    frames = graph.record.frames or ()
    if graph.record.kind not in TRACED_KINDS or not frames:
        return
    for cause in causes:
        for loc in cause.locations:
            if loc not in cause.callers or not loc.function:
                continue
            at = next((i for i, f in enumerate(frames) if f.file == loc.file and f.function == loc.function), None)
            if at is not None:
                cause.callers[loc] = tuple(f for f in frames[at + 1:] if not f.is_library)


def _on_a_parameter(cause: Cause) -> bool:
    """The graph's own cause names an entry parameter whose sharding changed (an input's, placed by the caller)."""
    named = cause.named
    side = named.right or named.left if named is not None else None
    return side is not None and named.left is not None and named.left.opcode == "parameter" \
        and side.opcode == "parameter"


def _tensor_notes(diff: ModuleDiff, left: GraphSummary, right: GraphSummary, reports: dict) -> list[TensorNote]:
    added, removed = outputs_added_removed(diff)
    moved = [(a, b) for a, b in diff.output_mapping if a != b] if any(c.kind == "reordered" for c in diff.causes) else []
    notes: list[TensorNote] = []
    right_tensors, left_tensors = output_tensors(right, reports), output_tensors(left, reports)
    for j in added:
        if j < len(right_tensors):
            notes.append(TensorNote("right", j, right_tensors[j]))
    for i in removed:
        if i < len(left_tensors):
            notes.append(TensorNote("left", i, left_tensors[i]))
    for _, j in moved[:16]:
        if j < len(right_tensors):
            notes.append(TensorNote("right", j, right_tensors[j]))
    return notes
