"""What a cost is computed from, read here so ``cost/`` reads no file: a run's graphs and side files for ``hlodiff
cost`` (:class:`CostRun`), one graph's for ``compare --cost`` and the HTML report (:class:`GraphCostEvidence`).

Side files of a cost: the compile-time logs (JAX's log, torch_xla's metrics report, ``compile_times.tsv``; JAX's
log also names each dumped module's call site), PT_XLA_DEBUG logs (torch_xla's memory figures per graph hash),
XLA's memory reports beside each dumped module, the optimized text of a module read before optimizations, and the
live-tensor reports the boundaries are drawn from.
Each is read once, by the entry layer (``api.py``), in the order the cost always read them, so the warnings the
readers append come in the order they always came; the live-tensor reports are aligned when the boundaries ask
(:meth:`CostRun.align_reports`), as :class:`hlodiff.dumps.evidence.Run` aligns them for the explanation.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence

from hlodiff.dumps.compile_times import CompileTimes, compile_seconds, logs_beside, read_compile_times
from hlodiff.dumps.graph_record import DUMPED_KINDS, GraphRecord
from hlodiff.dumps.torch_xla_memory import TorchXlaMemory, read_torch_xla_memory
from hlodiff.dumps.xla_dump import AFTER, list_dump_files
from hlodiff.dumps.xla_memory import XlaMemory, read_xla_memory
from hlodiff.errors import HlodiffError, InputWarning

if TYPE_CHECKING:
    from hlodiff.dumps.jax_log import JaxLog
    from hlodiff.dumps.report_alignment import Alignment, GraphOutputs
    from hlodiff.dumps.tensors_report import SyncReport


# -- a run: `hlodiff cost` ---------------------------------------------------------------------------------------


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

    try:
        return "Compilation Analysis:" in decode(read_head(path, 64 * 1024))
    except (HlodiffError, OSError):
        return False


@dataclass(frozen=True, slots=True)
class CostRun:
    """A run's cost evidence: its graphs and every side file, read.

    ``picked``: the graphs named as ``PATH#N``, by position, with the stage they were read at; ``repeats``: those of
    them whose cache key an earlier graph of their dump has (a cache hit: it did not compile). ``time_warnings``:
    what reading the compile-time logs noticed, told after the graphs' own warnings (where the cost always told
    it)."""

    records: list[GraphRecord]
    picked: Mapping[int, str | None] = field(default_factory=dict)
    repeats: frozenset[int] = frozenset()
    torch_xla: Mapping[str, TorchXlaMemory] = field(default_factory=dict)
    """torch_xla's figures by graph hash, from the PT_XLA_DEBUG logs."""
    xla: Mapping[str, XlaMemory | None] = field(default_factory=dict)
    """XLA's memory report beside each dumped module, by the module's path."""
    times: CompileTimes = field(default_factory=CompileTimes)
    time_warnings: tuple[InputWarning, ...] = ()
    report_files: tuple[str, ...] = ()
    """Live-tensor reports, for the boundaries between the graphs."""
    jax_log: "JaxLog | None" = None
    """The first JAX log among the compile-time logs, for each dumped module's call site (its cache misses)."""

    def xla_memory(self, record: GraphRecord) -> XlaMemory | None:
        return self.xla.get(record.path)

    def moves_only(self, file: str, line: int | None) -> bool | None:
        """Whether the user's line only moves a value between host and device (:func:`hlodiff.dumps.move_line.
        moves_only`): the file is read here, so the cost layer opens none."""
        from hlodiff.dumps.move_line import moves_only

        return moves_only(file, line)

    def upload_uses_read(self, file: str, read_line: int, upload_line: int) -> bool | None:
        """Whether an upload's line uses a name bound from a read earlier in the step (:func:`hlodiff.dumps.
        read_flow_source.upload_uses_read`): the file is read here, so the cost layer opens none."""
        from hlodiff.dumps.read_flow_source import upload_uses_read

        return upload_uses_read(file, read_line, upload_line)

    def align_reports(self, dumps: Sequence[tuple[str, Sequence["GraphOutputs"]]], wanted: set | None,
                      warnings: list[InputWarning] | None) -> dict[tuple[str, int], "Alignment"]:
        """The live-tensor reports aligned with the executions of ``dumps`` (as :meth:`Run.align_reports`)."""
        from hlodiff.dumps.report_alignment import align_files

        return align_files(list(self.report_files), dumps, wanted=wanted, warnings=warnings)

    def report_roots(self, data_files: frozenset[str] | None = None) -> Iterator["SyncReport"]:
        """The live-tensor reports again, one at a time with only each tensor's root IR node (what a value made at a
        line needs, not its whole graph), and the device-data leaves made in ``data_files`` (the uploads a pending
        value reads): read here so the analysis above opens no file."""
        from hlodiff.dumps.tensors_report import iter_reports

        for path in self.report_files:
            if data_files:
                yield from iter_reports(path, [], ir="roots+data", data_files=data_files)
            else:
                yield from iter_reports(path, [], ir="roots")


