"""The manifest of a folder written by ``hlodiff record`` (``hlodiff-record.json``): where each output of a captured
run went. Reading it is reading from disk, so it lives here; :mod:`hlodiff.capture` only writes it.

Paths inside the folder are stored relative to it (the folder can be moved or copied). Keys may be added within
version 1 (older readers ignore them); a reader never needs torch.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Mapping

MANIFEST_NAME = "hlodiff-record.json"
MANIFEST_VERSION = 1
MANIFEST_MAX_BYTES = 16 * 1024 * 1024
"""A real manifest is a few KB; anything past this is not one (and is not read whole)."""
CAPTURE_EXECUTIONS = "executions"
"""``capture`` value of a torch_xla run recorded cheaply: HLO only for compiled graphs (XLA dump), the sequence of
executions from the ``PT_XLA_DEBUG_LEVEL=2`` log, live-tensor reports only around compilations."""
CAPTURE_SAVE_TENSORS = "save_tensors"
"""``capture`` value when the user chose ``XLA_SAVE_TENSORS_FILE`` (HLO of every execution, cache hits too)."""


@dataclass
class CapturePaths:
    """Where a captured run's outputs are (absolute paths; None = not captured)."""

    out_dir: str
    save_tensors_base: str | None = None
    """The value of ``XLA_SAVE_TENSORS_FILE``; torch_xla appends ``.<device ordinal>``."""
    save_tensors_file: str | None = None
    """The file torch_xla writes for device 0 (``graphs.hlo.0``); updated after a run to the one really written."""
    save_tensors_fmt: str | None = None
    debug_log: str | None = None
    tensors_report: str | None = None
    xla_dump: str | None = None
    compile_times: str | None = None
    """``compile_times.tsv``: XLA compile seconds per compilation (torch_xla's ``CompileTime`` metric)."""
    jax_log: str | None = None
    """``jax.log``: JAX's ``JAX_LOG_COMPILES`` / ``JAX_EXPLAIN_CACHE_MISSES`` messages (the ``jax`` logger)."""
    capture: str = CAPTURE_SAVE_TENSORS
    """How a torch_xla run's graphs were captured: :data:`CAPTURE_EXECUTIONS` or :data:`CAPTURE_SAVE_TENSORS`."""
    save_tensors_start_entry: int = 0
    """Entries already in the save file before this capture (a user-set file torch_xla appends to)."""
    user_set: dict[str, str] = field(default_factory=dict)
    """Variables the user had set, kept as they were."""
    env_added: dict[str, str] = field(default_factory=dict)
    """Variables (and the ``XLA_FLAGS`` value) hlodiff set."""
    owned: list[str] = field(default_factory=list)
    """Outputs hlodiff chose and that did not exist before: what :func:`hlodiff.capture.session.cleanup` may delete."""
    warnings: list[str] = field(default_factory=list)
    command: list[str] | None = None
    returncode: int | None = None
    """As ``subprocess`` reports it: negative ``-N`` when the command was killed by signal ``N``."""
    signals: list[str] = field(default_factory=list)
    """Signals ``hlodiff record`` received while the command ran and forwarded to it (``["SIGTERM"]``)."""
    version: int = MANIFEST_VERSION
    versions: dict[str, str] = field(default_factory=dict)
    """Installed framework versions when the recording started (``{"jax": "0.10.2", "jaxlib": ...}``)."""
    cache_settings: dict[str, str] = field(default_factory=dict)
    """Persistent-cache variables (and ``XLA_FLAGS``) as the user's environment set them."""
    cache_entries: dict[str, int] = field(default_factory=dict)
    """After the run: name -> bytes of each file in the cache folder named by ``cache_settings`` (at most
    :data:`MAX_CACHE_ENTRIES`), so ``compare-runs`` can tell which entries the run left."""
    processes: list[dict] = field(default_factory=list)
    """In a run's manifest: the processes that captured into folders of their own (issue 36, a launcher's workers),
    ``{"folder": "rank1", "rank": 1, "pid": ..., "identified_by": "RANK=1 as the launcher set it", "captured"}``;
    written by :func:`hlodiff.capture.per_process.collect`, read by :mod:`hlodiff.dumps.ranks`."""
    process: dict | None = None
    """In a process's own manifest: its pid, rank and how the rank was known (``processes`` lists it)."""

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.out_dir, MANIFEST_NAME)

    def save_tensors_files(self) -> list[str]:
        """Every ``<base>.<ordinal>`` that exists, ordinal order (one per device that synced)."""
        if not self.save_tensors_base:
            return []
        folder = os.path.dirname(self.save_tensors_base) or "."
        prefix = os.path.basename(self.save_tensors_base) + "."
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        found = [(int(n[len(prefix):]), n) for n in names if n.startswith(prefix) and n[len(prefix):].isdigit()]
        return [os.path.join(folder, n) for _, n in sorted(found)]

    def refresh(self) -> None:
        """After a run: point ``save_tensors_file`` at the file torch_xla really wrote (if not ordinal 0), and drop
        the outputs that were not written (``None``: e.g. no XLA dump for a torch_xla run)."""
        files = self.save_tensors_files()
        if files and (self.save_tensors_file is None or not os.path.exists(self.save_tensors_file)):
            self.save_tensors_file = files[0]
        for key in ("save_tensors_file", "debug_log", "tensors_report", "compile_times", "jax_log"):
            value = getattr(self, key)
            if value is not None and not os.path.isfile(value):
                setattr(self, key, None)
        if self.xla_dump is not None and not (os.path.isdir(self.xla_dump) and os.listdir(self.xla_dump)):
            self.xla_dump = None
        self.cache_entries = _cache_entries(self.cache_settings)

    def make_dirs(self) -> None:
        """Create the folders the outputs go to: torch_xla silently writes nothing when a folder is missing."""
        for path in (self.out_dir, self.save_tensors_base, self.debug_log, self.tensors_report):
            if path:
                folder = path if path == self.out_dir else os.path.dirname(path)
                os.makedirs(folder or ".", exist_ok=True)

    def to_json(self) -> dict:
        data = asdict(self)
        for key in _PATH_FIELDS:
            data[key] = _rel(data[key], self.out_dir)
        data["owned"] = [_rel(p, self.out_dir) for p in self.owned]
        data["out_dir"] = "."
        return data

    @classmethod
    def from_json(cls, data: Mapping, out_dir: str) -> "CapturePaths":
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["out_dir"] = os.path.abspath(out_dir)
        for key in _PATH_FIELDS:
            kwargs[key] = _abs(kwargs.get(key), kwargs["out_dir"])
        kwargs["owned"] = [_abs(p, kwargs["out_dir"]) for p in kwargs.get("owned", [])]
        return cls(**kwargs)

    def write(self) -> str:
        """Write the manifest whole or not at all (a temporary file renamed over it): on a full disk the old
        manifest, if any, stays as it was, no temporary file is left, and the error names the manifest."""
        from hlodiff.errors import HlodiffError

        text = json.dumps(self.to_json(), indent=2) + "\n"
        tmp = self.manifest_path + ".tmp"
        try:
            os.makedirs(self.out_dir, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())  # a full disk can surface only here (delayed allocation)
            os.replace(tmp, self.manifest_path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise HlodiffError(f"cannot write the capture manifest: {exc.strerror or exc}",
                               path=self.manifest_path) from None
        return self.manifest_path


MAX_CACHE_ENTRIES = 10_000
_CACHE_DIR_VARIABLES = ("JAX_COMPILATION_CACHE_DIR", "XLA_PERSISTENT_CACHE_PATH")


def _cache_entries(settings: Mapping[str, str]) -> dict[str, int]:
    """The files of the persistent cache folders the settings name (a local folder only), with their sizes."""
    entries: dict[str, int] = {}
    for name in _CACHE_DIR_VARIABLES:
        folder = os.path.expanduser(settings.get(name, ""))
        if not folder or "://" in folder or not os.path.isdir(folder):
            continue
        try:
            names = sorted(os.listdir(folder))[:MAX_CACHE_ENTRIES]
        except OSError:
            continue
        for entry in names:
            try:
                entries[entry] = os.path.getsize(os.path.join(folder, entry))
            except OSError:
                continue
    return entries


_PATH_FIELDS = ("save_tensors_base", "save_tensors_file", "debug_log", "tensors_report", "xla_dump", "compile_times",
                "jax_log")


def recorded_processes(folder: str | os.PathLike[str]) -> list[dict]:
    """The processes a run's manifest lists whose folder holds a capture, each with ``path`` (absolute) added;
    [] for a folder without a manifest or one recorded by a single process."""
    manifest = os.path.join(os.fspath(folder), MANIFEST_NAME)
    if not os.path.isfile(manifest) or os.path.getsize(manifest) > MANIFEST_MAX_BYTES:
        return []
    try:
        with open(manifest, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return []
    found = []
    for entry in data.get("processes") or [] if isinstance(data, dict) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("folder"), str) or not entry.get("captured"):
            continue
        path = os.path.normpath(os.path.join(os.path.abspath(os.fspath(folder)), entry["folder"]))
        if os.path.isfile(os.path.join(path, MANIFEST_NAME)):
            found.append({**entry, "path": path})
    return found


def read_manifest(path: str | os.PathLike[str]) -> CapturePaths:
    """The manifest of a capture folder (or the ``hlodiff-record.json`` file itself)."""
    from hlodiff.errors import HlodiffError

    p = os.fspath(path)
    manifest = os.path.join(p, MANIFEST_NAME) if os.path.isdir(p) else p
    if os.path.exists(manifest) and not os.path.isfile(manifest):  # a FIFO or a device would block or never end
        raise HlodiffError("capture manifest is not a regular file", path=manifest)
    if os.path.isfile(manifest) and os.path.getsize(manifest) > MANIFEST_MAX_BYTES:
        raise HlodiffError("capture manifest too big to be one", path=manifest)
    try:
        with open(manifest, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise HlodiffError(f"no {MANIFEST_NAME} here (not a folder written by 'hlodiff record')", path=p) from None
    except json.JSONDecodeError as exc:  # a cut or hand-edited manifest: where, as for any other input
        raise HlodiffError(f"unreadable capture manifest: {exc.msg}", path=manifest, line=exc.lineno,
                           col=exc.colno) from None
    except (OSError, ValueError) as exc:
        raise HlodiffError(f"unreadable capture manifest: {exc}", path=manifest) from None
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        raise HlodiffError(f"unsupported capture manifest version {data.get('version')!r}"
                           if isinstance(data, dict) else "capture manifest is not a JSON object", path=manifest)
    return CapturePaths.from_json(data, os.path.dirname(os.path.abspath(manifest)))


def is_execution_run(folder: str | os.PathLike[str]) -> bool:
    """A ``hlodiff record`` folder whose graphs are read as a sequence of executions (see :data:`CAPTURE_EXECUTIONS`)."""
    p = os.fspath(folder)
    if not os.path.isfile(os.path.join(p, MANIFEST_NAME)):
        return False
    try:
        return read_manifest(p).capture == CAPTURE_EXECUTIONS
    except Exception:  # an unreadable manifest is reported by whoever reads it for real
        return False


def _rel(path: str | None, root: str) -> str | None:
    if path is None:
        return None
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def _abs(path: str | None, root: str) -> str | None:
    if path is None:
        return None
    return os.path.normpath(os.path.join(root, path))
