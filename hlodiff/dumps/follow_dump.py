"""Following an XLA dump folder while a run writes it (:mod:`hlodiff.dumps.follow` has the why): with its
``PT_XLA_DEBUG_LEVEL=2`` log (:class:`ExecutionsFollower`, one record per execution), alone
(:class:`DumpFollower`, one record per module), or not yet known (:class:`~hlodiff.dumps.follow.UndecidedFollower`,
beside :func:`~hlodiff.dumps.follow.follower_for` which it asks again: ``watch`` started before the job wrote its log).
"""

from __future__ import annotations

import os

from hlodiff.dumps.anomaly_checks import CHECK_KEY
from hlodiff.dumps.debug_log import CompilationEvent, ExecutionEvent
from hlodiff.dumps.follower_base import Follower, GrowingDebugLog, grown_size, read_range
from hlodiff.dumps.graph_record import LOADED_STAGE, GraphRecord
from hlodiff.errors import InputWarning

_TORCH_XLA_MODULES = ("SyncTensorsGraph", "IrToHlo")


_KNOWN_FILES: dict[str, object] = {}
"""Path -> its :class:`~hlodiff.dumps.xla_dump.DumpFile` (or None: not HLO), so that each poll opens only the
files that are new since the last one; a file that could not be read yet is not remembered."""


def module_files(dump: str) -> dict[int, list]:
    """Module number -> its HLO files (:class:`hlodiff.dumps.xla_dump.DumpFile`), in stage order, listed now; a
    module file is opened once (to read its ``HloModule`` line), at the first poll that sees it."""
    from hlodiff.dumps.xla_dump import DumpFile, MODULE_NAME_RE, NOT_HLO_SUFFIXES, read_dump_file

    out: dict[int, list] = {}
    try:
        entries = list(os.scandir(dump))
    except OSError:
        return out
    for entry in entries:
        m = MODULE_NAME_RE.match(entry.name)
        if m is None or "thunk" in entry.name or m.group(2).endswith(NOT_HLO_SUFFIXES):
            continue
        if entry.path not in _KNOWN_FILES:
            if not entry.is_file() or b"\n" not in read_range(entry.path, 0, 1 << 16):
                continue  # its HloModule line is not whole yet: looked at again next time
            if len(_KNOWN_FILES) > 1 << 16:
                _KNOWN_FILES.clear()
            _KNOWN_FILES[entry.path] = read_dump_file(entry.path, int(m.group(1)), m.group(2))
        found = _KNOWN_FILES[entry.path]
        if found is not None:
            out.setdefault(found.module_number, []).append(found)
    for files in out.values():
        files.sort(key=DumpFile.order)
    return out


def torch_xla_modules(by_number: dict[int, list]) -> bool:
    """The first module of a dump listed by :func:`module_files` is torch_xla's (``SyncTensorsGraph.N``,
    ``IrToHlo.N``): a ``PT_XLA_DEBUG`` log may come with it; a JAX module never has one."""
    first = by_number[min(by_number)][0]
    return first.module_name.startswith(_TORCH_XLA_MODULES)


def _chosen(files: list, stage: str | None):
    from hlodiff.dumps.xla_dump import select

    chosen = select(files, stage)
    return chosen[0] if chosen else None


