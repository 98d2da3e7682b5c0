"""The cost of a whole run: every graph of the dumps given, XLA's side files, compile times, boundaries.

A graph whose cache key was seen before (a torch_xla cache hit) is not parsed again: its figures are those of
the graph it repeats. For XLA dump folders the optimized module (``*_after_optimizations``) is read by default,
because copies, loops' trip counts and XLA's memory report belong to it; the unoptimized module is read only
when that is all the folder has (and then peak memory is hlodiff's estimate).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import replace

from hlodiff import progress
from hlodiff.cost.boundaries import find_boundaries
from hlodiff.cost.graph_cost import module_cost
from hlodiff.cost.headline import sync_call
from hlodiff.cost.model import FamilyGrowth, GraphCost, RunCost
from hlodiff.cost.pipeline import pipeline
from hlodiff.cost.precedence import settle
from hlodiff.cost.torch_xla_memory import TorchXlaMemory, read_torch_xla_memory
from hlodiff.dumps import iter_graphs, resolve_ref, split_ref
from hlodiff.dumps.compile_times import CompileTimes, compile_seconds, logs_beside, read_compile_times
from hlodiff.dumps.graph_record import DUMPED_KINDS, LOADED_STAGE, GraphRecord
from hlodiff.dumps.xla_dump import AFTER, list_dump_files
from hlodiff.dumps.xla_memory import read_xla_memory
from hlodiff.errors import HloParseError, InputWarning
from hlodiff.hlo.escapes import note_bad_escapes
from hlodiff.hlo.model import user_frame

_SUFFIX = re.compile(r"\.\d+$")


def cost_records(paths: list[str], warnings: list[InputWarning], *,
                 stage: str | None = None) -> tuple[list[GraphRecord], dict[int, str | None]]:
    """The graphs named by ``paths`` (files, folders or ``PATH#N``), optimized stage first for dump folders, and
    for those picked out as ``PATH#N`` their position and the stage they were read at."""
    records: list[GraphRecord] = []
    picked: dict[int, str | None] = {}
    for path in paths:
        base, n = split_ref(path)
        chosen = stage if stage is not None else _default_stage(base)
        if n is not None:
            picked[len(records)] = chosen
            records.append(resolve_ref(path, warnings, stage=chosen))
        else:
            records.extend(iter_graphs(base, warnings, stage=chosen))
    return records, picked


def _default_stage(path: str) -> str | None:
    """The optimized stage when the XLA dump behind ``path`` has it: the folder itself, or the dump folder a
    recording, a run folder or a dump with its debug log reads its modules from."""
    if not os.path.isdir(path):
        return None
    files = list_dump_files(path)
    if not files:
        first = next(iter(iter_graphs(path)), None)
        if first is None or first.kind not in DUMPED_KINDS:
            return None
        files = list_dump_files(os.path.dirname(first.path))
    return AFTER if any(f.stage.endswith(AFTER) for f in files) else None


def _repeats_earlier_graph(record: GraphRecord, stage: str | None) -> bool:
    """A graph named as ``PATH#N`` is a cache hit when an earlier graph of its dump has its cache key (headers
    only: no module is parsed)."""
    key = record.cache_key()
    if key is None:
        return False
    for earlier in iter_graphs(record.source, None, stage=stage):
        if earlier.index >= record.index:
            return False
        if earlier.cache_key() == key:
            return True
    return False


def run_cost(paths: list[str], warnings: list[InputWarning], *, stage: str | None = None,
             compile_logs: list[str] = (), tensors_reports: list[str] = (), debug_logs: list[str] = ()) -> RunCost:
    """``debug_logs``: PT_XLA_DEBUG logs, for torch_xla's own memory figures of each compilation."""
    records, picked = cost_records(paths, warnings, stage=stage)
    graphs = graph_costs(records, warnings, read_torch_xla_memory(list(debug_logs), warnings))
    if None in graphs:  # damage is local: the other graphs are still costed
        kept = [i for i, g in enumerate(graphs) if g is not None]
        position = {old: new for new, old in enumerate(kept)}
        picked = {position[i]: chosen for i, chosen in picked.items() if i in position}
        records, graphs = [records[i] for i in kept], [graphs[i] for i in kept]
    for position, chosen in picked.items():  # a picked cache hit did not compile
        if graphs[position].compiled and _repeats_earlier_graph(records[position], chosen):
            graphs[position].compiled = False
    for record, graph in zip(records, graphs):  # the dump's own word: only its optimized text exists
        graph.loaded = graph.compiled and record.kind == "xla_dump" and record.stage == LOADED_STAGE
    times = read_compile_times(list(compile_logs), warnings) if compile_logs else CompileTimes()
    _attach_compile_times(records, graphs, times, warnings)
    _attach_call_sites(records, graphs, list(compile_logs))
    run = RunCost(graphs)
    run.compile_seconds, run.compile_seconds_source = _run_compile_seconds(graphs, times, bool(picked))
    loads = [g.compile_seconds for g in graphs if g.loaded and g.compile_seconds is not None]
    if loads and run.compile_seconds is not None:  # JAX logs a load as a compilation: its seconds are the load's
        run.load_seconds = round(sum(loads), 6)
        run.compile_seconds = round(max(run.compile_seconds - run.load_seconds, 0.0), 6)
    run.families = _families(records, graphs)
    if tensors_reports and not picked:  # boundaries are between the graphs of a run, not of a few picked out
        run.boundaries, run.boundaries_exact = find_boundaries(records, graphs, list(tensors_reports), warnings)
        run.pipeline = pipeline(graphs, run.boundaries, run.boundaries_exact)
    elif tensors_reports and len(picked) < len(records):
        warnings.append(InputWarning("no graph boundaries: they are drawn over whole dumps, and some graphs were "
                                     "picked out as PATH#N"))
    return run


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
                torch_xla: dict[str, TorchXlaMemory] | None = None) -> list[GraphCost | None]:
    """One cost per record, None (with a warning) for a module of a dump folder that does not parse; ``torch_xla``
    maps graph hashes to torch_xla's figures (:mod:`hlodiff.cost.precedence` decides which figure wins)."""
    torch_xla = torch_xla or {}
    seen: dict[tuple[str, str | None], GraphCost] = {}
    out = []
    estimated = []
    with progress.task("costing graphs", len(records), "graphs") as bar:
        for record in records:
            _cost_one(record, seen, out, estimated, torch_xla, warnings)
            bar.advance()
    if estimated:
        refs = ", ".join(r.ref for r in estimated[:3]) + (" ..." if len(estimated) > 3 else "")
        warnings.append(InputWarning(
            f"no buffer assignment or memory-usage report beside {len(estimated)} module(s) ({refs}): peak memory is "
            f"hlodiff's estimate (dump the optimized module: XLA writes *-memory-usage-report.txt beside it)",
            path=estimated[0].source))
    return out


