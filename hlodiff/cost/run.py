"""The cost of a whole run: every graph of the dumps given, XLA's side files, compile times, boundaries, from the
run's evidence (:mod:`hlodiff.dumps.cost_evidence` reads it; nothing here opens a file but the graphs' own text,
parsed when costed).

A graph whose cache key was seen before (a torch_xla cache hit) is not parsed again: its figures are those of
the graph it repeats. For XLA dump folders the optimized module (``*_after_optimizations``) is read by default,
because copies, loops' trip counts and XLA's memory report belong to it; the unoptimized module is read only
when that is all the folder has (and then peak memory is hlodiff's estimate).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Mapping

from hlodiff import progress
from hlodiff.cost.boundaries import find_boundaries
from hlodiff.cost.graph_cost import module_cost
from hlodiff.cost.donation import told_unusable
from hlodiff.cost.headline import sync_call
from hlodiff.cost.model import FamilyGrowth, GraphCost, RunCost
from hlodiff.cost.pipeline import pipeline
from hlodiff.cost.precedence import settle
from hlodiff.cost.round_trips import host_returns, upload_files
from hlodiff.cost.torch_xla_memory import TorchXlaMemory
from hlodiff.diff.library_reads import library_read
from hlodiff.dumps.compile_times import CompileTimes, compile_seconds
from hlodiff.dumps.cost_evidence import CostRun, GraphCostEvidence
from hlodiff.dumps.graph_record import DUMPED_KINDS, LOADED_STAGE, GraphRecord
from hlodiff.dumps.xla_memory import XlaMemory
from hlodiff.errors import HloParseError, InputWarning
from hlodiff.hlo.escapes import note_bad_escapes
from hlodiff.hlo.model import user_frame

if TYPE_CHECKING:
    from hlodiff.dumps.jax_log import JaxLog

_SUFFIX = re.compile(r"\.\d+$")


def run_cost(evidence: CostRun, warnings: list[InputWarning]) -> RunCost:
    """The cost of the run whose graphs and side files ``evidence`` holds
    (:func:`hlodiff.dumps.cost_evidence.read_cost_run`)."""
    records, picked = list(evidence.records), dict(evidence.picked)
    origin = list(range(len(records)))  # each graph's position in the evidence (a damaged graph is dropped)
    graphs = graph_costs(records, warnings, evidence.torch_xla, evidence.xla)
    if None in graphs:  # damage is local: the other graphs are still costed
        kept = [i for i, g in enumerate(graphs) if g is not None]
        position = {old: new for new, old in enumerate(kept)}
        picked = {position[i]: chosen for i, chosen in picked.items() if i in position}
        records, graphs = [records[i] for i in kept], [graphs[i] for i in kept]
        origin = kept
    for position, chosen in picked.items():  # a picked cache hit did not compile
        if graphs[position].compiled and origin[position] in evidence.repeats:
            graphs[position].compiled = False
    for record, graph in zip(records, graphs):  # the dump's own word: only its optimized text exists
        graph.loaded = graph.compiled and record.kind == "xla_dump" and record.stage == LOADED_STAGE
    times = evidence.times
    warnings.extend(evidence.time_warnings)
    _attach_compile_times(records, graphs, times, warnings)
    _attach_call_sites(records, graphs, evidence.jax_log)
    run = RunCost(graphs)
    run.compile_seconds, run.compile_seconds_source = _run_compile_seconds(graphs, times, bool(picked))
    loads = [g.compile_seconds for g in graphs if g.loaded and g.compile_seconds is not None]
    if loads and run.compile_seconds is not None:  # JAX logs a load as a compilation: its seconds are the load's
        run.load_seconds = round(sum(loads), 6)
        run.compile_seconds = round(max(run.compile_seconds - run.load_seconds, 0.0), 6)
    run.families = _families(records, graphs)
    if evidence.report_files and not picked:  # boundaries are between the graphs of a run, not of a few picked out
        run.boundaries, run.boundaries_exact, run.boundaries_repeats_only = find_boundaries(records, graphs, evidence,
                                                                                            warnings)
        run.pipeline = pipeline(graphs, run.boundaries, run.boundaries_exact)
        run.round_trips, run.sent_back = _host_returns(graphs, evidence)
        run.round_trips_moved = frozenset(g.ref for g in graphs if g.ref in run.round_trips and g.trigger is not None
                                          and evidence.moves_only(g.trigger.file, g.trigger.line))
    elif evidence.report_files and len(picked) < len(records):
        warnings.append(InputWarning("no graph boundaries: they are drawn over whole dumps, and some graphs were "
                                     "picked out as PATH#N"))
    return run


def _host_returns(graphs: list[GraphCost], evidence: CostRun) -> tuple[frozenset[str], frozenset[str]]:
    """The read graphs whose value came back to the device, and those after which a value worked out on the host
    came back for the same step (:func:`hlodiff.cost.round_trips.host_returns`): the reports are read again, roots
    only, once for both, and only when the run has a read."""
    if not any(g.sync_call == "read" for g in graphs):
        return frozenset(), frozenset()
    return host_returns(graphs, evidence.report_roots(upload_files(graphs)), evidence.upload_uses_read)


def _run_compile_seconds(graphs: list[GraphCost], times: CompileTimes, picked: bool) -> tuple[float | None, str | None]:
    """The run's compile seconds and where they come from. With graphs picked out as ``PATH#N`` only theirs add
    up (torch_xla's ``CompileTime`` total is the whole run's: then none)."""
    if times.total_seconds is not None:
        source = "torch_xla CompileTime metric"
    elif times.by_hash:
        source = "torch_xla CompileTime per compilation (compile_times.tsv)"
    elif times.compilations:
        source = "jax_log_compiles"
    else:
        return None, None
    if not picked:
        return times.seconds(), source
    own = [g.compile_seconds for g in graphs if g.compile_seconds is not None]
    return (round(sum(own), 6), source) if own else (None, None)


def graph_costs(records: list[GraphRecord], warnings: list[InputWarning],
                torch_xla: Mapping[str, TorchXlaMemory] | None = None,
                xla: Mapping[str, XlaMemory | None] | None = None) -> list[GraphCost | None]:
    """One cost per record, None (with a warning) for a module of a dump folder that does not parse; ``torch_xla``
    maps graph hashes to torch_xla's figures, ``xla`` the paths of dumped modules to XLA's memory report beside
    them (:mod:`hlodiff.cost.precedence` decides which figure wins)."""
    torch_xla = torch_xla or {}
    xla = xla or {}
    seen: dict[tuple[str, str | None], GraphCost] = {}
    out = []
    estimated = []
    with progress.task("costing graphs", len(records), "graphs") as bar:
        for record in records:
            _cost_one(record, seen, out, estimated, torch_xla, xla, warnings)
            bar.advance()
    if estimated:
        refs = ", ".join(r.ref for r in estimated[:3]) + (" ..." if len(estimated) > 3 else "")
        warnings.append(InputWarning(
            f"no buffer assignment or memory-usage report beside {len(estimated)} module(s) ({refs}): peak memory is "
            f"hlodiff's estimate (dump the optimized module: XLA writes *-memory-usage-report.txt beside it)",
            path=estimated[0].source))
    return out


def _library_read(record: GraphRecord) -> str:
    """The library function that read a value on the host for this execution (its row's name), "" for a read of
    the user's or a sync: explain-recompile's table (:mod:`hlodiff.diff.library_reads`), so both commands give one
    fix (review 20, F3)."""
    row = library_read(record.frames) if sync_call(record.frames) == "read" else None
    return row.name if row is not None else ""


def _cost_one(record: GraphRecord, seen: dict, out: list[GraphCost | None], estimated: list[GraphRecord],
              torch_xla: Mapping[str, TorchXlaMemory], xla_reports: Mapping[str, XlaMemory | None],
              warnings: list[InputWarning]) -> None:
    """One graph's cost appended to ``out``: a cache hit copies its first sighting's, the rest are parsed; a module
    of a dump folder cut mid-write is None with a warning (skipped, as inspect and explain do)."""
    key = (record.source, record.cache_key())  # each dump is its own run: its own compilations
    first = seen.get(key) if key[1] is not None else None
    if first is not None:
        out.append(replace(first, ref=record.ref, index=record.index, compiled=False, compile_seconds=None,
                           trigger=_trigger(record), sync_call=sync_call(record.frames),
                           stack=_user_stack(record), library_read=_library_read(record)))
        return
    try:
        module = record.module()
    except HloParseError as err:
        if record.kind not in DUMPED_KINDS:
            raise
        warnings.append(InputWarning(f"module {record.module_number} skipped: {err.message}", path=err.path,
                                     line=err.line))
        out.append(None)
        return
    note_bad_escapes(module, warnings)
    xla = xla_reports.get(record.path) if record.kind in DUMPED_KINDS else None
    cost = settle(module_cost(module, ref=record.ref, index=record.index, xla=xla), module, record.kind,
                  torch_xla.get(record.graph_hash or ""))
    cost.trigger = _trigger(record)
    cost.sync_call = sync_call(record.frames)
    cost.stack = _user_stack(record)
    cost.library_read = _library_read(record)
    if record.kind in DUMPED_KINDS and xla is None and cost.peak_source == "estimate":
        estimated.append(record)
    if key[1] is not None:
        seen[key] = cost
    out.append(cost)


def _trigger(record: GraphRecord):
    return user_frame(record.frames) if record.frames else None


def _user_stack(record: GraphRecord) -> tuple:
    """The user's frames (outside installed libraries) of the execution's stack, innermost first."""
    return tuple(f for f in record.frames or () if not f.is_library)


def _attach_compile_times(records: list[GraphRecord], graphs: list[GraphCost], times: CompileTimes,
                          warnings: list[InputWarning]) -> None:
    seconds = compile_seconds(records, [g.compiled for g in graphs], times, warnings)
    for position, value in seconds.items():
        graphs[position].compile_seconds = value


def _attach_call_sites(records: list[GraphRecord], graphs: list[GraphCost], log: "JaxLog | None") -> None:
    """Each JAX module's call site (the user's line that called the jitted function), from the cache misses of the
    run's JAX log (read into the evidence): the HLO names no such line, and it is where ``donate_argnums`` is
    decided."""
    from hlodiff.dumps.jax_log import join_modules

    dumped = [i for i, r in enumerate(records) if r.kind in DUMPED_KINDS and graphs[i].compiled]
    if not dumped or log is None:
        return
    joined = join_modules(log, [graphs[i].name for i in dumped])
    for i, compilation in zip(dumped, joined):
        miss = compilation.cache_miss if compilation is not None else None
        if miss is not None and miss.call_site is not None and graphs[i].called_at is None:
            graphs[i].called_at = miss.call_site
        if compilation is not None and compilation.unusable_donations:
            graphs[i].unusable_donations = told_unusable(graphs[i], compilation.unusable_donations)


def _families(records: list[GraphRecord], graphs: list[GraphCost]) -> list[FamilyGrowth]:
    """Graphs per place in the program (the user line that ran them, or the module's name), per dump: given the
    dumps of runs with 1, 2 and 4 microbatches, the rows show how graph count and size grow."""
    order: list[tuple[str, str]] = []
    rows: dict[tuple[str, str], FamilyGrowth] = {}
    for record, graph in zip(records, graphs):
        trigger = graph.trigger
        if trigger is not None:
            label = f"sync at {os.path.basename(trigger.file)}:{trigger.line}"
        else:
            label = _SUFFIX.sub("", record.module_name or graph.name or "?")
        key = (record.source, label)
        row = rows.get(key)
        if row is None:
            row = rows[key] = FamilyGrowth(label, 0, 0, 0, 0, 0, source=record.source)
            order.append(key)
        row.graphs += 1
        row.compiled += int(graph.compiled)
        row.instructions += graph.instructions
        row.parameter_bytes += graph.parameters.bytes
        row.output_bytes += graph.outputs.bytes
    return [rows[key] for key in order]


def record_cost(evidence: GraphCostEvidence, module=None) -> GraphCost:
    """The cost of one graph (:func:`hlodiff.dumps.cost_evidence.graph_cost_evidence`). A module of an XLA dump
    folder read before optimizations is costed on its optimized text when the folder has it (copies, loops and
    XLA's memory report are there); ``module``: the graph already parsed."""
    if evidence.unreadable is not None:
        raise evidence.unreadable
    record = evidence.record
    if evidence.optimized is not None:
        module = evidence.optimized.module()
    else:
        module = module if module is not None else record.module()
    return settle(module_cost(module, ref=record.ref, index=record.index, xla=evidence.xla), module, record.kind,
                  evidence.torch_xla)


def compare_cost(left: GraphCostEvidence, right: GraphCostEvidence, left_module=None, right_module=None) -> dict:
    """``compare --json``'s ``cost`` object for two graphs (see :func:`hlodiff.cost.delta.cost_delta`)."""
    from hlodiff.cost.delta import cost_delta

    costs = []
    for evidence, module in ((left, left_module), (right, right_module)):
        cost = record_cost(evidence, module)
        if evidence.timed:  # JAX's log beside the dump: this module's compile time
            cost.compile_seconds = evidence.compile_seconds
        costs.append(cost)
    return cost_delta(*costs)
