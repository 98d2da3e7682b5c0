"""Why did this run compile again? Over a run's dumps: which graphs compiled, and for each recompilation the
closest earlier graph of its family, the causes in the shared vocabulary, the user's line, and (when captured)
the live tensors behind added or removed outputs and the PT_XLA_DEBUG record of the compilation.

Only compiled graphs are parsed: cache hits share their compiled graph's facts, so a 1 GB dump of 250 graphs with
3 cache keys costs three parses, not 250.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hlodiff._runtime import sparse_collections
from hlodiff import progress
from hlodiff.diff import ModuleDiff, diff_canonical
from hlodiff.diff.fix_stance import FixStance
from hlodiff.diff.model import Cause
from hlodiff.diff.library_reads import library_read
from hlodiff.dumps.debug_log import CompilationEvent
from hlodiff.dumps.evidence import Run
from hlodiff.dumps.graph_record import TRACED_KINDS, GraphRecord
from hlodiff.dumps.tensors_report import LiveTensor
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.explain.fix_context import apply_run_fixes, place_made_tensors
from hlodiff.explain.grown_lines import place_grown_tensors
from hlodiff.explain.after_sync import read_after_sync
from hlodiff.explain.families import bridge_graph, Family, group, is_partial, place_inputs_at_compiled_call
from hlodiff.explain.candidates import POOL, Candidates
from hlodiff.explain.positions import Positions
from hlodiff.explain.inventory import GraphSummary, summarize
from hlodiff.explain.decision_line import place_decisions
from hlodiff.explain.jax_causes import jax_compilations, merge_jax, static_values
from hlodiff.explain.jax_functions import function_splits, same_name_doubts
from hlodiff.explain.cache_loads import loaded_clause, loaded_refs
from hlodiff.explain.locate import (OUTSIDE_KINDS, has_source_metadata, hint_for, locate_carried, locate_from_tensors, locate_from_stacks,
                                    output_tensors, outputs_added_removed)
from hlodiff.explain.outside import option_causes, same_computation_causes
from hlodiff.explain.buckets import attach_plans
from hlodiff.explain.compile_cost import compile_time_note
from hlodiff.explain.later_lines import borrow_later_reports
from hlodiff.explain.live_tensors import aligned_reports
from hlodiff.explain.cuts import cut_reason, cut_words
from hlodiff.explain.dynamo import explain_dynamo
from hlodiff.explain.dynamo_bridge import bridge_run
from hlodiff.explain.modes import ModeSwitch, mode_cause, mode_switch
from hlodiff.explain.cause_graph import CauseGraph, Evidence, causes_json, link
from hlodiff.diff.fix_rules import EXPECTED as EXPECTED_RULES
from hlodiff.explain.patterns import Pattern, _in_brief, headline_of, pattern_of, pattern_text
from hlodiff.explain.producer import producer
from hlodiff.explain.stories import Story, tell
from hlodiff.graph import Normalization
from hlodiff.hlo.model import SourceFrame, user_frame



@dataclass(slots=True)
class TensorNote:
    """The live tensor behind a graph output, from the report captured just before the sync."""

    side: str  # "left" or "right"
    output: int
    tensor: LiveTensor

    def to_json(self) -> dict:
        t = self.tensor
        frame = user_frame(t.frames) or (t.frames[0] if t.frames else None)
        roots = t.roots()
        return {"side": self.side, "output": self.output, "tensor_id": t.id, "shape": t.shape_text,
                "ir_op": roots[-1].op if roots else None, "frame": frame.to_json() if frame else None}


@dataclass(slots=True)
class Recompilation:
    graph: GraphSummary
    closest: GraphSummary | None
    family: Family
    causes: list[Cause]
    diff: ModuleDiff | None
    tensors: list[TensorNote] = field(default_factory=list)
    debug: CompilationEvent | None = None
    mode: ModeSwitch | None = None
    """A train step against an eval step of one helper (the ``mode`` cause leads)."""
    links: CauseGraph = field(default_factory=CauseGraph)
    """What follows from what among ``causes`` (which are in its order, folded consequences left out)."""
    read_at: SourceFrame | None = None
    """Both this graph and the one it is compared with finish a step cut by the same early read, at this line: the
    value read decides what differs (``x[:, :int(lengths.max())]``), so the read is the line of the decision."""

    def to_json(self) -> dict:
        return {
            "graph": self.graph.ref,
            "index": self.graph.record.index,
            "closest": self.closest.ref if self.closest else None,
            "family": self.family.label,
            "similarity": round(self.diff.similarity, 4) if self.diff else None,
            "hlo_identical": bool(self.diff.equal) if self.diff else False,
            "causes": causes_json(self.causes, self.links),
            "live_tensors": [t.to_json() for t in self.tensors],
            "mode": {"to": self.mode.to, "rng_ops": self.mode.rng_ops, "updates": self.mode.updates}
            if self.mode else None,
            "debug": _debug_json(self.debug),
            "ignored": [i.to_json() for i in self.diff.ignored] if self.diff else [],
        }


@dataclass(frozen=True, slots=True)
class RunCounts:
    """The counts the run's summary opens with, typed so that a report restating them (Dynamo's XLA side) need not
    read the sentence: graphs, compilations, programs loaded from a persistent cache, and the recompilations the
    summary states (0 when every one was an eager op outside jit)."""

    graphs: int
    compiled: int
    loaded: int
    recompilations: int

    def head(self) -> str:
        g, c, n = self.graphs, self.compiled, self.recompilations
        return (f"{g} graph{'s' if g != 1 else ''}, {c} compilation{'s' if c != 1 else ''}"
                f"{loaded_clause(self.loaded)}, {n} recompilation{'s' if n != 1 else ''}")


@dataclass(slots=True)
class RunExplanation:
    graphs: list[GraphSummary]
    families: list[Family]
    recompilations: list[Recompilation]
    summary: str
    patterns: list[str]
    hints: list[str] = field(default_factory=list)
    headline: Recompilation | None = None
    """The recompilation whose leading cause the summary names: its kind, line and fix head the report."""
    unread: list[str] = field(default_factory=list)
    """Refs of compiled modules that could not be read (cut off while a killed run wrote them): compilations that
    happened, with nothing to say about them."""
    pattern_facts: list[Pattern] = field(default_factory=list)
    """Per family (same order as ``families``), its pattern as facts; ``patterns`` holds them in words."""
    stories: list[Story] = field(default_factory=list)
    """Recompilations sharing a root, told once each."""
    dynamo: "DynamoFindings | None" = None
    """Dynamo's side of a torch.compile run (issue 31: :mod:`hlodiff.explain.dynamo`); None without its log."""
    loaded: list[str] = field(default_factory=list)
    """Refs of the programs loaded from a persistent compilation cache, not compiled (:mod:`.cache_loads`)."""
    counts: RunCounts | None = None
    """The counts ``summary`` opens with; None for an explanation not made by :func:`explain_records`."""

    @property
    def xla_headline(self) -> Recompilation | None:
        """The headline of the graphs alone; with Dynamo's log, not a recompilation of the bridge's graphs (Dynamo's
        reason tells those, issue 31)."""
        if self.dynamo is None or self.headline is None:
            return self.headline
        told = (set(self.dynamo.bridge_recompilations) | set(self.dynamo.first_call_syncs)
                | set(self.dynamo.follows_expected))
        if self.headline.graph.ref not in told:
            return None if _another_program(self.headline) else self.headline
        # Dynamo round 7 (dyn_freeze_backbone): the bridge's own graphs (told by Dynamo) or a first call's cut step
        # headed the graphs; an unexpected change of the user's step elsewhere in the run is still the story
        rest = [r for r in self.recompilations if r.graph.ref not in told]
        other = headline_of(self.families, self.pattern_facts, rest) if rest else None
        if other is None or not other.causes or other.causes[0].fix_rule in EXPECTED_RULES or _another_program(other):
            return None
        pattern = next((p for f, p in zip(self.families, self.pattern_facts) if f is other.family), None)
        return None if pattern is not None and pattern.benign else other

    def to_json(self) -> dict:
        from hlodiff.explain.steps import graph_steps

        steps = graph_steps(self.graphs, self.families)
        return {
            "summary": self.summary,
            "headline": _dynamo_headline_json(self.dynamo) or _headline_json(self.xla_headline),
            "graphs": [_graph_json(g, steps[g.ref]) for g in self.graphs],
            "families": [{"label": f.label, "graphs": [g.ref for g in f.members],
                          "compiled": [g.ref for g in f.compiled],
                          **({"another_function": f.split.to_json()} if f.split is not None else {}),
                          **({"pattern": p.to_json()} if p is not None else {})}
                         for f, p in zip(self.families, _padded(self.pattern_facts, len(self.families)))],
            "patterns": self.patterns,
            "recompilations": [r.to_json() for r in self.recompilations],
            "stories": [s.to_json() for s in self.stories],
            "hints": self.hints,
            "unread": self.unread,
            "loaded_from_cache": self.loaded,
            "dynamo": self.dynamo.to_json() if self.dynamo is not None else None,
        }


