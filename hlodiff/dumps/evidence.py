"""The one evidence model: a run as the analysis receives it (issue 37).

:func:`read_run` turns what the user pointed at (the dumps and the side files :func:`~hlodiff.dumps.run_folder.
discover` found beside them) into one :class:`Run`: its graphs in order (their :class:`GraphRecord`, whose text is
read when asked for), the PT_XLA_DEBUG compilations by graph hash, and every side source attached to what it
concerns: stacks and constant values from HLO protos (per graph), the compile options XLA wrote beside a module
(per graph), live-tensor reports (aligned with the graphs' executions), the JAX compile log (joined to the dumped
modules), Dynamo's logs, compile times, and the user's Python files (through ``--source-map``). ``explain/`` and
``diff/`` take a ``Run`` (or a part of it) and read nothing themselves, so an analysis can be run on evidence built
in memory (``Run([record, record])``, no side source at all) and a fact's origin is one layer away.

**Lazy where it must be.** Protos, reports and logs can be as large as the dump: each is read when the analysis asks
for it, at the point where it asks (so the warnings a reader appends come in the order they always came), and what
is read is bounded by what is asked (the report entries of the graphs looked at, the JAX log entries of the modules
dumped). A record's HLO text stays in its file until parsed. Protos are matched per pass (:meth:`Run.protos`): a
pass over the graphs claims the protos it matches, as it always did.

**It grows.** :meth:`Run.add` and :meth:`Run.add_events` take graphs and PT_XLA_DEBUG events one at a time, and
:meth:`Run.window` is the same run seen through some of its graphs: how the live story (``record --live``,
``watch``) explains each graph as it arrives with the same side sources as the final report.

This module is the boundary: it may read (it is ``dumps/``); the analysis imports its types only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterable, Sequence

from hlodiff.dumps.graph_record import LOADED_STAGE, TRACED_KINDS, GraphRecord
from hlodiff.dumps.run_folder import RunInputs
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.errors import GraphCutOff, HlodiffError, InputWarning
from hlodiff.hlo.model import Module, SourceFrame

if TYPE_CHECKING:
    from hlodiff.dumps.compile_times import CompileTimes
    from hlodiff.dumps.debug_log import CompilationEvent
    from hlodiff.dumps.dynamo_log import DynamoLog
    from hlodiff.dumps.jax_log import JaxCompilation
    from hlodiff.dumps.report_alignment import Alignment, GraphOutputs

_ELIDED = "{...}"
"""How XLA's text prints a constant whose values it leaves out."""


class GraphProtos:
    """One pass's protos: the stacks and constant values lent to each parsed graph, from the proto XLA dumped beside
    its module (``module_NNNN.*.hlo.pb``) or, for a save file's graph, from an XLA dump beside the save file (each
    proto claimed by one compiled graph: :class:`~hlodiff.dumps.proto_beside.ProtosBeside`)."""

    def __init__(self) -> None:
        from hlodiff.dumps.proto_beside import ProtosBeside

        self._beside = ProtosBeside()

    def complete(self, record: GraphRecord, module: Module, key: str | None, text: str,
                 warnings: list[InputWarning] | None) -> None:
        """Lend ``module`` (parsed from ``text``) its full stacks and the values its text prints as ``{...}``."""
        from hlodiff.dumps.hlo_proto import fill_elided, stacks_for, values_for

        if record.proto_path:
            module.full_stacks = stacks_for(record.proto_path, warnings)
            if _ELIDED in text:
                fill_elided(module, values_for(record.proto_path, None))
        elif record.kind in TRACED_KINDS:  # a save file's graph: its proto may sit in an XLA dump beside it
            module.full_stacks = self._beside.stacks(record.path, module, key, warnings)
            if _ELIDED in text:
                fill_elided(module, self._beside.values(key))

    @staticmethod
    def stacks(record: GraphRecord) -> dict[str, tuple[SourceFrame, ...]]:
        """The stacks of the proto dumped beside the record's own module (none when there is no such proto)."""
        from hlodiff.dumps.hlo_proto import stacks_for

        return stacks_for(record.proto_path, None) if record.proto_path else {}


class NoProtos(GraphProtos):
    """Evidence built in memory: no proto lends anything."""

    def __init__(self) -> None:
        pass

    def complete(self, record, module, key, text, warnings) -> None:
        return None

    @staticmethod
    def stacks(record: GraphRecord) -> dict[str, tuple[SourceFrame, ...]]:
        return {}