def read_cost_run(paths: list[str], warnings: list[InputWarning], *, stage: str | None = None,
                  compile_logs: Sequence[str] = (), tensors_reports: Sequence[str] = (),
                  debug_logs: Sequence[str] = ()) -> CostRun:
    """The graphs named by ``paths`` (files, folders or ``PATH#N``; the optimized stage of dump folders first) and
    their side files: ``debug_logs`` are PT_XLA_DEBUG logs, for torch_xla's own memory figures of each
    compilation; ``compile_logs`` hold compile times, and the first JAX log among them the call sites of the
    dumped modules."""
    records, picked = cost_records(paths, warnings, stage=stage)
    torch_xla = read_torch_xla_memory(list(debug_logs), warnings)
    xla = {r.path: read_xla_memory(r.path) for r in records if r.kind in DUMPED_KINDS}
    repeats = frozenset(p for p, chosen in picked.items() if _repeats_earlier_graph(records[p], chosen))
    told: list[InputWarning] = []
    times = read_compile_times(list(compile_logs), told) if compile_logs else CompileTimes()
    jax_log = _first_jax_log(compile_logs) if any(r.kind in DUMPED_KINDS for r in records) else None
    return CostRun(records, picked, repeats, torch_xla, xla, times, tuple(told), tuple(tensors_reports), jax_log)


def _first_jax_log(logs: Sequence[str]) -> "JaxLog | None":
    """The first of ``logs`` that reads like a JAX compile log (its head decides), read."""
    from hlodiff.dumps.jax_log import looks_like_jax_log, read_jax_log

    for path in logs:
        try:
            with open(path, "rb") as f:
                head = f.read(1 << 16).decode("utf-8", "replace")
        except OSError:
            continue
        if looks_like_jax_log(head):
            return read_jax_log(path)
    return None


def cost_records(paths: list[str], warnings: list[InputWarning], *,
                 stage: str | None = None) -> tuple[list[GraphRecord], dict[int, str | None]]:
    """The graphs named by ``paths`` (files, folders or ``PATH#N``), optimized stage first for dump folders, and
    for those picked out as ``PATH#N`` their position and the stage they were read at."""
    from hlodiff.dumps import iter_graphs, resolve_ref, split_ref

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
    from hlodiff.dumps import iter_graphs

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
    from hlodiff.dumps import iter_graphs

    key = record.cache_key()
    if key is None:
        return False
    for earlier in iter_graphs(record.source, None, stage=stage):
        if earlier.index >= record.index:
            return False
        if earlier.cache_key() == key:
            return True
    return False


