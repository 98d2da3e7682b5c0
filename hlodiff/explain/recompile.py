"""Why did this run compile again? Over a run's dumps: which graphs compiled, and for each recompilation the
closest earlier graph of its family, the causes in the shared vocabulary, the user's line, and (when captured)
the live tensors behind added or removed outputs and the PT_XLA_DEBUG record of the compilation.

Only compiled graphs are parsed: cache hits share their compiled graph's facts, so a 1 GB dump of 250 graphs with
3 cache keys costs three parses, not 250.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hlodiff.diff import ModuleDiff, diff_canonical
from hlodiff.diff.model import Cause
from hlodiff.dumps import GraphRecord
from hlodiff.dumps.run_folder import RunInputs
from hlodiff.dumps.debug_log import CompilationEvent, read_compilations
from hlodiff.dumps.tensors_report import LiveTensor, SyncReport, read_reports
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.explain.families import Family, group, is_partial
from hlodiff.explain.inventory import GraphSummary, collect_records, summarize
from hlodiff.explain.patterns import describe_pattern
from hlodiff.graph import Normalization
from hlodiff.hlo.model import SourceFrame, user_frame

MAX_CANDIDATES = 8
"""How many earlier compiled graphs of a family are compared to find the closest (most recent first)."""


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

    def to_json(self) -> dict:
        return {
            "graph": self.graph.ref,
            "index": self.graph.record.index,
            "closest": self.closest.ref if self.closest else None,
            "family": self.family.label,
            "similarity": round(self.diff.similarity, 4) if self.diff else None,
            "causes": [c.to_json() for c in self.causes],
            "live_tensors": [t.to_json() for t in self.tensors],
            "debug": _debug_json(self.debug),
            "ignored": [i.to_json() for i in self.diff.ignored] if self.diff else [],
        }


@dataclass(slots=True)
class RunExplanation:
    graphs: list[GraphSummary]
    families: list[Family]
    recompilations: list[Recompilation]
    summary: str
    patterns: list[str]
    hints: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "summary": self.summary,
            "graphs": [_graph_json(g) for g in self.graphs],
            "families": [{"label": f.label, "graphs": [g.ref for g in f.members],
                          "compiled": [g.ref for g in f.compiled]} for f in self.families],
            "patterns": self.patterns,
            "recompilations": [r.to_json() for r in self.recompilations],
            "hints": self.hints,
        }


def _graph_json(g: GraphSummary) -> dict:
    return {"index": g.record.index, "ref": g.ref, "name": g.name, "graph_hash": g.record.graph_hash,
            "fingerprint": g.fingerprint, "compiled": g.compiled, "instructions": g.instructions,
            "cache_key": g.cache_key, "trigger": g.trigger.to_json() if g.trigger else None}


def _debug_json(event: CompilationEvent | None) -> dict | None:
    if event is None:
        return None
    return {"cause": event.cause, "graph_hash": event.graph_hash,
            "frames": [f.to_json() for f in event.frames]}


# -- analysis ---------------------------------------------------------------------------------------------------------


def explain_run(inputs: RunInputs, warnings: list[InputWarning], options: Normalization = Normalization(), *,
                stage: str | None = None) -> RunExplanation:
    records = collect_records(inputs.paths, warnings, stage=stage)
    if not records:
        raise HlodiffError("no complete graph found", path=inputs.paths[0] if inputs.paths else None)
    return explain_records(records, options, reports=_reports(inputs, warnings),
                           events=_debug_events(inputs, warnings), warnings=warnings)


def explain_records(records: list[GraphRecord], options: Normalization = Normalization(), *,
                    reports: dict | None = None, events: dict[str, CompilationEvent] | None = None,
                    warnings: list[InputWarning] | None = None) -> RunExplanation:
    """The analysis proper, over records from anywhere (a whole dump, or the entries one test produced).

    ``reports`` maps (save file, entry index) to live-tensor reports, ``events`` graph hashes to PT_XLA_DEBUG
    compilations.
    """
    reports = reports or {}
    events = events or {}
    graphs = summarize(records, options, keep=True, parse_hits=False, warnings=warnings)
    if not graphs:
        raise HlodiffError("no graph could be read", path=records[0].source if records else None)
    partial = {i for i, g in enumerate(graphs)
               if is_partial(g, events[g.record.graph_hash].cause if g.record.graph_hash in events else None)}
    families = group(graphs, partial)
    partial_refs = {graphs[i].ref for i in partial}
    # The graph that finishes a step an early execution cut short: what was already computed is missing from it.
    remainder_of = {graphs[i + 1].ref: graphs[i] for i in partial
                    if i + 1 < len(graphs) and i + 1 not in partial}
    recompilations = []
    for family in families:
        compiled = family.compiled
        for position, graph in enumerate(compiled[1:], start=1):
            recompilation = _explain_one(graph, compiled[:position], family, graph.ref in partial_refs, reports,
                                         events)
            if graph.ref in remainder_of:
                recompilation.causes.insert(0, _remainder_cause(remainder_of[graph.ref]))
            recompilations.append(recompilation)
    order = {g.ref: i for i, g in enumerate(graphs)}
    recompilations.sort(key=lambda r: order[r.graph.ref])
    patterns = [describe_pattern(f, recompilations) for f in families]
    hints = _hints(graphs, recompilations, reports)
    return RunExplanation(graphs, families, recompilations, _summary(graphs, recompilations, patterns), patterns,
                          hints)


def _reports(inputs: RunInputs, warnings: list[InputWarning]) -> dict[tuple[str, int], SyncReport]:
    """Live-tensor reports keyed by (save-tensors file, entry index); one report file per dump, in order."""
    found: dict[tuple[str, int], SyncReport] = {}
    save_files = [p for p in inputs.paths if not os.path.isdir(p)]
    for i, report_path in enumerate(inputs.tensors_reports):
        target = save_files[min(i, len(save_files) - 1)] if save_files else ""
        for report in read_reports(report_path, warnings):
            if report.sync is not None:
                found[(target, report.sync)] = report
    return found


def _debug_events(inputs: RunInputs, warnings: list[InputWarning]) -> dict[str, CompilationEvent]:
    events: dict[str, CompilationEvent] = {}
    for log in inputs.debug_logs:
        for event in read_compilations(log, warnings):
            if event.graph_hash:
                events.setdefault(event.graph_hash, event)
    return events


def _explain_one(graph: GraphSummary, earlier: list[GraphSummary], family: Family, partial: bool,
                 reports: dict, events: dict[str, CompilationEvent]) -> Recompilation:
    best: tuple[float, int, GraphSummary, ModuleDiff] | None = None
    for order, candidate in enumerate(reversed(earlier[-MAX_CANDIDATES:])):
        diff = diff_canonical(candidate._canonical, graph._canonical)
        score = (diff.similarity, -order)
        if best is None or score > best[:2]:
            best = (diff.similarity, -order, candidate, diff)
    _, _, closest, diff = best
    causes = list(diff.causes) if not diff.equal else [_same_after_normalization(diff, graph)]
    if partial:
        causes.insert(0, _partial_cause(graph, closest, events.get(graph.record.graph_hash or "")))
    notes = _tensor_notes(diff, closest, graph, reports)
    _locate_from_tensors(causes, diff, closest, graph, reports)
    return Recompilation(graph, closest, family, causes, diff, notes, events.get(graph.record.graph_hash or ""))


def _same_after_normalization(diff: ModuleDiff, graph: GraphSummary) -> Cause:
    """Two cache keys, one normalized graph: the tracer numbered or ordered things differently.

    Located at the user lines that created the renumbered inputs (their ``xla__device_data`` metadata), which
    is where a callback order or a dict iteration order shows up.
    """
    what = "; ".join(i.summary for i in diff.ignored if i.name in ("parameter_order", "names", "dead_code",
                                                                  "tuple_plumbing")) or "names or metadata only"
    moved = {b: a for a, b in diff.parameter_mapping if a != b}
    frames: list[SourceFrame] = []
    instructions = []
    cm = graph._canonical
    if cm is not None:
        for inst in cm.module.entry.parameters():
            if inst.parameter_number in moved:
                instructions.append((None, inst.name))
                frame = user_frame(cm.frames(inst))
                if frame is not None and frame not in frames:
                    frames.append(frame)
    frames.sort(key=lambda f: (f.file, f.line or 0))
    return Cause("reordered", f"same computation after normalization; it differs only in {what}", frames[:4],
                 instructions)


def _partial_cause(graph: GraphSummary, closest: GraphSummary, event: CompilationEvent | None) -> Cause:
    trigger = graph.trigger
    how = f" (PT_XLA_DEBUG: {event.cause})" if event is not None and event.cause else ""
    summary = (f"graph cut short by an early execution: {graph.instructions} instructions and {graph.outputs} "
               f"output{'s' if graph.outputs != 1 else ''} ran before the step's sync, which reads a value "
               f"(.item(), print, a Python condition on a tensor){how}")
    return Cause("partial", summary, [trigger] if trigger else [])


def _remainder_cause(cut: GraphSummary) -> Cause:
    trigger = cut.trigger
    where = f" at {trigger.file.rsplit('/', 1)[-1]}:{trigger.line}" if trigger and trigger.line else ""
    return Cause("partial", f"the rest of a step that an early execution{where} cut short ({cut.ref} ran first): "
                            "values it already computed are inputs or missing here", [trigger] if trigger else [])


def _outputs_with_tensors(diff: ModuleDiff) -> tuple[list[int], list[int]]:
    """Output positions added on the right and removed on the left."""
    lefts = {a for a, _ in diff.output_mapping}
    rights = {b for _, b in diff.output_mapping}
    added = [j for j in range(diff.stats.get("right_outputs", 0)) if j not in rights]
    removed = [i for i in range(diff.stats.get("left_outputs", 0)) if i not in lefts]
    return added, removed


def _tensor_notes(diff: ModuleDiff, left: GraphSummary, right: GraphSummary, reports: dict) -> list[TensorNote]:
    added, removed = _outputs_with_tensors(diff)
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


def output_tensors(graph: GraphSummary, reports: dict) -> list[LiveTensor]:
    """The live tensors behind a graph's outputs, in output order; empty when no report fits the graph.

    torch_xla makes one output per live tensor with pending IR, in tensor-id order; a report that does not give
    exactly that many such tensors (or whose shapes disagree) is not trusted.
    """
    report = reports.get((graph.record.path, graph.record.index)) or reports.get((graph.record.source,
                                                                                   graph.record.index))
    if report is None:
        return []
    pending = sorted((t for t in report.tensors if t.ir_nodes > 1), key=lambda t: t.id)
    if len(pending) != graph.outputs:
        return []
    return pending


def _locate_from_tensors(causes: list[Cause], diff: ModuleDiff, left: GraphSummary, right: GraphSummary,
                         reports: dict) -> None:
    """Give causes without a user line the user frames of the live tensors their changes feed.

    HLO metadata keeps only the innermost Python frame, often inside torch (``torch/optim/sgd.py``); the live
    tensor written by the user's line (``opt.step()``) knows the whole stack.
    """
    right_tensors, left_tensors = output_tensors(right, reports), output_tensors(left, reports)
    if not right_tensors and not left_tensors:
        return
    added, removed = _outputs_with_tensors(diff)
    for cause in causes:
        if cause.locations or cause.kind == "partial":
            continue
        if cause.kind == "outputs":
            picks = [(right_tensors, j) for j in added] + [(left_tensors, i) for i in removed]
        else:
            picks = [(right_tensors, j) for j in _outputs_fed_by(cause, right)]
        frames: list[SourceFrame] = []
        for tensors, j in picks[:8]:
            if j < len(tensors):
                frame = user_frame(tensors[j].frames)
                if frame is not None and frame not in frames:
                    frames.append(frame)
        cause.locations = sorted(frames, key=lambda f: (f.file, f.line or 0))[:4]


def _outputs_fed_by(cause: Cause, graph: GraphSummary) -> list[int]:
    """Output positions of the right graph that depend on the cause's right-side instructions."""
    cm = graph._canonical
    if cm is None:
        return []
    cc = cm.entry
    targets = {r for _, r in cause.instructions if r is not None and r in cc.insts}
    if not targets:
        return []
    outputs = cc.outputs()
    reached: list[int] = []
    for j, out in enumerate(outputs):
        stack, seen = [out], set()
        while stack:
            node = stack.pop()
            if node in targets:
                reached.append(j)
                break
            if node in seen:
                continue
            seen.add(node)
            stack.extend(cc.operands.get(node, ()))
    return reached


