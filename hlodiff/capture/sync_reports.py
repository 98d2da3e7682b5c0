"""What the sync hook does at each sync: append torch_xla's live-tensor report to a file just before a sync whose
graph is likely new, note compile times, switch source lines as the lines policy says.

:mod:`hlodiff.capture.hook` puts a :class:`SyncReports` into ``torch_xla.sync()`` (and so ``xm.mark_step()``,
``torch_xla.compile``, the parallel loader's step-end sync): :meth:`SyncReports.before` runs just before the step
marker, :meth:`SyncReports.after` right after it. Before, it appends ``torch_xla._XLAC._xla_tensors_report(threshold,
device)`` (policy ``HLODIFF_LIVE_TENSORS``: by default only at the first sync and at the first sync after a
compilation, and not when the last compilation had more than ``HLODIFF_REPORT_MAX_OUTPUTS`` outputs; at every sync
when the user set a save file), under one line::

    ## SYNC <n> call=<k> trigger=sync api=<torch_xla.sync|xm.mark_step|torch_xla.compile> reads=<ids>

(the separator of hlodiff's fixtures; ``hlodiff.dumps.tensors_report`` reads it). ``reads`` lists the ids of the
computed tensors whose device data the coming graph reads (:mod:`hlodiff.capture.reads`; graph boundaries).

**Keeping ``<n>`` right.** ``<n>`` is the index of the execution the sync will produce, as
:mod:`hlodiff.dumps.executions` numbers them: the ``Execution Analysis`` blocks of the ``PT_XLA_DEBUG_LEVEL=2``
log already written (with a user-set save file: the entries already in it, by their ``[ScheduleSyncTensorsGraph]``
headers). ``.item()``, ``print(t)``, ``.cpu()`` and ``xm.save`` also execute graphs without passing through
``sync``, so ``<n>`` is not a count of syncs. Counts are incremental (only the bytes appended since the previous
count are scanned, :mod:`hlodiff.capture.runlog`); torch_xla writes both synchronously inside the step marker.
A sync with nothing pending executes nothing: after the sync, when the count did not grow, the report just written
is cut off the file again. With neither file, ``<n>`` falls back to the index of the sync call and the line says
``save_file=none``.

**Is the coming graph new?** torch_xla 2.9 offers no way to ask before the sync without the live tensors (which
Python cannot list cheaply). The hook reads the ``UncachedCompile`` counter around each sync instead: a report is
taken at the first sync and at the first sync after a compilation (the graph that follows a new one is usually new
or the one just compiled), and ``CompileTime`` samples go to ``compile_times.tsv`` when the counter moved.

Standard library only at import time, like the hook that loads it (by path, in an interpreter where hlodiff is
not installed).
"""

from __future__ import annotations

import os
import sys

SAVE_FILE_ENV = "XLA_SAVE_TENSORS_FILE"
DEBUG_FILE_ENV = "PT_XLA_DEBUG_FILE"
COMPILE_TIMES_ENV = "HLODIFF_COMPILE_TIMES"
LIVE_TENSORS_ENV = "HLODIFF_LIVE_TENSORS"
"""When to take a live-tensor report: ``compilations`` (the first sync, and the sync after each compilation),
``boundaries`` (every sync until the run repeats itself, see :data:`hlodiff.capture.sync_period.PERIOD_MAX`; the default when
``HLODIFF_DEVICE_DATA_READS=1``, as ``hlodiff record`` sets it), ``every-sync``, or ``off``."""
MAX_OUTPUTS_ENV = "HLODIFF_REPORT_MAX_OUTPUTS"
DEFAULT_MAX_OUTPUTS = 64
"""A report prints every pending tensor's whole IR, so it grows with outputs x graph size (about 34 MB, seconds,
for a 4-layer transformer step with ~150 outputs; 300 MB for 16 layers): above this many outputs in the latest
compilation it is skipped (the XLA dump's HLO proto still carries every instruction's full stack)."""
READS_ENV = "HLODIFF_DEVICE_DATA_READS"
"""``1`` (``hlodiff record`` sets it): each report's header also says which computed tensors the coming graph reads
(:mod:`hlodiff.capture.reads`, about 0.2 s per report); the pytest plugin, which draws no boundaries, leaves it off."""


def save_tensors_path(base: str, ordinal: int = 0) -> str:
    """Where torch_xla writes for ``XLA_SAVE_TENSORS_FILE=base``: ``base.<device ordinal>`` (``graphs.hlo.0``)."""
    return f"{base}.{ordinal}"