@dataclass(slots=True, eq=False)
class Run:
    """One run's evidence: its graphs in order and every side source, read when the analysis asks.

    Built from disk by :func:`read_run`; from records already read as ``Run(records)`` (protos and compile options
    still come from beside the records' files); wholly in memory as ``Run(records, on_disk=False,
    sources=NoSources())``, with ``events`` or ``reports`` of its own for a unit test of one rule."""

    records: list[GraphRecord] = field(default_factory=list)
    inputs: RunInputs = field(default_factory=lambda: RunInputs([]))
    """Where the evidence came from: the dumps and the side files (named in the JSON document's ``inputs``)."""
    events: dict[str, "CompilationEvent"] = field(default_factory=dict)
    """PT_XLA_DEBUG compilations by graph hash (the first one of each hash)."""
    reports: dict = field(default_factory=dict)
    """Live-tensor reports already aligned, by (dump path, entry index): evidence built in memory."""
    time_logs: list[str] = field(default_factory=list)
    """Logs holding compile times: the JAX log, torch_xla's metrics report, ``compile_times.tsv``."""
    sources: SourceLines = field(default_factory=SourceLines)
    on_disk: bool = True
    """Protos and compile-option files are read from beside the records' paths (False: evidence built in memory,
    nothing is read)."""
    late_warnings: list[InputWarning] | None = None
    """Where a side source read at the analysis's first question reports damage it found (the list ``read_run``
    was given, printed after the analysis); None: such damage is an error."""
    _times: object = None
    cut: list[GraphCutOff] = field(default_factory=list)
    """Graphs of a save-tensors file cut off mid-write, not read (review F10: they ran, nothing is known of them)."""

    # -- the graphs ---------------------------------------------------------------------------------------------

    def add(self, records: Iterable[GraphRecord]) -> None:
        """More graphs, in run order (a run followed while it runs)."""
        self.records.extend(records)

    def add_events(self, events: dict[str, "CompilationEvent"]) -> None:
        """More PT_XLA_DEBUG compilations (the first one of each graph hash is kept)."""
        for graph_hash, event in events.items():
            self.events.setdefault(graph_hash, event)

    def window(self, records: list[GraphRecord]) -> "Run":
        """The same run seen through ``records`` (some of its graphs): the events of those graphs, the same side
        sources."""
        events = {r.graph_hash: self.events[r.graph_hash] for r in records
                  if r.graph_hash and r.graph_hash in self.events}
        return Run(list(records), self.inputs, events, dict(self.reports), list(self.time_logs), self.sources,
                   self.on_disk)

    def protos(self) -> GraphProtos:
        """A fresh pass over the protos (each pass matches save-file graphs to the dump's protos anew)."""
        return GraphProtos() if self.on_disk else NoProtos()

    def module_options(self, record: GraphRecord) -> dict[str, tuple[str, ...]] | None:
        """The compile options XLA wrote beside the record's module, flattened (None without them)."""
        if not self.on_disk:
            return None
        from hlodiff.dumps.module_options import module_options

        return module_options(record)

    # -- side sources ---------------------------------------------------------------------------------------------

    @property
    def report_files(self) -> list[str]:
        return self.inputs.tensors_reports

    def align_reports(self, dumps: Sequence[tuple[str, Sequence["GraphOutputs"]]], wanted: set[tuple[str, int]],
                      warnings: list[InputWarning] | None) -> dict[tuple[str, int], "Alignment"]:
        """The live-tensor reports aligned with the executions of ``dumps``, streaming; only keys ``wanted``."""
        from hlodiff.dumps.report_alignment import align_files

        return align_files(self.report_files, dumps, wanted=wanted, warnings=warnings)

    @property
    def jax_logs(self) -> list[str]:
        return self.inputs.jax_logs

    def jax_joined(self, names: list[str], wanted, warnings: list[InputWarning] | None
                   ) -> list[list["JaxCompilation | None"]]:
        """Per JAX log, the compilation each of the dumped modules ``names`` came from (None: not found); only
        the ``wanted`` compilations are kept while reading."""
        from hlodiff.dumps.jax_log import join_modules, read_jax_log

        return [join_modules(read_jax_log(path, warnings, wanted), names, warnings) for path in self.jax_logs]

    def jax_whole_run(self) -> list["JaxCompilation"]:
        """The JAX compilations joined over the whole run when this evidence is a view of part of it (a live window,
        :class:`hlodiff.dumps.live_evidence.LiveEvidence`): a context JAX named for a function outside the window still
        ties the window's eager op on the same line to it (review 12, F5). Empty for a whole run (its join is complete)."""
        return []

    @property
    def dynamo_logs(self) -> list[str]:
        return getattr(self.inputs, "dynamo_logs", [])

    @property
    def empty_logs(self) -> list[str]:
        """Empty stderr / TORCH_LOGS files found beside the dump (review 19, F6)."""
        return getattr(self.inputs, "empty_logs", [])

    def read_dynamo(self, warnings: list[InputWarning]) -> list["DynamoLog"]:
        """Each Dynamo log given or found (TORCH_LOGS text, TORCH_TRACE folders), read."""
        from hlodiff.dumps.dynamo_read import read_dynamo_log

        return [read_dynamo_log(p, warnings) for p in self.dynamo_logs]

    def compile_times(self) -> "CompileTimes | None":
        """The compile times of :attr:`time_logs` (read once; None without such logs)."""
        if not self.time_logs:
            return None
        if self._times is None:
            from hlodiff.dumps.compile_times import read_compile_times

            seen: list[InputWarning] | None = None if self.late_warnings is None else []
            self._times = read_compile_times(list(self.time_logs), seen)
            if seen:  # damage (a row that is no number) is told; a log of cache misses without times is fine
                self.late_warnings.extend(w for w in seen if w.line is not None)
        return self._times

    def compile_seconds(self, records: list[GraphRecord], compiled: list[bool]) -> dict[int, float]:
        """Seconds per compiled graph, by position in ``records`` (empty without compile times)."""
        times = self.compile_times()
        if times is None:
            return {}
        from hlodiff.dumps.compile_times import compile_seconds

        return compile_seconds(records, compiled, times)

    # -- what a growing run holds now ----------------------------------------------------------------------------

    def state(self, records: Sequence[GraphRecord] | None = None) -> tuple:
        """What an analysis of ``records`` (by default every graph) reads now, as a value that equals an earlier
        one's only when nothing it reads has changed since: the graphs (by identity: a live run's records are
        whole once read), the PT_XLA_DEBUG events and aligned reports held, and each side file's path and size
        (a folder's entries with theirs). A growing run's files only grow, so a look again at an unchanged state
        can keep what the last look concluded (:class:`hlodiff.explain.live_dynamo.LiveDynamo`)."""
        inputs = self.inputs
        files = (*inputs.tensors_reports, *inputs.debug_logs, *inputs.jax_logs, *self.dynamo_logs, *self.time_logs)
        return (tuple(map(id, self.records if records is None else records)), len(self.events), len(self.reports),
                tuple((p, _size_of(p)) for p in files))