def _padded(items: list, n: int) -> list:
    return list(items[:n]) + [None] * (n - len(items))


def _dynamo_headline_json(dynamo) -> dict | None:
    """issue 31: with Dynamo's log, the headline is its failed guard (or graph break) at the user's line."""
    head = dynamo.headline if dynamo is not None else None
    if head is None:
        return None
    return {"graph": getattr(head, "difference_graph", None), "kind": head.kind,
            "location": head.location.to_json() if head.location else None, "fix": head.fix,
            "guard": getattr(getattr(head, "guard", None), "guard", None),
            "compile_id": getattr(head, "compile_id", None)}


def _headline_json(r: Recompilation | None) -> dict | None:
    if r is None or not r.causes:
        return None
    cause = r.causes[0]
    where = cause.locations[0] if cause.locations else None
    return {"graph": r.graph.ref, "kind": cause.kind, "location": where.to_json() if where else None,
            "fix": cause.fix}


def _graph_json(g: GraphSummary, step: int) -> dict:
    return {"index": g.record.index, "ref": g.ref, "name": g.name, "graph_hash": g.record.graph_hash,
            "fingerprint": g.fingerprint, "compiled": g.compiled, "instructions": g.instructions,
            "cache_key": g.cache_key, "trigger": g.trigger.to_json() if g.trigger else None,
            "step": step, "cache_hit_of": None if g.compiled else g.first_ref,
            "parameters": {"count": g.parameters, "bytes": g.parameter_bytes},
            "outputs": {"count": g.outputs, "bytes": g.output_bytes}}