class SyncReports:
    """What an installed hook does at each sync, and what it keeps between syncs; stored on the torch_xla package
    (by :mod:`hlodiff.capture.hook`) so a second copy of the hook finds it. ``load`` gives a sibling module of
    ``hlodiff.capture`` (by package, or by path beside the hook when hlodiff is not importable), ``warn`` prints a
    warning once: both the hook's own, so this module imports nothing of hlodiff."""

    def __init__(self, report_path: str, threshold: int, *, load, warn):
        import threading

        self.load, self.warn = load, warn

        self.report_path = os.path.abspath(report_path)
        self.threshold = threshold
        self.calls = 0
        self.lock = threading.RLock()
        self.tls = threading.local()
        self.patched: list[tuple[object, str, object, object]] = []  # (owner, attribute, original, replacement)
        self.mode = ""
        self.sync_code = None
        self.mark_step_code = None
        self.compile_codes: tuple = ()
        self.active = True
        self.report_next = True  # the first sync's graph is new
        self.reads = os.environ.get(READS_ENV, "").strip() == "1"
        default_policy = ("every-sync" if os.environ.get(SAVE_FILE_ENV) else
                          "boundaries" if self.reads else "compilations")
        self.policy = os.environ.get(LIVE_TENSORS_ENV, "").strip() or default_policy
        self.max_outputs = _int_env(MAX_OUTPUTS_ENV, DEFAULT_MAX_OUTPUTS)
        self.save_count: int | None = None  # entries of the save file after the latest sync
        self.executions_seen: int | None = None  # executions of the debug log after the latest sync
        self.blocks: list = []  # per sync: (the log bytes it appended, executions, graph hash) or None
        self.quiet = False  # the next sync may take the fast path (see _note_block)
        self.compiles_seen: int | None = None
        self.compiled_pending = False  # a compilation seen since the last sync ended (for the lines policy)
        self.metrics = None  # torch_xla.debug.metrics, bound at install
        self.save_base: str | None = None  # the save file's base path, "" without one (looked up at first use)
        self.counter_value = None  # torch_xla's counter reader (the C function itself when it has one)
        self.ir_debug: bool | None = None  # what apply_lines last set (None: not known yet)
        sync_period = load("sync_period")
        self.repeats = sync_period.SyncPeriod()  # is the run repeating itself (boundaries)
        self.blocks_kept = sync_period.PERIOD_MAX + 1
        lines = load("lines")
        mode = lines.mode_from_env(os.environ)
        self.lines = lines.LinesPolicy(mode) if mode else None
        runlog = load("runlog")
        debug_file = os.environ.get(DEBUG_FILE_ENV, "")
        self.log = runlog.DebugLogCounter(os.path.abspath(debug_file)) if debug_file else None
        times = os.environ.get(COMPILE_TIMES_ENV, "")
        self.compile_times = runlog.CompileTimes(times, self.log) if times else None

    # The save file torch_xla writes: XLA_SAVE_TENSORS_FILE plus the ordinal of the device being synced (torch_xla
    # reads the variable once per thread, at its first save; it is expected not to change during the run).
    def save_file(self, device: str | None = None) -> str | None:
        """None without a save file (looked up once: torch_xla too reads the variable once, at its first save)."""
        base = self.save_base
        if base is None:
            base = self.save_base = os.path.abspath(os.environ[SAVE_FILE_ENV]) if os.environ.get(SAVE_FILE_ENV) \
                else ""
        if not base:
            return None
        if device is None:
            import torch_xla

            device = torch_xla._XLAC._xla_get_default_device()
        ordinal = device.rpartition(":")[2]
        return save_tensors_path(base, int(ordinal) if ordinal.isdigit() else 0)

    def before(self, api: str | None = None) -> None:
        """Just before the step marker: write ``## SYNC n`` and the report when the coming graph is likely new
        (every sync when the user asked for a save file); remember how to take it back. ``api`` (which entry point
        called ``sync``) is looked up only when a report is written: a steady sync pays for nothing it does not
        use (issue 32: the hook runs at every sync)."""
        stack = self._stack()
        stack.clear()  # syncs do not nest: a token left here is from a step marker that raised (its report stays)
        if self.quiet and not self.report_next and self.counter_value("UncachedCompile") == self.compiles_seen:
            stack.append(None)  # steady and nothing compiled: no report (what the general path decides, cheaply)
            return
        self.quiet = False  # what this sync does is decided in full, after it too
        token = None
        if self.active:
            try:
                want = (self._compiled_since_last_look() or self.report_next or self.policy == "every-sync"
                        or (self.policy == "boundaries" and not self.repeats.steady)
                        or (self.lines is not None and self.lines.watching))
                self.report_next = False
                if want and self.policy != "off" and not self._too_big():
                    token = self._write_report(api or self.caller_api())
            except Exception as exc:  # never break the user's training for a report
                self.warn(f"live-tensor report failed: {type(exc).__name__}: {exc}")
        stack.append(token)

    def after(self) -> None:
        """Right after the step marker returned: drop the report when the sync produced no execution; when the
        sync compiled, note the compile time and report at the next sync (its graph is likely new too)."""
        stack = self._stack()
        token = stack.pop() if stack else None
        if token is None and self.quiet and self._repeated():
            return
        self.quiet = False
        if token is not None:
            counter, n, size_before, size_after = token
            try:
                if counter is not None and counter() == n:
                    with self.lock:
                        if os.path.getsize(self.report_path) == size_after:
                            os.truncate(self.report_path, size_before)
            except OSError:
                pass
        try:
            compiled_now = self._compiled_since_last_look()
            if compiled_now:
                self.report_next = True
            graph_hash, ran = None, True
            if self.lines is not None or self.policy == "boundaries":
                graph_hash, ran = self._last_graph_hash()
            if self.policy == "boundaries":
                self.repeats.note(graph_hash, compiled_now, ran)
            if self.lines is not None:
                compiled, self.compiled_pending = self.compiled_pending, False
                self.lines.after_sync(compiled, graph_hash)
                self.apply_lines()
            self._note_block(graph_hash)
        except Exception as exc:
            self.warn(f"compile bookkeeping failed: {type(exc).__name__}: {exc}")

    # -- the steady fast path (issue 32: record's hook runs at every sync, and a step of a few ms has several) -----
    #
    # Once the run repeats itself with period P (``steady``) and record's policy takes no report, what the general
    # path does after a sync is: read the debug log's new execution block, take its graph hash, see that it is
    # the hash of P syncs before, count one quiet sync for the lines policy. A steady sync appends to the log the
    # very bytes the sync P syncs before appended (same execution cause, graph hash, counts, Python frames), so
    # the fast path compares bytes instead of parsing them: one fstat, one read, one comparison, and the state
    # moves exactly as the general path would move it. Anything else (a compilation, a report asked for, other
    # bytes, a save file, lines being watched) takes the general path.

    def _note_block(self, graph_hash: str | None) -> None:
        """Keep what this sync appended to the log (when it was one whole execution block and nothing compiled),
        and whether the next sync may take the fast path."""
        log = self.log
        block = None
        if log is not None and self.save_base == "" and log.last_delta == 1 and log.last_read is not None \
                and graph_hash is not None and log.last_executed == graph_hash \
                and b"Compilation Analysis" not in log.last_read:
            block = (log.last_read, 1, graph_hash)
        blocks = self.blocks
        blocks.append(block)
        if len(blocks) > self.blocks_kept:
            del blocks[0]
        period = self.repeats.period
        self.quiet = bool(self.active and self.policy == "boundaries" and self.repeats.steady and period
                          and not self.report_next and len(blocks) > period and blocks[-period] is not None
                          and (self.lines is None or self.lines.settled))

    def _repeated(self) -> bool:
        """The fast path after a sync: True when the sync appended the block of P syncs before and nothing
        compiled (the state is then moved as the general path would); False sends the sync to the general path."""
        try:
            if self.counter_value("UncachedCompile") != self.compiles_seen:
                return False
            repeats = self.repeats
            block = self.blocks[-repeats.period]
            if block is None or not self.log.take_repeat(*block):
                return False
            self.executions_seen = self.log.executions
            repeats.note(block[2], False, True)
            if self.lines is not None:
                self.lines.steady_sync()
            blocks = self.blocks
            blocks.append(block)
            if len(blocks) > self.blocks_kept:
                del blocks[0]
            self.quiet = repeats.steady and blocks[-repeats.period] is not None
            return True
        except Exception:
            return False

    def apply_lines(self) -> None:
        """Switch torch_xla's frame capture (``XLA_IR_DEBUG``) for the steps still to be traced, as the lines
        policy says (:mod:`hlodiff.capture.lines`)."""
        if self.lines is None or self.ir_debug == self.lines.on:
            return  # set by us already: no call into torch_xla on a sync that changes nothing
        import torch_xla

        xlac = torch_xla._XLAC
        if xlac._get_ir_debug() != self.lines.on:
            xlac._set_ir_debug(self.lines.on)
        self.ir_debug = self.lines.on

    def _last_graph_hash(self) -> tuple[str | None, bool]:
        """The graph hash of what the sync just ran (the save-tensors file's newest entry, else the newest
        execution of the PT_XLA_DEBUG_LEVEL=2 log), and whether it ran anything (the entries or executions
        grew; True when neither is known)."""
        save_file = self.save_file()
        if save_file is not None:
            entries = self.load("runlog").save_entries(save_file)
            count = entries.count()
            ran, self.save_count = count != self.save_count, count
            return entries.last_hash, ran
        if self.log is None:
            return None, True
        log = self.log.update()  # (the report's own count may have read the block already: compare the counts)
        ran, self.executions_seen = log.executions != self.executions_seen, log.executions
        return log.last_executed, ran

    def _too_big(self) -> bool:
        """The latest compilation had more outputs than a report is worth (``HLODIFF_REPORT_MAX_OUTPUTS``)."""
        if self.log is None or self.max_outputs <= 0:
            return False
        outputs = self.log.update().last_outputs
        if outputs is not None and outputs > self.max_outputs:
            self.warn(f"live-tensor reports skipped: the graphs have {outputs} outputs (more than "
                       f"{MAX_OUTPUTS_ENV}={self.max_outputs}); a report would print each one's whole IR")
            return True
        return False

    def request_report(self) -> None:
        """Report at the next sync whatever happens (a recording block starts: its first graph counts as new)."""
        self.report_next = True

    def _compiled_since_last_look(self) -> bool:
        """Did torch_xla compile since the last look (``UncachedCompile`` moved)? Writes the compile times."""
        if self.metrics is None:
            return False
        count = self.counter_value("UncachedCompile") or 0
        if count == self.compiles_seen:
            return False
        first_look = self.compiles_seen is None
        self.compiles_seen = count
        if self.compile_times is not None:
            self.flush_compile_times()
        moved = not first_look or count > 0
        self.compiled_pending = self.compiled_pending or moved
        return moved

    def flush_compile_times(self) -> None:
        if self.compile_times is None or self.metrics is None:
            return
        execution = self.log.update().executions - 1 if self.log is not None else None
        self.compile_times.flush(self.metrics.metric_data, execution if execution is not None and execution >= 0
                                 else None)

    def _stack(self) -> list:
        stack = getattr(self.tls, "stack", None)
        if stack is None:
            stack = self.tls.stack = []
        return stack

    def _counter(self, device: str):
        """What numbers executions: save-file entries (a save file is set), the executions of the PT_XLA_DEBUG log,
        else nothing (the sync call index is used)."""
        save_file = self.save_file(device)
        if save_file is not None:
            return lambda: self.load("runlog").count_save_entries(save_file), ""
        if self.log is not None:
            return (lambda: self.log.update().executions), ""
        return None, " save_file=none"

    def _write_report(self, api: str):
        import torch_xla

        xlac = torch_xla._XLAC
        device = xlac._xla_get_default_device()
        with self.lock:
            counter, note = self._counter(device)
            k = self.calls
            self.calls += 1
            n = counter() if counter is not None else k
            report = xlac._xla_tensors_report(self.threshold, device)
            reads = self._reads_words() if self.reads else ""
            head = f"## SYNC {n} call={k} trigger=sync api={api}{note}{reads}\n"
            os.makedirs(os.path.dirname(self.report_path) or ".", exist_ok=True)
            with open(self.report_path, "a", encoding="utf-8") as f:
                size_before = f.tell()
                f.write(head)
                f.write(report.rstrip("\n") + "\n\n")
                size_after = f.tell()
        return counter, n, size_before, size_after

    def caller_api(self) -> str:
        """Which public entry point led to the sync: look at the frame that called ``sync``."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not self.sync_code:
            frame = frame.f_back
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            if caller.f_code is self.mark_step_code:
                return "xm.mark_step"
            if caller.f_code in self.compile_codes:
                return "torch_xla.compile"
        return "torch_xla.sync"

    def _reads_words(self) -> str:
        """`` reads=<ids>``: the computed tensors the coming graph reads (:mod:`hlodiff.capture.reads`), or
        nothing."""
        try:
            reads = self.load("reads")
            if not reads.safe_here():
                return ""  # SPMD: asking would change which buffers the sync donates (reads.safe_here)
            return reads.header_words(reads.device_data_reads())
        except Exception as exc:  # never break the user's training for a boundary
            self.warn(f"device data reads unavailable: {type(exc).__name__}: {exc}")
            return ""


def _int_env(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        return default
