"""A capture followed while a run writes it: the entry layer's glue between the followers that read the growing files
(:mod:`hlodiff.dumps.follow`) and the live story's analysis (:class:`hlodiff.explain.live.LiveExplainer`), which
reads nothing itself. Each poll hands the new graphs to the explainer, whose :class:`~hlodiff.dumps.evidence.Run`
grows with them (the follower's PT_XLA_DEBUG events and the live-tensor reports once they are written).
``hlodiff watch`` and ``record --live`` run it through :func:`watch_path` and :func:`live_monitor` below (the
polling loop; :mod:`hlodiff.api` hands them on).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.live_evidence import LiveEvidence
from hlodiff.dumps.run_folder import RunInputs
from hlodiff.errors import InputWarning
from hlodiff.explain.live import LiveExplainer
from hlodiff.explain.live_events import LiveEvent, Told
from hlodiff.render.live import StepOrder


class LiveRun:
    """A followed capture and its explainer: :meth:`poll` reads what the run appended and returns the events it
    made true; :meth:`close` (the writer is done) reads the rest and looks at each story once more."""

    def __init__(self, path: str, *, stage: str | None = None):
        from hlodiff.dumps.follow import LogFollower, follower_for

        self.path = path
        self.follower = follower_for(path, stage)
        self.log_only = isinstance(self.follower, LogFollower)
        self.report_files = [_report_beside(path)]
        # the evidence grows as the follower reads: its PT_XLA_DEBUG events are the run's, its reports are added
        # once they exist
        self.run = LiveEvidence(inputs=RunInputs([path]), events=self.follower.events)
        self.jax_folders = _beside(path)
        self.explainer = LiveExplainer(self.run, warnings=self.follower.warnings)
        self.explainer.find_dynamo_logs = self._find_dynamo_logs
        # Imported now, while the job starts, not when the first recompilation is told: the differ imports
        # networkx on first use (0.3-0.8 s on a loaded machine), which would delay the first live line by as much.
        import networkx  # noqa: F401
        import hlodiff.explain.recompile  # noqa: F401
        import hlodiff.explain.verdict  # noqa: F401
        self.bridge_seen = False
        self.next_search = 1
        """Recompilations (past each family's first compilation) at which Dynamo's log is next looked for."""
        self.dynamo_sizes: tuple = ()
        self.log_steps = 0
        self.log_seen: set[str] = set()
        from hlodiff.explain.live_dynamo import GuardTrees

        self.trees = GuardTrees()
        self.tree_read: dict[str, int] = {}  # a text log -> the offset read up to (its whole lines)
        self.order = StepOrder()

    @property
    def warnings(self) -> list[InputWarning]:
        return self.follower.warnings

    def poll(self) -> list[LiveEvent]:
        records = self.follower.poll()
        return self.order.mark(self._after(records))

    def close(self) -> list[LiveEvent]:
        events = self._after(self.follower.close())
        if not self.log_only:
            events += self._dynamo([], final=True)
        return self.order.mark(events + self.explainer.finish())

    def _after(self, records: list[GraphRecord]) -> list[LiveEvent]:
        # an empty one is no report yet (record under torch.compile may see no sync at all): read as one, it is an
        # error, and every graph of the run would be told as unread (the report at exit skips it too)
        beside = [p for p in self.report_files if os.path.isfile(p) and os.path.getsize(p)]
        if beside or not self.run.inputs.tensors_reports:  # once found by content, kept (a poll without new
            self.run.inputs.tensors_reports = beside          # graphs, the last one at close, must not drop it)
        if not self.run.inputs.tensors_reports and records:
            self.run.inputs.tensors_reports = _found_in(self.jax_folders[:1], "tensors_reports")
        if not self.run.inputs.jax_logs and any(r.kind == "xla_dump" for r in records):
            self.run.inputs.jax_logs = _found_in(self.jax_folders, "jax_logs")
        if self.log_only:
            return self._log_events()
        events = self.explainer.feed(records)
        return events + self._dynamo(records)

    def _dynamo(self, records: list[GraphRecord], final: bool = False) -> list[LiveEvent]:
        """Dynamo's lines: its log is looked for once the bridge's graphs appear, and read again when it grew."""
        from hlodiff.explain.dynamo_bridge import bridge_run

        if not self.run.inputs.dynamo_logs:
            bridge = any(bridge_run(r.frames) for r in records)
            # at the run's end the log is looked for whatever the graphs showed: a compiled module that broke at
            # its first line (a module backward hook: Dynamo round 27, d27_module_backward_hook) makes no bridge
            # graph and compiles nothing again, and its break is Dynamo's whole story
            if not bridge and not final and not self._recompiled_again():
                return []
            self.bridge_seen = self.bridge_seen or bridge
            self.run.inputs.dynamo_logs = _dynamo_logs(self.path)
            if not self.run.inputs.dynamo_logs:
                return []
        sizes = _sizes(self.run.inputs.dynamo_logs)
        if sizes == self.dynamo_sizes and not final:
            return []
        self.dynamo_sizes = sizes
        self._read_trees()
        return self.explainer.look_at_dynamo(final, self.trees)

    def _find_dynamo_logs(self) -> None:
        """Dynamo's log looked for while a recompilation is being told (the explainer asks, at the same 1st, 2nd,
        4th, ... recompilations :meth:`_recompiled_again` allows): a function Dynamo ran uncompiled after a break
        makes no bridge graph, and its step graphs are told by the break once the log is read (Dynamo round 20,
        d20_layerdrop_random)."""
        if not self.run.inputs.dynamo_logs and self._recompiled_again():
            self.run.inputs.dynamo_logs = _dynamo_logs(self.path)

    def _recompiled_again(self) -> bool:
        """Dynamo round 7 (dyn_tolist_split): a function Dynamo gave up (WON'T CONVERT) runs eagerly, and no bridge
        graph ever comes to say the run is torch.compile's: its log is looked for at the 1st, 2nd, 4th, 8th, ...
        compilation past the families' first ones (a recompilation), a few folder reads in any run."""
        again = self.explainer.compilations - len(self.explainer.families)
        if again < self.next_search:
            return False
        self.next_search = max(1, again) * 2
        return True

    def _read_trees(self) -> None:
        """Which guard trees Dynamo's text logs have written in full (:class:`~hlodiff.explain.live_dynamo.
        GuardTrees`): the new whole lines of each log, read once."""
        from hlodiff.dumps.dynamo_guards import guard_tree_lines
        from hlodiff.dumps.follower_base import read_range

        for p in self.run.inputs.dynamo_logs:
            if not os.path.isfile(p):
                continue
            start = self.tree_read.get(p, 0)
            size = os.path.getsize(p)
            if size <= start:
                continue
            data = read_range(p, start, size)
            end = data.rfind(b"\n") + 1
            self.tree_read[p] = start + end
            for cid, ends_tree in guard_tree_lines(data[:end]):
                self.trees.used = True
                if ends_tree:
                    self.trees.complete.add(cid)

    def _log_events(self) -> list[LiveEvent]:
        """A log without HLO: each compilation after the first of its frames, as torch_xla told it."""
        from hlodiff.dumps.debug_log import CompilationEvent
        from hlodiff.hlo.model import user_frame

        out = []
        for event in self.follower.take_events():
            if not isinstance(event, CompilationEvent):
                self.log_steps += 1
                continue
            if not event.announced:  # no hash, no frames: nothing to tell without the HLO
                continue
            where = user_frame(event.frames) or (event.frames[0] if event.frames else None)
            label = f"sync at {where.short()}" if where else "unknown line"
            first = label not in self.log_seen
            self.log_seen.add(label)
            told = Told("unknown", f"torch_xla compiled graph {event.graph_hash} ({event.cause}); the log has no "
                        "HLO, so what changed is unknown (capture with hlodiff record, or add an XLA dump)",
                        where, None)
            out.append(LiveEvent("compiled" if first else "log", self.log_steps, event.graph_hash or "?", label,
                                 None if first else told, graphs=self.log_steps))
        return out


def _beside(path: str) -> list[str]:
    """The folders a JAX log of the capture at ``path`` may be in: the folder, and the one holding it (a dump
    folder's run folder), as ``explain-recompile`` looks."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    return [folder, os.path.dirname(os.path.normpath(os.path.abspath(folder)))]


def _found_in(folders: list[str], kind: str) -> list[str]:
    """The first side file of ``kind`` (a :class:`RunInputs` field: ``jax_logs``, ``tensors_reports``) found by
    content in ``folders``, as ``explain-recompile`` finds it (:func:`~hlodiff.dumps.run_folder.side_files_in`),
    a plain file only (a compressed one is no growing log): [] while none is written yet."""
    from hlodiff.dumps.run_folder import side_files_in

    for folder in folders:
        found = [p for p in getattr(side_files_in(folder), kind) if not p.endswith(".gz")]
        if found:
            return found[:1]
    return []


def _dynamo_logs(path: str) -> list[str]:
    """Dynamo's logs (TORCH_LOGS text, a TORCH_TRACE folder) found beside the capture by content, as
    ``explain-recompile`` finds them: [] while none is written yet."""
    from hlodiff.dumps.run_folder import discover
    from hlodiff.errors import HlodiffError

    try:
        return list(discover([path], None, None).dynamo_logs)
    except HlodiffError:
        return []


def _sizes(paths: list[str]) -> tuple:
    """The sizes of files, and of a folder's entries (a dump folder, TORCH_TRACE): a change means something grew.
    A file gone or replaced while it is looked at (a writer rotating it) counts as None, not as an error."""
    out = []
    for p in paths:
        try:
            if os.path.isdir(p):
                # a subfolder's own entries too (review 11, F6): a folder given before its capture is decided holds
                # the dump folder, whose modules grow inside it while its own size stays one block
                out.append(tuple(sorted((e.name, _entries(e.path) if e.is_dir() else e.stat().st_size)
                                        for e in os.scandir(p))))
            else:
                out.append(os.path.getsize(p))
        except OSError:
            out.append(None)
    return tuple(out)


def _report_beside(path: str) -> str:
    """Where the live-tensor reports of the capture at ``path`` are (or will be): the manifest's, else
    ``tensors_report.txt`` in the folder (beside the file). They place added or removed outputs at their lines."""
    from hlodiff.dumps.manifest import MANIFEST_NAME, read_manifest

    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if os.path.isfile(os.path.join(folder, MANIFEST_NAME)):
        report = read_manifest(folder).tensors_report
        if report:
            return report
    return os.path.join(folder, "tensors_report.txt")


# -- following a capture: the polling loop of `hlodiff watch` and `record --live` ---------------------------------


POLL_SECONDS = 0.25
"""How often a followed capture is looked at: a recompilation is told within about this much of being written."""


@dataclass(frozen=True, slots=True)
class WatchEnd:
    """How a followed capture was left (review 11, F6: ``watch --until-idle 20`` started with a torch_xla run stopped
    after 28 s, before the first graph, and its last line read like "nothing recompiled"): ``idle`` the seconds
    without a change when it stopped for --until-idle (None: stopped by Ctrl-C or its caller), ``graphs`` how many
    graphs it had read, ``decided`` whether it knew what the capture is (a dump, a log, a save file), ``files`` the
    files it was following."""

    idle: float | None
    graphs: int
    decided: bool
    files: tuple[str, ...]


def watch_path(path: str, emit, *, until_idle: float | None = None, stage: str | None = None, stop=None,
               interval: float = POLL_SECONDS, ended=None) -> list[InputWarning]:
    """Follow the capture at ``path`` while a run writes it, calling ``emit(event)`` for each
    :class:`hlodiff.explain.live.LiveEvent` as it becomes true; returns the warnings of what was read.

    Stops when ``stop()`` returns true (then the rest is read as written: :meth:`LiveRun.close`),
    or after ``until_idle`` seconds in which no followed file grew, counted from the first thing written (a job may
    take a while to start; the capture is then read as it is, half-written lines included, since nobody is writing
    them any more). Ctrl-C stops it like ``stop``. ``ended`` (optional) gets a :class:`WatchEnd` once it stopped."""
    import time

    run = LiveRun(path, stage=stage)
    last_change = time.monotonic()
    sizes = None
    idle = None
    started = False  # the idle clock runs from the first thing written: a job may take a while to start
    try:
        while True:
            for event in run.poll():
                emit(event)
            now_sizes = _sizes(run.follower.files())
            if now_sizes != sizes:
                sizes, last_change = now_sizes, time.monotonic()
                started = started or _written(now_sizes)
            if stop is not None and stop():
                break
            if until_idle is not None and started and time.monotonic() - last_change >= until_idle:
                idle = until_idle
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        pass
    decided = getattr(run.follower, "inner", run.follower) is not None  # an UndecidedFollower never decided
    files = tuple(run.follower.files())
    for event in run.close():
        emit(event)
    if ended is not None:
        ended(WatchEnd(idle, len(run.run.records), decided, files))
    return run.warnings


def _entries(folder: str) -> tuple:
    """A subfolder's entries and their sizes (one level: a dump folder's modules)."""
    try:
        return tuple(sorted((e.name, e.stat().st_size) for e in os.scandir(folder)))
    except OSError:
        return ()


def _any_bytes(size) -> bool:
    return any(_any_bytes(s) for _, s in size) if isinstance(size, tuple) else bool(size)


def _written(sizes: tuple) -> bool:
    """Something was written: a file with bytes, or a folder with an entry that is not empty (a subfolder counts).
    The empty files a shell redirect creates as the job starts (``> run/stdout.log``) are not: the job may spend
    longer than ``--until-idle`` importing torch before it writes anything (seen reproducing review 6, p04); nor is
    an empty subfolder (``--xla_dump_to`` made before the first module)."""
    return any(_any_bytes(s) for s in sizes)


def live_monitor(emit, *, interval: float = POLL_SECONDS):
    """For ``hlodiff record --live``: a function taking the recording's folder and returning a context manager
    that follows it in a thread while the command runs (``emit`` gets each event), and on leaving reads the rest
    and stops. Analysis errors never reach the command: the live lines just stop, the final report follows."""
    import threading
    from contextlib import contextmanager

    @contextmanager
    def monitor(folder: str):
        done = threading.Event()

        def follow() -> None:
            try:
                watch_path(folder, emit, stop=done.is_set, interval=interval)
            except Exception as exc:  # noqa: BLE001 - the command runs on; the report at exit still comes
                emit_error(exc)

        def emit_error(exc: Exception) -> None:
            try:
                emit(exc)
            except Exception:  # noqa: BLE001
                pass

        thread = threading.Thread(target=follow, name="hlodiff-live", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=60)

    return monitor