def _debug_json(event: CompilationEvent | None) -> dict | None:
    if event is None:
        return None
    return {"cause": event.cause, "graph_hash": event.graph_hash,
            "frames": [f.to_json() for f in event.frames]}


# -- analysis ---------------------------------------------------------------------------------------------------------


def explain_run(run: Run, warnings: list[InputWarning], options: Normalization = Normalization()) -> RunExplanation:
    """The whole explanation of one run's evidence (:func:`hlodiff.dumps.evidence.read_run`): the graphs, then
    Dynamo's side of it when its log is there, then what compiling cost."""
    with sparse_collections():
        explanation = explain_records(run, options, warnings=warnings)
    # issue 31: Dynamo's reason leads, joined to the graphs
    explanation.dynamo = explain_dynamo(run.dynamo_logs or [], explanation, run.events, warnings,
                                        logs=run.read_dynamo(warnings) if run.dynamo_logs else [])
    if explanation.dynamo is not None:
        explanation.summary = f"{explanation.dynamo.sentence()}. XLA: {explanation.dynamo.xla_summary(explanation)}"
    eager = {f.key for f, p in zip(explanation.families, explanation.pattern_facts) if p.name == "eager op"}
    # JAX's eager ops compile once per shape and are no recompilation of a step (review 4, F8: "0 recompilations
    # ... recompilations cost 0.15 s"): their seconds count as compiling, not as recompiling
    note = compile_time_note(explanation.graphs, [r.graph for r in explanation.recompilations
                                                  if r.family.key not in eager], run, set(explanation.loaded))
    attach_plans(explanation, run)
    if note:
        explanation.summary += f"; {note}"
    return explanation


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
    explained = any(c.cache_miss is not None for c in joined.values())  # JAX_EXPLAIN_CACHE_MISSES was on
    loaded = loaded_refs(graphs, joined)  # programs a persistent cache gave: not compilations
    families = group(graphs, partial, function_splits(graphs, joined, explained))  # review F5: one name, 2 functions
    order = {id(g): i for i, g in enumerate(graphs) if g.compiled}  # positions of compilations, by identity
    # The graph that finishes a step an early execution cut short: what was already computed is missing from it.
    by_ref = {g.ref: g for g in graphs if g.compiled}
    # (never a graph the Dynamo bridge ran: it runs Dynamo's graph whole, a read before it cut nothing of it;
    # review 8 F3, tc_varlen: the bridge's forward told "the rest of a step" took a boolean-mask fix)
    remainder_of = {id(graphs[i + 1]): graphs[i] for i in partial
                    if i + 1 < len(graphs) and i + 1 not in partial and not bridge_graph(graphs[i + 1])}
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
            _cut_follows(recompilation, order, partial)
            recompilation.mode = mode_switch(recompilation)
            if recompilation.mode is not None:
                recompilation.causes.insert(0, mode_cause(recompilation.mode))
            if id(graph) in remainder_of:
                if _same_cut(remainder_of, graph, recompilation.closest, by_ref):
                    recompilation.read_at = remainder_of[id(graph)].trigger
                else:
                    recompilation.causes.insert(0, _remainder_cause(remainder_of[id(graph)], by_ref))
            recompilations.append(recompilation)
    bar.close()
    recompilations.sort(key=lambda r: order[id(r.graph)])
    run_values = static_values(recompilations, joined)
    for r in recompilations:
        merge_jax(r, joined.get(r.graph.ref), explained=explained, log_given=bool(run.jax_logs) and not joined,
                  sources=run.sources, run_values=run_values)
    place_made_tensors(recompilations)
    place_grown_tensors(recompilations)
    facts = [pattern_of(f, recompilations, families, cut=cut_sources) for f in families]
    apply_run_fixes(recompilations, {f.key: p for f, p in zip(families, facts)}, run.sources)
    for r in recompilations:  # the one step that decides what follows from what; the report keeps its order
        r.links = link(r.causes, _evidence(r))
        r.causes[:] = r.links.causes
    place_decisions(recompilations, run.sources)  # the `if`, requires_grad_, device_put: from the source on disk
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
    hints = _hints(graphs, recompilations, reports, reports_given=bool(run.report_files))
    counts = _counts(graphs, recompilations, facts, families, loaded)
    summary = _summary(counts, recompilations, facts, families, loaded) + _unread_note(unread) + _cut_note(run.cut)
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