def _size_of(path: str) -> object:
    """A file's size, a folder's entries with their sizes (TORCH_TRACE: one log per process), None when gone."""
    try:
        if os.path.isdir(path):
            return tuple(sorted((e.name, _size_of(e.path) if e.is_dir() else e.stat().st_size)
                                for e in os.scandir(path)))
        return os.path.getsize(path)
    except OSError:
        return None


def read_run(inputs: RunInputs, warnings: list[InputWarning], *, stage: str | None = None,
             sources: SourceLines | None = None) -> Run:
    """The run at ``inputs``: its graphs read (each text stays in its file until parsed), its PT_XLA_DEBUG
    compilations read; the other side sources are read when the analysis asks for them. What finding and reading
    noticed goes to ``warnings``, in that order. No graph at all is an error naming the first dump."""
    from hlodiff.dumps._io import found_text_files
    from hlodiff.dumps.compile_times import logs_beside

    warnings.extend(getattr(inputs, "warnings", ()))  # what finding the side files noticed (a log kept twice)
    run = read_graphs(inputs, warnings, stage=stage)
    if not run.records and not getattr(inputs, "dynamo_logs", None):  # Dynamo's log alone: it stopped before XLA
        raise HlodiffError("no complete graph found", path=inputs.paths[0] if inputs.paths else None)
    run.events = debug_events(inputs.debug_logs, warnings)
    run.time_logs = [*getattr(inputs, "jax_logs", []), *found_text_files(logs_beside(inputs.paths), warnings)]
    run.sources = sources or SourceLines()
    run.late_warnings = warnings
    return run


