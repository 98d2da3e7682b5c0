"""In-process capture, for the pytest plugin (``hlo_graphs.record()``): the same capture as ``hlodiff record``.

torch_xla and XLA read their settings once per process (``XLA_FLAGS`` when the runtime starts, the debug log at
first use), and keep appending to one debug log and one dump folder, so a test cannot get "its own" files.
Instead:

* after collection, before any test touches an XLA device, :func:`configure_process_env` sets the capture
  environment for the whole process (keeping what the user set) and arms the sync hook, which installs itself
  when torch_xla is imported; if the XLA runtime already runs, it falls back to torch_xla's save file;
* a :class:`Recorder` remembers, at :meth:`~Recorder.start`, how many executions the ``PT_XLA_DEBUG_LEVEL=2`` log
  (or entries the save file) holds and how long the report file and the debug log are, and asks the hook for a
  report at the next sync; :meth:`~Recorder.stop` returns a :class:`Recording`: the range of executions, and the
  byte ranges of the report file and debug log, written in between;
* :func:`cleanup` (at unconfigure) deletes only the files the configuration created and restores the environment.

Nothing here imports torch or torch_xla.
"""
from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field

from hlodiff.capture import hook, runlog
from hlodiff.capture.env import CAPTURE_EXECUTIONS, REPORT_ENV, SAVE_BASENAME, CapturePaths, capture_env

_CONFIGURED: CapturePaths | None = None
_SAVED_ENV: dict[str, dict[str, str | None]] = {}  # manifest path -> {variable: value before configure (None: unset)}
_CREATED_DIRS: set[str] = set()


def configure_process_env(out_dir: str | os.PathLike[str], *, xla_dump: bool = True,
                          install_hook: bool = True, source_lines: bool = True) -> CapturePaths:
    """Set this process's environment for capture into ``out_dir`` (user-set values are kept) and arm the hook.

    Best before ``import torch_xla``: torch_xla 2.9 reads ``XLA_IR_DEBUG`` at import (later, the reports have no
    ``Frames:``) and the save-file, debug-log and HLO-metadata variables at first use (before the first sync is
    enough). A warning is added to the returned manifest when torch_xla is already imported.
    """
    global _CONFIGURED
    out = os.path.abspath(os.fspath(out_dir))
    if not os.path.isdir(out):
        os.makedirs(out)
        _CREATED_DIRS.add(out)
    base = dict(os.environ)
    late = _runtime_started()
    if late and not base.get("XLA_SAVE_TENSORS_FILE", "").strip():
        # XLA already read XLA_FLAGS (no dump of compiled graphs now); the save file is still read at first save.
        base["XLA_SAVE_TENSORS_FILE"] = os.path.join(out, SAVE_BASENAME)
        base.setdefault("XLA_SAVE_TENSORS_FMT", "hlo")
    env = capture_env(out, base_env=base, xla_dump=xla_dump, write_manifest=False, source_lines=source_lines)
    paths = env.paths
    if late:
        for name in ("XLA_SAVE_TENSORS_FILE", "XLA_SAVE_TENSORS_FMT"):
            if name not in os.environ:
                paths.user_set.pop(name, None)
                paths.env_added[name] = env[name]
        if paths.save_tensors_file and not os.path.exists(paths.save_tensors_file):
            paths.owned.append(paths.save_tensors_file)
        paths.warnings.append("the XLA runtime was already running when capture was arranged: graphs are read "
                              "from torch_xla's save file (HLO of every execution), which costs more per step")
    saved = {}
    for name in paths.env_added:
        saved[name] = os.environ.get(name)
        os.environ[name] = env[name]
    if "torch_xla" in sys.modules:
        # Observed with torch_xla 2.9: the save file, debug log and HLO metadata still follow (read at first
        # use), but XLA_IR_DEBUG is read at import, so the live-tensor reports lose their Frames:.
        paths.warnings.append("torch_xla was imported before the capture environment was set: live-tensor "
                              "reports will have no Frames: (XLA_IR_DEBUG is read at import), and anything "
                              "already synced went where the old environment said")
    if install_hook and paths.tensors_report:
        hook.install_on_import(paths.tensors_report, nodes_threshold=hook.threshold_from_env())
    if not os.path.exists(paths.manifest_path):
        paths.owned.append(paths.manifest_path)
    paths.make_dirs()
    paths.write()
    _SAVED_ENV[paths.manifest_path] = saved
    _CONFIGURED = paths
    return paths