def _cut_note(cut) -> str:
    """A save-tensors file cut off mid-graph says so where a cut dump module does (review F10): the graph ran
    (compiled or not, its hash is lost with it) and nothing can be said of it."""
    if not cut:
        return ""
    shown = ", ".join(f"#{c.index}" for c in cut)
    return (f"; and {len(cut)} more graph{'s' if len(cut) != 1 else ''} cut off mid-write ({shown}, not read: "
            "the file ends inside it)")


def _unread_note(unread: list[GraphRecord]) -> str:
    if not unread:
        return ""
    modules = ", ".join(str(r.module_number) for r in unread)
    return (f"; and {len(unread)} more compilation{'s' if len(unread) != 1 else ''} whose HLO was cut off "
            f"(module{'s' if len(unread) != 1 else ''} {modules}, not read)")




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
        causes.insert(0, _partial_cause(graph, closest, events.get(graph.record.graph_hash or "")))
    notes = _tensor_notes(diff, closest, graph, reports)
    locate_from_stacks(causes, graph, run.sources)
    locate_from_tensors(causes, diff, closest, graph, reports)
    locate_carried(causes, graph, family.members, earlier)
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
        cause.hint = hint_for(cause, graph, has_reports=bool(reports))
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


def _cut_words(cut: GraphSummary, reason: str) -> str:
    """Why the graph ran early: a library's own read (:mod:`hlodiff.diff.library_reads`) is named, not ".item(),
    print" the user never wrote (review 8: EmbeddingBag's bookkeeping)."""
    row = library_read(cut.record.frames) if reason == "read" else None
    if row is not None:
        return f"{row.call} reads a value on the host inside the library"
    return cut_words(reason)


def _cut_follows(r: Recompilation, order: dict, partial) -> None:
    """An early graph compiled again beside an earlier early graph cut at the same line: the cut is on both sides
    and explains nothing of their difference (review 8, T1: EmbeddingBag's early graph at each new length of the
    ids), so it is no cause of this compilation: what differs (the shape) is told. The cut itself is told where
    it is one, on the graph that finishes the step."""
    closest, at = r.closest, order.get(id(r.graph))
    before = order.get(id(closest)) if closest is not None else None
    if (at is None or before is None or at not in partial or before not in partial or len(r.causes) < 2
            or r.causes[0].kind != "partial" or r.graph.trigger is None or r.graph.trigger != closest.trigger):
        return
    if not r.graph.record.frames or r.graph.record.frames != closest.record.frames:
        return  # the same whole stack, library frames too
    if all(p in partial for p in range(before + 1, at)):  # no step ended between them: two cuts of one step
        return  # (clip_grad_norm_'s isnan, then its isinf, from one frame): each cut is a cause
    if not any(not f.is_library and f.line is not None for f in r.causes[1].locations):
        return  # what differs has no line of the user's (bn_cumulative's 1/n): the cut's line still points there
    del r.causes[0]