class ExecutionsFollower(Follower):
    """A recording (or a dump folder with its ``PT_XLA_DEBUG_LEVEL=2`` log): one record per execution."""

    def __init__(self, source: str, log: str, dump: str, stage: str | None = None):
        Follower.__init__(self, source)
        self.log = GrowingDebugLog(log, self.warnings)
        self.dump, self.stage = dump, stage
        self.compilations: list[CompilationEvent] = []
        self.modules: dict[str, GraphRecord] = {}  # graph hash -> the module of its compilation
        self.waiting: list[ExecutionEvent] = []  # executions whose module is not in the dump yet
        self.index = 0
        self.paired = 0
        self.modules_only: DumpFollower | None = None
        """A recording of a program that is not torch_xla (JAX): no log will come, each module is a compilation."""
        self.executions_seen = 0
        self.compilations_only = False
        """A ``PT_XLA_DEBUG_LEVEL=1`` log (review 9, F1): no execution follows its compilations (level 2 writes one
        right after each), known once two compilations came without one, or at close; each compilation is then a
        record with its sync's frames, cache hits unknown (``hits_seen=False``), as at exit."""
        self.emitted = 0
        self.checks: dict[str, list[GraphRecord]] = {}
        """Step graph hash -> autograd anomaly mode's NaN checks that cut it (:mod:`hlodiff.dumps.anomaly_checks`),
        told before each of its executions, as the whole-log read does (crossings round 7: the live story of
        r17_tx_detect_anomaly was silent)."""
        self.checks_scanned = 0
        """Compilations (in log order) already looked at as a check."""

    def files(self) -> list[str]:
        return [self.log.path, self.dump]

    def poll(self) -> list[GraphRecord]:
        if self.modules_only is None and not self.compilations and self._not_torch_xla():
            self.modules_only = DumpFollower(self.dump, self.stage)
        if self.modules_only is not None:
            self.modules_only.closed = self.closed
            return self.modules_only.poll()
        for event in self.log.new_events(self.closed):
            if isinstance(event, CompilationEvent):
                self.compilations.append(event)
                if event.graph_hash:
                    self.events.setdefault(event.graph_hash, event)
            else:
                self.waiting.append(event)
                self.executions_seen += 1
        self._pair_modules()
        if not self.executions_seen and self.compilations and (self.closed or len(self.compilations) >= 2):
            self.compilations_only = True
        if self.compilations_only:
            return self._compilations()
        out = []
        while self.waiting:
            event = self.waiting[0]
            module = self.modules.get(event.graph_hash or "")
            if not self.closed and self._checks_unpaired(event):
                break  # a NaN check compiled before it is still being written
            if module is None:
                if not self.closed and self.paired < len(self.compilations):
                    break  # its module is still being written
                self.warnings.append(InputWarning(
                    f"execution {self.index} (graph hash {event.graph_hash}) has no compiled HLO in the dump "
                    "(compiled before the capture started?); skipped", self.log.path, event.line))
                self.waiting.pop(0)
                self.index += 1
                continue
            self.waiting.pop(0)
            for check in self._checks_before(event):
                out.append(GraphRecord(path=check.path, index=self.index, kind="executions", start_line=1,
                                       source=self.source, graph_hash=f"{CHECK_KEY}{check.module_number}",
                                       module_number=check.module_number, module_name=check.module_name,
                                       stage=check.stage, proto_path=check.proto_path))
                self.index += 1
            out.append(GraphRecord(path=module.path, index=self.index, kind="executions", start_line=1,
                                   source=self.source, graph_name=event.graph_name, frames=event.frames,
                                   graph_hash=event.graph_hash, module_number=module.module_number,
                                   module_name=module.module_name, stage=module.stage,
                                   proto_path=module.proto_path))
            self.index += 1
        return out

    def _checks_unpaired(self, event: ExecutionEvent) -> bool:
        """A compilation the log does not announce, logged before ``event``, whose module is not in the dump yet:
        it may be a NaN check that runs before this execution."""
        return any(not c.announced and c.line < event.line for c in self.compilations[self.paired:])

    def _checks_before(self, event: ExecutionEvent) -> list[GraphRecord]:
        """The anomaly-mode checks told before this execution: those compiled since the last execution placed
        belong to this one's graph (:func:`hlodiff.dumps.anomaly_checks.checked_steps`: the first execution logged
        after a check compiled), and every execution of that graph ran them again from the cache."""
        from hlodiff.dumps.anomaly_checks import is_anomaly_check

        if event.graph_hash:
            mine = self.checks.setdefault(event.graph_hash, [])
            while self.checks_scanned < self.paired and self.compilations[self.checks_scanned].line < event.line:
                k = self.checks_scanned
                self.checks_scanned += 1
                module = self.modules.get(f"#{k}")
                if (not self.compilations[k].announced and module is not None and is_anomaly_check(module)
                        and module not in mine):
                    mine.append(module)
        return self.checks.get(event.graph_hash or "", [])

    def _compilations(self) -> list[GraphRecord]:
        out = []
        while self.emitted < self.paired:
            event = self.compilations[self.emitted]
            module = self.modules.get(event.graph_hash or f"#{self.emitted}")
            self.emitted += 1
            if module is None:
                continue
            out.append(GraphRecord(path=module.path, index=self.index, kind="executions", start_line=1,
                                   source=self.source, graph_name=event.graph_name, frames=event.frames,
                                   graph_hash=event.graph_hash, module_number=module.module_number,
                                   module_name=module.module_name, stage=module.stage,
                                   proto_path=module.proto_path, hits_seen=False))
            self.index += 1
        return out

    def _not_torch_xla(self) -> bool:
        """The dump's first module is not torch_xla's (``SyncTensorsGraph.N``, ``IrToHlo.N``): a JAX program run
        under ``record``, whose log never comes."""
        by_number = module_files(self.dump)
        return bool(by_number) and not torch_xla_modules(by_number)

    def _pair_modules(self) -> None:
        """The k-th compilation of the log is the k-th module of the dump (its files are complete by the time the
        log says the compilation ended)."""
        from hlodiff.dumps.hlo_proto import proto_beside

        if self.paired >= len(self.compilations):
            return
        from hlodiff.dumps.executions import runtime_module

        by_number = module_files(self.dump)
        # modules the runtime compiles without a log entry (SPMD's ReplicateShardedData) are never paired, or every
        # later module would go to the next compilation (as scan_executions does at exit)
        numbers = [n for n in sorted(by_number)
                   if not any(runtime_module(getattr(f, "module_name", None) or "") for f in by_number[n])]
        for k in range(self.paired, min(len(self.compilations), len(numbers))):
            chosen = _chosen(by_number[numbers[k]], self.stage)
            event = self.compilations[k]
            if chosen is None:
                break
            self.paired = k + 1
            record = GraphRecord(path=chosen.path, index=k, kind="xla_dump", start_line=1, source=self.dump,
                                 module_number=chosen.module_number, module_name=chosen.module_name,
                                 stage=chosen.stage, proto_path=proto_beside(chosen.path))
            self.modules[event.graph_hash or f"#{k}"] = record