def _summary(graphs: list[GraphSummary], recompilations: list[Recompilation], patterns: list[str]) -> str:
    compiled = sum(1 for g in graphs if g.compiled)
    n = len(recompilations)
    head = (f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''}, {compiled} compilation"
            f"{'s' if compiled != 1 else ''}, {n} recompilation{'s' if n != 1 else ''}")
    interesting = [p for p in patterns if not p.startswith("steady")]
    return head + (": " + "; ".join(interesting) if interesting else "")


def _hints(graphs: list[GraphSummary], recompilations: list[Recompilation], reports: dict) -> list[str]:
    hints = []
    if reports and not any(output_tensors(g, reports) for g in graphs if g.compiled):
        hints.append("the live-tensor report fits none of these graphs (another run, or another save file?); "
                     "it was not used")
    unknown = [r for r in recompilations if any(not c.locations for c in r.causes)]
    if not unknown:
        return hints
    if not any(_has_source_metadata(r.graph) for r in unknown):
        hints.append("source lines unknown: the dump has no source metadata; rerun with "
                     "`hlodiff record -- python train.py` (sets XLA_HLO_DEBUG=1 and captures live tensors)")
    elif not reports and any(g.record.kind == "save_tensors" for g in graphs):
        hints.append("some causes have no user line in the HLO metadata; pass --tensors-report (captured with "
                     "`hlodiff record`) to trace them to the live tensors and their Python stacks")
    return hints


def _has_source_metadata(graph: GraphSummary) -> bool:
    cm = graph._canonical
    if cm is None:
        return False
    return any("source_file=" in meta or "stack_frame_id=" in meta
               for _, inst in cm.module.instructions() if (meta := inst.attrs.get("metadata")))