def saved_env(paths: CapturePaths) -> dict[str, str | None]:
    """The values the variables :func:`configure_process_env` set had before it (None: unset)."""
    return dict(_SAVED_ENV.get(paths.manifest_path, {}))


def _runtime_started() -> bool:
    """Has torch_xla already created its XLA client (which reads ``XLA_FLAGS`` once)?"""
    torch_xla = sys.modules.get("torch_xla")
    if torch_xla is None:
        return False
    try:
        return bool(torch_xla._XLAC._xla_runtime_is_initialized())
    except Exception:
        return False


def configured_paths() -> CapturePaths | None:
    """What :func:`configure_process_env` set up in this process, if anything."""
    return _CONFIGURED


def paths_from_env(environ=None) -> CapturePaths:
    """A manifest describing what the current environment makes torch_xla write (no configure call needed)."""
    env = os.environ if environ is None else environ
    base = env.get("XLA_SAVE_TENSORS_FILE") or None
    report = env.get(REPORT_ENV) or None
    debug = env.get("PT_XLA_DEBUG_FILE") or None
    anchor = base or report or debug
    paths = CapturePaths(out_dir=os.path.dirname(os.path.abspath(anchor)) if anchor else os.getcwd())
    if base:
        paths.save_tensors_base = os.path.abspath(base)
        paths.save_tensors_file = paths.save_tensors_base + ".0"
    paths.save_tensors_fmt = env.get("XLA_SAVE_TENSORS_FMT") or "text"
    paths.tensors_report = os.path.abspath(report) if report else None
    paths.debug_log = os.path.abspath(debug) if debug else None
    return paths


def cleanup(paths: CapturePaths | None = None, *, restore_env: bool = True, keep_files: bool = False) -> list[str]:
    """Undo :func:`configure_process_env`: remove the hook, restore the environment, and delete the files and
    folders the configuration created (``paths.owned``; never a file that existed before or one the user named).
    ``keep_files`` leaves the captured files where they are (the user asked for them in a folder of theirs).
    Returns the deleted paths."""
    global _CONFIGURED
    paths = paths or _CONFIGURED
    if paths is None:
        return []
    hook.uninstall_sync_hook()
    saved = _SAVED_ENV.pop(paths.manifest_path, {})
    if restore_env:
        for name, before in saved.items():
            if os.environ.get(name) != paths.env_added.get(name):
                continue  # changed since: not ours to restore
            if before is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = before
    removed: list[str] = []
    if keep_files:
        from hlodiff.capture.prune import prune_xla_dump

        prune_xla_dump(paths)  # LLVM IR, objects, MLIR beside the HLO: hlodiff never reads them
        if _CONFIGURED is paths:
            _CONFIGURED = None
        return removed
    for p in paths.owned:
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.unlink(p)
            else:
                continue
        except OSError:
            continue
        removed.append(p)
    if paths.out_dir in _CREATED_DIRS:
        _CREATED_DIRS.discard(paths.out_dir)
        try:
            os.rmdir(paths.out_dir)  # only when empty
            removed.append(paths.out_dir)
        except OSError:
            pass
    if _CONFIGURED is paths:
        _CONFIGURED = None
    return removed