class DumpFollower(Follower):
    """An XLA dump folder alone: one record per module (each one is a compilation)."""

    def __init__(self, dump: str, stage: str | None = None):
        Follower.__init__(self, dump)
        self.stage = stage
        self.done: set[int] = set()
        self.sizes: dict[str, int] = {}
        self.index = 0
        self.optimized = False
        """A program JAX loaded from its persistent cache was seen (dumped after optimizations only): each later
        module is read at its optimized stage where the dump keeps it, as the report at exit reads the whole dump
        (:func:`hlodiff.dumps.evidence.read_run`), so that they compare with it and not with XLA's rewrites."""

    def files(self) -> list[str]:
        return [self.source]

    def poll(self) -> list[GraphRecord]:
        from hlodiff.dumps.hlo_proto import proto_beside

        by_number = module_files(self.source)
        numbers = sorted(n for n in by_number if n not in self.done)
        out = []
        for position, number in enumerate(numbers):
            chosen = _chosen(by_number[number], self.stage)
            if chosen is None:
                continue
            later = position + 1 < len(numbers)
            if self.stage is None and chosen.stage == LOADED_STAGE:
                self.optimized = True
            if self.stage is None and self.optimized:
                optimized = _chosen(by_number[number], LOADED_STAGE)
                if optimized is None and not (self.closed or later):
                    break  # compiled, its optimized text not written yet
                chosen = optimized or chosen
            if not (self.closed or later or self._settled(chosen.path)):
                break  # modules are taken in order: a later one waits for this one
            self.done.add(number)
            out.append(GraphRecord(path=chosen.path, index=self.index, kind="xla_dump", start_line=1,
                                   source=self.source, module_number=number, module_name=chosen.module_name,
                                   stage=chosen.stage, proto_path=proto_beside(chosen.path)))
            self.index += 1
        return out

    def _settled(self, path: str) -> bool:
        """Same size as at the previous poll, and the text ends with a computation's closing brace."""
        size = grown_size(path, -1)
        before, self.sizes[path] = self.sizes.get(path), size
        if size <= 0 or before != size:
            return False
        tail = read_range(path, max(0, size - 64), size).rstrip()
        return tail.endswith(b"}")