def _partial_cause(graph: GraphSummary, closest: GraphSummary, event: CompilationEvent | None) -> Cause:
    trigger = graph.trigger
    how = f" (PT_XLA_DEBUG: {event.cause})" if event is not None and event.cause else ""
    reason = cut_reason(graph)
    summary = (f"graph cut short by an early execution: {graph.instructions} instructions and {graph.outputs} "
               f"output{'s' if graph.outputs != 1 else ''} ran before the step's sync, because "
               f"{_cut_words(graph, reason)}"
               f"{how}")
    return Cause("partial", summary, [trigger] if trigger else [], reason=reason)


def _same_cut(remainder_of: dict, graph: GraphSummary, closest: GraphSummary | None,
              compiled: dict[str, GraphSummary]) -> bool:
    """Both graphs finish a step that the same read cut short (``int(lengths.max())`` each step): the cut explains
    nothing of their difference, which comes from the value read (a slice's length taken from it). A mask's early
    run (a data-dependent cut) keeps its story: the cut is what decides the size there."""
    cut, before = remainder_of.get(id(graph)), remainder_of.get(id(closest)) if closest is not None else None
    return (cut is not None and before is not None and cut.cache_key == before.cache_key
            and cut_reason(cut, compiled) == "read")


def _remainder_cause(cut: GraphSummary, compiled: dict[str, GraphSummary]) -> Cause:
    trigger = cut.trigger
    where = f" at {trigger.short()}" if trigger and trigger.line else ""
    reason = cut_reason(cut, compiled)
    return Cause("partial", f"the rest of a step that an early execution{where} cut short ({cut.ref} ran first, "
                            f"because {_cut_words(cut, reason)}): values it already computed are inputs or missing "
                            "here",
                 [trigger] if trigger else [], reason=reason)


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


def _counts(graphs: list[GraphSummary], recompilations: list[Recompilation], facts: list[Pattern],
            families: list[Family], loaded: set[str] = frozenset()) -> RunCounts:
    """Programs loaded from a persistent cache are counted apart, never as compilations (nor as recompilations: a
    family's second program loaded compiled nothing); eager ops outside jit are no recompilation of the user's."""
    compiled = sum(1 for g in graphs if g.compiled and g.ref not in loaded)
    n = sum(1 for r in recompilations if r.graph.ref not in loaded)
    outside = _outside(recompilations, facts, families, loaded)
    return RunCounts(len(graphs), compiled, len(loaded), 0 if outside and outside == n else n)


def _outside(recompilations: list[Recompilation], facts: list[Pattern], families: list[Family],
             loaded: set[str]) -> int:
    """How many compiled recompilations are JAX's eager ops outside jit."""
    eager = {f.key for f, p in zip(families, facts) if p.name == "eager op"}
    return sum(1 for r in recompilations if r.graph.ref not in loaded and r.family.key in eager)


def _summary(counts: RunCounts, recompilations: list[Recompilation], facts: list[Pattern],
             families: list[Family], loaded: set[str] = frozenset()) -> str:
    """The run in one line: its counts, then its patterns in brief."""
    recompilations = [r for r in recompilations if r.graph.ref not in loaded]
    n = len(recompilations)
    eager = {f.key for f, p in zip(families, facts) if p.name == "eager op"}
    outside = _outside(recompilations, facts, families, loaded)
    # review 5 F6: a recompilation the report itself calls an expected warm-up (Adam's first step) is counted apart
    warm = sum(1 for r in recompilations if r.family.key not in eager and r.causes and
               r.causes[0].fix_stance is FixStance.WARMUP)
    # review 10 F2: the rest of the first step an early read cut is that step's second graph, not a step compiled again
    rest = sum(1 for r in recompilations if r.family.key not in eager and _first_rest(r))
    asides = ([f"{outside} of them {'eager ops' if outside != 1 else 'an eager op'} outside jit"] if outside else []) \
        + ([f"{warm} of them {'an expected warm-up' if warm == 1 else 'expected warm-ups'}"] if warm else []) \
        + (["1 of them the first step's second graph, after an early read cut the step" if rest == 1 else
            f"{rest} of them first steps' second graphs, after early reads cut the steps"] if rest else [])
    head = counts.head() + (f" ({'; '.join(asides)})" if asides else "")
    if outside and outside == n:
        return _eager_only(counts, facts, families, outside, loaded)
    interesting = [p for p in facts if p.name != "steady"]
    interesting.sort(key=lambda p: p.name == "eager op")  # JAX's eager compiles come after the real story
    if not interesting:
        return head
    real = [p for p in interesting if p.name != "eager op"]
    if len(real) > 1:  # several families recompiled: each in a few words, the report lists their patterns
        return head + ": " + "; ".join(_in_brief(p) for p in real)
    more = len(interesting) - 1  # the summary stays two lines: the other patterns are listed under it
    return head + ": " + pattern_text(interesting[0]) + (
        f"; +{more} more pattern{'s' if more != 1 else ''} below" if more else "")