# -- recording a block --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Recording:
    """What torch_xla (and the hook) wrote between :meth:`Recorder.start` and :meth:`Recorder.stop`.

    ``entries`` are the indices of the block's executions: entries of the save file when one is written, else
    executions of the run's ``PT_XLA_DEBUG`` log (:mod:`hlodiff.dumps.executions`), whose HLO is in the XLA dump.
    """

    paths: CapturePaths
    save_tensors_file: str | None
    first_entry: int
    end_entry: int
    report_span: tuple[int, int] = (0, 0)
    debug_span: tuple[int, int] = (0, 0)
    warnings: tuple[str, ...] = field(default=())

    @property
    def entries(self) -> range:
        """Indices of the executions inside the block (one per graph executed)."""
        return range(self.first_entry, self.end_entry)

    @property
    def source(self) -> str | None:
        """What the graphs' refs are built from: the save file, or the capture folder."""
        return self.save_tensors_file if self.save_tensors_file else self.paths.out_dir

    @property
    def refs(self) -> list[str]:
        """``SOURCE#N`` for each execution: what hlodiff's commands accept."""
        return [f"{self.source}#{i}" for i in self.entries] if self.source else []

    def graphs(self, warnings=None) -> list:
        """The :class:`hlodiff.dumps.GraphRecord` s of the block's executions."""
        if not self.entries:
            return []
        if self.save_tensors_file:
            if not os.path.exists(self.save_tensors_file):
                return []
            from hlodiff.dumps import iter_graphs

            out = []
            for record in iter_graphs(self.save_tensors_file, warnings):
                if record.index >= self.end_entry:
                    break
                if record.index >= self.first_entry:
                    out.append(record)
            return out
        from hlodiff.dumps.executions import scan_executions

        return list(scan_executions(self.paths.out_dir, warnings, first=self.first_entry, end=self.end_entry))

    def report_text(self) -> str:
        return _read_span(self.paths.tensors_report, self.report_span)

    def reports(self, warnings=None) -> list:
        """The live-tensor reports the hook wrote inside the block (:class:`hlodiff.dumps.tensors_report.SyncReport`;
        ``report.sync`` is the index of the execution it describes)."""
        text = self.report_text()
        if not text.strip():
            return []
        from hlodiff.dumps.tensors_report import parse_reports

        return parse_reports(text, path=self.paths.tensors_report or "<report>", warnings=warnings)

    def debug_text(self) -> str:
        return _read_span(self.paths.debug_log, self.debug_span)

    def compilations(self, warnings=None) -> list:
        """The compilations the debug log recorded inside the block."""
        text = self.debug_text()
        if "Analysis: " not in text:
            return []
        from hlodiff.dumps.debug_log import CompilationEvent, parse_debug_log

        return [e for e in parse_debug_log(text, path=self.paths.debug_log or "<log>", warnings=warnings)
                if isinstance(e, CompilationEvent) and e.announced]


class Recorder:
    """Records which executions, reports and debug-log blocks a block of code produced::

        rec = Recorder().start()
        ...                      # run steps on the XLA device
        recording = rec.stop()   # recording.entries, .graphs(), .reports(), .compilations()

    or ``with Recorder() as rec: ...`` then ``rec.recording``. Several recorders may overlap.
    """

    def __init__(self, paths: CapturePaths | None = None):
        self.paths = paths or configured_paths() or paths_from_env()
        self.recording: Recording | None = None
        self._start: tuple[str | None, int, int, int] | None = None

    def start(self) -> "Recorder":
        save = self._save_file()
        self._start = (save, self._count(save), _size(self.paths.tensors_report), _size(self.paths.debug_log))
        self.recording = None
        hook.request_report()  # the block's first graph counts as new (compilations are counted per block)
        return self

    def stop(self) -> Recording:
        if self._start is None:
            raise RuntimeError("Recorder.stop() without start()")
        save0, first, report0, debug0 = self._start
        self._start = None
        save = self._save_file()
        warnings = []
        if save != save0:
            first = 0  # the file torch_xla writes appeared only now (another device ordinal)
        end = self._count(save)
        if save is None and not self._executions():
            warnings.append("neither a save file nor a PT_XLA_DEBUG log is captured: no graphs were recorded")
        elif self.paths.tensors_report and not hook.sync_hook_installed():
            warnings.append("the sync hook is not installed: no live-tensor reports were recorded")
        report1, debug1 = _size(self.paths.tensors_report), _size(self.paths.debug_log)
        self.recording = Recording(self.paths, save, first, max(first, end),
                                   (report0, report1) if report1 >= report0 else (0, report1),
                                   (debug0, debug1) if debug1 >= debug0 else (0, debug1), tuple(warnings))
        return self.recording

    def __enter__(self) -> "Recorder":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _executions(self) -> bool:
        return self.paths.capture == CAPTURE_EXECUTIONS and bool(self.paths.debug_log)

    def _count(self, save: str | None) -> int:
        if save:
            return runlog.count_save_entries(save)
        if self._executions():
            return runlog.count_executions(self.paths.debug_log)
        return 0

    def _save_file(self) -> str | None:
        p = self.paths
        if not p.save_tensors_base:
            return None
        if p.save_tensors_file and os.path.exists(p.save_tensors_file):
            return p.save_tensors_file
        files = p.save_tensors_files()
        return files[0] if files else p.save_tensors_file


def _size(path: str | None) -> int:
    if not path:
        return 0
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _read_span(path: str | None, span: tuple[int, int]) -> str:
    start, end = span
    if not path or end <= start:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")