def _cost_one(record: GraphRecord, seen: dict, out: list[GraphCost | None], estimated: list[GraphRecord],
              torch_xla: dict[str, TorchXlaMemory], warnings: list[InputWarning]) -> None:
    """One graph's cost appended to ``out``: a cache hit copies its first sighting's, the rest are parsed; a module
    of a dump folder cut mid-write is None with a warning (skipped, as inspect and explain do)."""
    key = (record.source, record.cache_key())  # each dump is its own run: its own compilations
    first = seen.get(key) if key[1] is not None else None
    if first is not None:
        out.append(replace(first, ref=record.ref, index=record.index, compiled=False, compile_seconds=None,
                           trigger=_trigger(record), sync_call=sync_call(record.frames)))
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
    xla = read_xla_memory(record.path) if record.kind in DUMPED_KINDS else None
    cost = settle(module_cost(module, ref=record.ref, index=record.index, xla=xla), module, record.kind,
                  torch_xla.get(record.graph_hash or ""))
    cost.trigger = _trigger(record)
    cost.sync_call = sync_call(record.frames)
    if record.kind in DUMPED_KINDS and xla is None and cost.peak_source == "estimate":
        estimated.append(record)
    if key[1] is not None:
        seen[key] = cost
    out.append(cost)


def _trigger(record: GraphRecord):
    return user_frame(record.frames) if record.frames else None


def _attach_compile_times(records: list[GraphRecord], graphs: list[GraphCost], times: CompileTimes,
                          warnings: list[InputWarning]) -> None:
    seconds = compile_seconds(records, [g.compiled for g in graphs], times, warnings)
    for position, value in seconds.items():
        graphs[position].compile_seconds = value


def _attach_call_sites(records: list[GraphRecord], graphs: list[GraphCost], logs: list[str]) -> None:
    """Each JAX module's call site (the user's line that called the jitted function), from the cache misses of a
    JAX log among ``logs``: the HLO names no such line, and it is where ``donate_argnums`` is decided."""
    from hlodiff.dumps.jax_log import join_modules, looks_like_jax_log, read_jax_log

    dumped = [i for i, r in enumerate(records) if r.kind in DUMPED_KINDS and graphs[i].compiled]
    if not dumped:
        return
    for path in logs:
        try:
            with open(path, "rb") as f:
                head = f.read(1 << 16).decode("utf-8", "replace")
        except OSError:
            continue
        if not looks_like_jax_log(head):
            continue
        joined = join_modules(read_jax_log(path), [graphs[i].name for i in dumped])
        for i, compilation in zip(dumped, joined):
            miss = compilation.cache_miss if compilation is not None else None
            if miss is not None and miss.call_site is not None and graphs[i].called_at is None:
                graphs[i].called_at = miss.call_site
        return


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