def read_graphs(inputs: RunInputs, warnings: list[InputWarning], *, stage: str | None = None) -> Run:
    """The run at ``inputs`` for its graphs alone (``inspect``): the same dumps :func:`read_run` reads, found in
    the same inputs (a ``hlodiff record`` folder, a run folder holding a save file or a dump folder), in run order;
    the side files are named in ``inputs`` and left unread. A dump cut before its first graph was complete is a run
    of no graph (the reader warned); a save file's graph cut mid-write is kept as evidence (``cut``)."""
    found: list[InputWarning] = []
    records = collect_records(inputs.paths, found, stage=stage)
    if stage is None and any(r.kind == "xla_dump" and r.stage == LOADED_STAGE for r in records):
        records, again = _all_optimized(inputs.paths, records)
        found = again + [w for w in found if isinstance(w, GraphCutOff) or not _stage_fallback(w)]
    warnings.extend(found)
    return Run(records, inputs, cut=[w for w in found if isinstance(w, GraphCutOff)])


def _all_optimized(paths: list[str], records: list[GraphRecord]) -> tuple[list[GraphRecord], list[InputWarning]]:
    """A dump holding programs JAX loaded from its persistent compilation cache: XLA dumps such a program after
    optimizations only (``module_N.NAME.after_optimizations.txt``, as ``compare-runs`` reads it), so comparing it
    with the unoptimized text of a compiled module would mostly show XLA's rewrites. Each compiled module is
    read at its optimized stage too where the dump kept it (else as it is), and the run says so once."""
    found: list[InputWarning] = []
    optimized = {(r.source, r.module_number): r for r in collect_records(paths, found, stage="after_optimizations")
                 if r.kind == "xla_dump"}
    out = [replace(optimized[(r.source, r.module_number)], index=r.index)  # its place in the run, as read first
           if r.kind == "xla_dump" and (r.source, r.module_number) in optimized else r for r in records]
    loaded = [r for r in out if r.kind == "xla_dump" and r.stage == LOADED_STAGE]
    unoptimized = sum(1 for r in out if r.kind == "xla_dump" and not r.stage.endswith(LOADED_STAGE))
    n = len(loaded)
    also = (f"; {unoptimized} compiled module{'s' if unoptimized != 1 else ''} kept no optimized text and "
            f"{'are' if unoptimized != 1 else 'is'} compared before optimizations") if unoptimized else ""
    found = [w for w in found if not isinstance(w, GraphCutOff)]  # the first read's (save files) are kept
    found.insert(0, InputWarning(
        f"{n} module{'s' if n != 1 else ''} ({', '.join(str(r.module_number) for r in loaded[:4])}"
        f"{', ...' if n > 4 else ''}) {'were' if n != 1 else 'was'} loaded from a persistent compilation cache, "
        f"not compiled: XLA dumped only {'their' if n != 1 else 'its'} optimized HLO, so modules are compared "
        f"after optimizations{also}", loaded[0].source if loaded else None))
    return out, found


def _stage_fallback(warning: InputWarning) -> bool:
    """The default read's note that a module had no unoptimized text (a loaded program: said once instead)."""
    return "has no readable before_optimizations text" in warning.message


def debug_events(logs: Iterable[str], warnings: list[InputWarning] | None) -> dict[str, "CompilationEvent"]:
    """PT_XLA_DEBUG compilations by graph hash, the first one of each hash, over the logs in order."""
    from hlodiff.dumps.debug_log import read_compilations

    events: dict[str, CompilationEvent] = {}
    for log in logs:
        for event in read_compilations(log, warnings):
            if event.graph_hash:
                events.setdefault(event.graph_hash, event)
    return events


def collect_records(paths: list[str], warnings: list[InputWarning], *, stage: str | None = None
                    ) -> list[GraphRecord]:
    """The graphs of each path in order; a ``PATH#N`` reference stands for that one graph."""
    from hlodiff.dumps import iter_graphs, resolve_ref, split_ref

    records: list[GraphRecord] = []
    for path in paths:
        if split_ref(path)[1] is not None:
            records.append(resolve_ref(path, warnings, stage=stage))
        else:
            records.extend(iter_graphs(path, warnings, stage=stage))
    return records