def _first_rest(r: Recompilation) -> bool:
    """The family's first whole graph, right after the graphs its first step's early reads ran (the step's second
    graph, #1 of a run cut at .item()): compiled because the read cut the step, not because the step changed."""
    from hlodiff.explain.families import is_partial

    members = r.family.members
    i = next((i for i, g in enumerate(members) if g.ref == r.graph.ref), 0)
    return i > 0 and not is_partial(members[i]) and all(is_partial(g) for g in members[:i])


def _eager_only(counts: RunCounts, facts: list[Pattern], families: list[Family], outside: int,
                loaded: set[str] = frozenset()) -> str:
    """A JAX run whose only recompilations are eager ops (``jax.random.normal`` outside jit for a few shapes): the
    user's jitted functions head the summary, the eager compilations are an aside (review F9: a steady run opened
    with "3 recompilations" of JAX's own internals and never named the train step)."""
    from hlodiff.explain.patterns import is_eager_op

    steady = [p.family for f, p in zip(families, facts) if p.name == "steady" and not is_eager_op(f)]
    head = counts.head() + " of the jitted functions"
    if steady:
        shown = ", ".join(steady[:3]) + (f" and {len(steady) - 3} more" if len(steady) > 3 else "")
        head += f": steady: {shown} compiled once{' each' if len(steady) > 1 else ''}"
    # every compilation of an eager op, its first for each op included: "15 compilations ... 9 more of eager ops"
    # read as a miscount where 14 were eager (review 6 F9); the 9 are those for another shape
    eager = sum(1 for f in families if is_eager_op(f) for g in f.members if g.compiled and g.ref not in loaded)
    if eager <= outside:
        return head + f"; {outside} more compilation{'s' if outside != 1 else ''} of eager ops outside jit below"
    return head + f"; {eager} eager-op compilations ({outside} for a new shape) below"


def _hints(graphs: list[GraphSummary], recompilations: list[Recompilation], reports: dict,
           reports_given: bool = False) -> list[str]:
    hints = []
    if (reports or reports_given) and not any(output_tensors(g, reports) for g in graphs if g.compiled):
        hints.append("the live-tensor report fits none of these graphs (another run, or another save file?); "
                     "it was not used")
    unknown = [r for r in recompilations if any(not c.locations for c in r.causes)]
    if not unknown:
        return hints
    if all(producer(r.graph) == "jax" for r in unknown):
        return hints  # torch_xla's flags and `record` give a JAX run no stack it lacks (review F5)
    if not any(has_source_metadata(r.graph) for r in unknown):
        hints.append("source lines unknown: the dump has no source metadata; rerun with "
                     "`hlodiff record -- python train.py` (sets XLA_HLO_DEBUG=1 and captures live tensors)")
    elif not reports and any(g.record.kind in TRACED_KINDS for g in graphs):
        hints.append("some causes have no user line in the HLO metadata; pass --tensors-report (captured with "
                     "`hlodiff record`) to trace them to the live tensors and their Python stacks")
    return hints


def _another_program(r: Recompilation) -> bool:
    """A graph that shares almost nothing with its closest earlier graph of the same name (``dynamo_xla.UNRELATED``):
    under a torch.compile run told by Dynamo's log, two eager graphs called SyncTensorsGraph (the bridge's first
    sync of the call's inputs, a read after the sync) are two programs, each compiled once, not one that changed;
    review 9 F5 (c1 by hand): such a pair, 3% alike, headed with "a value is kept on some steps only" under Dynamo's
    right story."""
    from hlodiff.explain.dynamo_xla import UNRELATED

    return r.diff is not None and r.diff.similarity < UNRELATED