def side_inputs(paths: list[str], debug_logs: list[str],
                tensors_report: str | None) -> tuple[list[str], list[str], list[str], list[str]]:
    """``(dumps, compile-time logs, live-tensor reports, PT_XLA_DEBUG logs)``: a ``hlodiff record`` folder stands
    for its dumps; logs and reports given explicitly win, else they are found beside the dumps (by name, and by
    content as :func:`hlodiff.dumps.run_folder.discover` recognizes them). A PT_XLA_DEBUG log given with
    ``--debug-log`` is read for memory figures too."""
    from hlodiff.dumps.run_folder import discover

    inputs = discover(paths, tensors_report, None)
    # a log found twice (by content and by name) is read once: read_compile_times keeps one per real path
    logs = list(debug_logs) or [*inputs.jax_logs, *logs_beside(inputs.paths)]
    pt_logs = [p for p in debug_logs if _is_debug_log(p)] or list(inputs.debug_logs)
    return inputs.paths, logs, inputs.tensors_reports, pt_logs


def _is_debug_log(path: str) -> bool:
    """Whether a log given with ``--debug-log`` is a PT_XLA_DEBUG log (its first analysis line decides)."""
    from hlodiff.dumps._io import decode, read_head
    from hlodiff.errors import HlodiffError

    try:
        return "Compilation Analysis:" in decode(read_head(path, 64 * 1024))
    except (HlodiffError, OSError):
        return False


def record_cost(record: GraphRecord, module=None, debug_logs: list[str] | None = None) -> GraphCost:
    """The cost of one graph. A module of an XLA dump folder read before optimizations is costed on its
    optimized text when the folder has it (copies, loops and XLA's memory report are there). torch_xla's figures
    come from ``debug_logs`` when given (the PT_XLA_DEBUG logs of the run), else from the one found beside the
    graph's dump, as ``hlodiff cost`` finds it."""
    memory = torch_xla_memory_beside(record, debug_logs)
    optimized = _optimized_sibling(record) if record.kind in DUMPED_KINDS else None
    if optimized is not None:
        path, _ = optimized
        module = GraphRecord(path=path, index=record.index, kind="xla_dump", start_line=1,
                             source=record.source).module()
        return settle(module_cost(module, ref=record.ref, index=record.index, xla=read_xla_memory(path)), module,
                      record.kind, memory)
    xla = read_xla_memory(record.path) if record.kind in DUMPED_KINDS else None
    module = module if module is not None else record.module()
    return settle(module_cost(module, ref=record.ref, index=record.index, xla=xla), module, record.kind, memory)


def torch_xla_memory_beside(record: GraphRecord, debug_logs: list[str] | None = None) -> TorchXlaMemory | None:
    """torch_xla's figures of the graph's compilation (by graph hash), from ``debug_logs`` or a PT_XLA_DEBUG log
    beside its dump."""
    if not record.graph_hash:
        return None
    try:
        logs = debug_logs if debug_logs is not None else _logs_beside(record.source)
        stamps = tuple(_stamp(p) for p in logs)
    except OSError:
        return None
    return _memory_of_logs(stamps).get(record.graph_hash)


@functools.lru_cache(maxsize=64)
def _logs_beside(source: str) -> tuple[str, ...]:
    """The PT_XLA_DEBUG logs found beside one dump, looked for once (every graph of a run shares them)."""
    from hlodiff.dumps.run_folder import discover
    from hlodiff.errors import HlodiffError

    try:
        return tuple(discover([source], None, None).debug_logs)
    except (HlodiffError, OSError):
        return ()


def _stamp(path: str) -> tuple[str, int, int]:
    st = os.stat(path)
    return os.path.realpath(path), st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=8)
def _memory_of_logs(stamps: tuple[tuple[str, int, int], ...]) -> dict[str, TorchXlaMemory]:
    """Read once per log version: ``compare`` over a sequence costs every pair from the same log."""
    return read_torch_xla_memory([path for path, _, _ in stamps])


def _optimized_sibling(record: GraphRecord) -> tuple[str, str] | None:
    if record.stage is None or record.stage.endswith(AFTER) or record.module_number is None:
        return None
    folder = os.path.dirname(record.path)
    for f in list_dump_files(folder):
        if f.module_number == record.module_number and f.stage.endswith(AFTER):
            return f.path, f.stage
    return None


def compare_cost(left: GraphRecord, right: GraphRecord, left_module=None, right_module=None) -> dict:
    """``compare --json``'s ``cost`` object for two graphs (see :func:`hlodiff.cost.delta.cost_delta`)."""
    from hlodiff.cost.delta import cost_delta

    costs = []
    for record, module in ((left, left_module), (right, right_module)):
        cost = record_cost(record, module)
        logs = logs_beside([record.source]) if record.kind == "xla_dump" else []
        if logs:  # JAX's log beside the dump: this module's compile time
            siblings = list(iter_graphs(record.source, stage=record.stage))
            seconds = compile_seconds(siblings, [True] * len(siblings), read_compile_times(logs))
            cost.compile_seconds = next((v for i, v in seconds.items() if siblings[i].index == record.index), None)
        costs.append(cost)
    return cost_delta(*costs)