# -- one graph: `compare --cost`, the HTML report ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GraphCostEvidence:
    """One graph's cost evidence. ``optimized``: the module's optimized text, when the graph is a module of an XLA
    dump folder read before optimizations and the folder has it (copies, loops and XLA's memory report belong
    there); ``xla``: XLA's memory report of the module costed (the optimized one when there is one);
    ``torch_xla``: torch_xla's figures of the graph's compilation; ``compile_seconds``: its compile time from the
    JAX log beside its dump when ``timed`` (a log was there). ``unreadable``: what stopped the reading."""

    record: GraphRecord
    optimized: GraphRecord | None = None
    xla: XlaMemory | None = None
    torch_xla: TorchXlaMemory | None = None
    timed: bool = False
    compile_seconds: float | None = None
    unreadable: HlodiffError | None = None


def graph_cost_evidence(record: GraphRecord, debug_logs: list[str] | None = None, *,
                        compile_time: bool = False) -> GraphCostEvidence:
    """The evidence of one graph's cost. torch_xla's figures come from ``debug_logs`` when given (the PT_XLA_DEBUG
    logs of the run), else from the one found beside the graph's dump, as ``hlodiff cost`` finds it.
    ``compile_time``: look for the graph's compile time in a JAX log beside its dump (``compare --cost``)."""
    memory = torch_xla_memory_beside(record, debug_logs)
    try:
        optimized = _optimized_sibling(record) if record.kind in DUMPED_KINDS else None
    except HlodiffError as err:
        return GraphCostEvidence(record, torch_xla=memory, unreadable=err)
    if optimized is not None:
        xla = read_xla_memory(optimized.path)
    else:
        xla = read_xla_memory(record.path) if record.kind in DUMPED_KINDS else None
    timed, seconds = (_compile_seconds_beside(record) if compile_time else (False, None))
    return GraphCostEvidence(record, optimized, xla, memory, timed, seconds)


def _compile_seconds_beside(record: GraphRecord) -> tuple[bool, float | None]:
    """Whether a JAX log sits beside the graph's dump, and this module's compile time in it."""
    from hlodiff.dumps import iter_graphs

    logs = logs_beside([record.source]) if record.kind == "xla_dump" else []
    if not logs:
        return False, None
    siblings = list(iter_graphs(record.source, stage=record.stage))
    seconds = compile_seconds(siblings, [True] * len(siblings), read_compile_times(logs))
    return True, next((v for i, v in seconds.items() if siblings[i].index == record.index), None)


def _optimized_sibling(record: GraphRecord) -> GraphRecord | None:
    if record.stage is None or record.stage.endswith(AFTER) or record.module_number is None:
        return None
    folder = os.path.dirname(record.path)
    for f in list_dump_files(folder):
        if f.module_number == record.module_number and f.stage.endswith(AFTER):
            return GraphRecord(path=f.path, index=record.index, kind="xla_dump", start_line=1, source=record.source)
    return None


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


# -- the HTML report's costs ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunGraphsCost:
    """The cost evidence of a run's compiled graphs for the HTML report: per position in the run, the graph's
    evidence, and the compile seconds the logs give."""

    graphs: Mapping[int, GraphCostEvidence] = field(default_factory=dict)
    seconds: Mapping[int, float] = field(default_factory=dict)


def run_graphs_cost(records: list[GraphRecord], compiled: list[bool], logs: Sequence[str] = (),
                    debug_logs: list[str] | None = None) -> RunGraphsCost:
    """The evidence of each compiled graph's cost, with compile seconds where ``logs`` (jax_log_compiles) have
    them and torch_xla's memory figures from ``debug_logs`` (default: the PT_XLA_DEBUG log beside each dump)."""
    seconds = compile_seconds(records, compiled, read_compile_times(list(logs))) if logs else {}
    graphs = {position: graph_cost_evidence(record, debug_logs)
              for position, (record, was_compiled) in enumerate(zip(records, compiled)) if was_compiled}
    return RunGraphsCost(graphs, seconds)
