"""The environment that makes a run write everything hlodiff reads, and the manifest saying where it went.

:func:`capture_env` adds to an environment (never replacing what the user set):

=============================  ================================  =================================================
variable                       hlodiff's value                   read by
=============================  ================================  =================================================
``XLA_SAVE_TENSORS_FILE``      ``<out>/graphs.hlo``              torch_xla: one entry per sync, in ``graphs.hlo.0``
``XLA_SAVE_TENSORS_FMT``       ``hlo``                           torch_xla
``XLA_HLO_DEBUG``              ``1``                             torch_xla: source lines in HLO metadata
``XLA_IR_DEBUG``               ``1``                             torch_xla: ``Frames:``/``location=`` in reports
``PT_XLA_DEBUG_LEVEL``         ``1``                             torch_xla: compilation causes
``PT_XLA_DEBUG_FILE``          ``<out>/pt_xla_debug.log``        torch_xla (the log goes to stderr without it)
``HLODIFF_TENSORS_REPORT``     ``<out>/tensors_report.txt``      hlodiff's sync hook (:mod:`hlodiff.capture.hook`)
``XLA_FLAGS`` (appended)       ``--xla_dump_to=<out>/xla_dump    XLA (JAX, and every XLA compile of torch_xla too)
                               --xla_dump_hlo_as_text``
=============================  ================================  =================================================

A value the user already set (non-empty) is kept, and the manifest records where the files really go. For
``XLA_FLAGS``, a user ``--xla_dump_to`` is kept (``--xla_dump_hlo_as_text`` is still added when missing: without it
XLA dumps only binary protos).

The XLA dump is for JAX (and other non-torch_xla XLA programs). A torch_xla process would dump every graph a
second time, with LLVM IR and object files besides (dozens of files per compilation), so when the hook sees
``import torch_xla`` in a process that has not imported JAX, it takes back the dump flags hlodiff added (named in
``HLODIFF_XLA_DUMP_ADDED``; XLA reads ``XLA_FLAGS`` only when torch_xla first creates its runtime, later). A
``--xla_dump_to`` the user set is never removed.

The manifest, :class:`CapturePaths`, is written to ``<out>/hlodiff-record.json`` so later commands find everything
from the folder alone; paths inside the folder are stored relative to it (the folder can be moved or copied).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Mapping

MANIFEST_NAME = "hlodiff-record.json"
SAVE_BASENAME = "graphs.hlo"
DEBUG_LOG_NAME = "pt_xla_debug.log"
REPORT_NAME = "tensors_report.txt"
XLA_DUMP_NAME = "xla_dump"
MANIFEST_VERSION = 1

# Same names as in hook.py (which must stay importable without hlodiff).
REPORT_ENV = "HLODIFF_TENSORS_REPORT"
XLA_DUMP_ADDED_ENV = "HLODIFF_XLA_DUMP_ADDED"

_DUMP_TO_RE = re.compile(r"""(?:^|\s)--xla_dump_to(?:=|\s+)("[^"]*"|'[^']*'|\S+)""")
_AS_TEXT_RE = re.compile(r"(?:^|\s)--xla_dump_hlo_as_text(?:=(\S+))?(?=\s|$)")


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
    version: int = MANIFEST_VERSION

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
        for key in ("save_tensors_file", "debug_log", "tensors_report"):
            value = getattr(self, key)
            if value is not None and not os.path.isfile(value):
                setattr(self, key, None)
        if self.xla_dump is not None and not (os.path.isdir(self.xla_dump) and os.listdir(self.xla_dump)):
            self.xla_dump = None

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
        os.makedirs(self.out_dir, exist_ok=True)
        tmp = self.manifest_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=2)
            f.write("\n")
        os.replace(tmp, self.manifest_path)
        return self.manifest_path


_PATH_FIELDS = ("save_tensors_base", "save_tensors_file", "debug_log", "tensors_report", "xla_dump")


def read_manifest(path: str | os.PathLike[str]) -> CapturePaths:
    """The manifest of a capture folder (or the ``hlodiff-record.json`` file itself)."""
    from hlodiff.errors import HlodiffError

    p = os.fspath(path)
    manifest = os.path.join(p, MANIFEST_NAME) if os.path.isdir(p) else p
    try:
        with open(manifest, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise HlodiffError(f"no {MANIFEST_NAME} here (not a folder written by 'hlodiff record')", path=p) from None
    except (OSError, ValueError) as exc:
        raise HlodiffError(f"unreadable capture manifest: {exc}", path=manifest) from None
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        raise HlodiffError(f"unsupported capture manifest version {data.get('version')!r}"
                           if isinstance(data, dict) else "capture manifest is not a JSON object", path=manifest)
    return CapturePaths.from_json(data, os.path.dirname(os.path.abspath(manifest)))


class CaptureEnv(dict):
    """The full environment (a ``dict[str, str]`` for ``subprocess``), with the manifest as ``.paths``."""

    paths: CapturePaths


def capture_env(out_dir: str | os.PathLike[str], *, base_env: Mapping[str, str] | None = None,
                xla_dump: bool = True, write_manifest: bool = True, cwd: str | os.PathLike[str] | None = None
                ) -> CaptureEnv:
    """The environment making torch_xla (and XLA, for JAX) write everything hlodiff needs into ``out_dir``.

    Returns ``base_env`` (default: ``os.environ``) plus hlodiff's variables, as a dict whose ``.paths`` is the
    :class:`CapturePaths` manifest; the manifest is also written to ``<out_dir>/hlodiff-record.json`` (creating
    the output folders) unless ``write_manifest`` is False. Relative paths the user set are resolved against
    ``cwd`` (the directory the run will start in; default: the current one). ``xla_dump=False`` leaves
    ``XLA_FLAGS`` alone (the XLA dump is what JAX runs are read from).
    """
    out = os.path.abspath(os.fspath(out_dir))
    start_dir = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()

    def resolve(path: str) -> str:
        return os.path.normpath(os.path.join(start_dir, os.path.expanduser(path)))
    base = dict(os.environ if base_env is None else base_env)
    env = CaptureEnv(base)
    paths = CapturePaths(out_dir=out)
    env.paths = paths

    def choose(name: str, value: str) -> tuple[str, bool]:
        """The user's non-empty value, or ours; True when ours."""
        current = base.get(name, "")
        if current.strip():
            paths.user_set[name] = current
            return current, False
        env[name] = value
        paths.env_added[name] = value
        return value, True

    owned: list[str] = []

    save_base, ours = choose("XLA_SAVE_TENSORS_FILE", os.path.join(out, SAVE_BASENAME))
    paths.save_tensors_base = resolve(save_base)
    paths.save_tensors_file = paths.save_tensors_base + ".0"
    if ours:
        owned.append(paths.save_tensors_file)
    fmt, _ = choose("XLA_SAVE_TENSORS_FMT", "hlo")
    paths.save_tensors_fmt = fmt
    if fmt != "hlo":
        paths.warnings.append(f"XLA_SAVE_TENSORS_FMT={fmt} (set by you): hlodiff reads only 'hlo' save files")

    for name in ("XLA_HLO_DEBUG", "XLA_IR_DEBUG"):
        value, _ = choose(name, "1")
        if value.strip() in ("0", "false", "False"):
            paths.warnings.append(f"{name}={value} (set by you): graphs and reports will lack source lines")

    level, _ = choose("PT_XLA_DEBUG_LEVEL", "1")
    debug_file, ours = choose("PT_XLA_DEBUG_FILE", os.path.join(out, DEBUG_LOG_NAME))
    paths.debug_log = resolve(debug_file)
    if ours:
        owned.append(paths.debug_log)
    if level.strip() in ("0", "-1"):
        paths.warnings.append(f"PT_XLA_DEBUG_LEVEL={level} (set by you): no compilation log will be written")

    report, ours = choose(REPORT_ENV, os.path.join(out, REPORT_NAME))
    paths.tensors_report = resolve(report)
    if ours:
        owned.append(paths.tensors_report)

    if xla_dump:
        flags = base.get("XLA_FLAGS", "")
        m = _DUMP_TO_RE.search(flags)
        new_flags = flags
        if m is not None:
            dump_to = m.group(1).strip("\"'")
            paths.user_set["XLA_FLAGS"] = flags
            paths.xla_dump = resolve(dump_to) if dump_to not in ("-", "sponge") else None
            if paths.xla_dump is None:
                paths.warnings.append(f"--xla_dump_to={dump_to} (set by you) is not a folder: no XLA dump to read")
        else:
            paths.xla_dump = os.path.join(out, XLA_DUMP_NAME)
            new_flags = _join_flags(new_flags, "--xla_dump_to=" + _flag_value(paths.xla_dump))
            owned.append(paths.xla_dump)
        as_text = _AS_TEXT_RE.search(flags)
        if as_text is None:
            new_flags = _join_flags(new_flags, "--xla_dump_hlo_as_text")
        elif (as_text.group(1) or "true").lower() in ("false", "0"):
            paths.warnings.append("--xla_dump_hlo_as_text=false (set by you): the XLA dump will hold no HLO text")
        if new_flags != flags:
            env["XLA_FLAGS"] = new_flags
            paths.env_added["XLA_FLAGS"] = new_flags
            if m is None:
                # Tells the hook which flags to take back when the process turns out to be a torch_xla one.
                added = new_flags[len(flags):].strip()
                env[XLA_DUMP_ADDED_ENV] = added
                paths.env_added[XLA_DUMP_ADDED_ENV] = added

    if paths.save_tensors_file and os.path.exists(paths.save_tensors_file):
        from hlodiff.capture.hook import count_save_entries

        paths.save_tensors_start_entry = count_save_entries(paths.save_tensors_file)
        if paths.save_tensors_start_entry:
            paths.warnings.append(f"{paths.save_tensors_file} already holds {paths.save_tensors_start_entry} "
                                  "entries; torch_xla appends after them")
    paths.owned = [p for p in owned if not os.path.exists(p)]
    if write_manifest:
        paths.make_dirs()
        paths.write()
    return env


def _flag_value(value: str) -> str:
    """XLA splits ``XLA_FLAGS`` on whitespace; a value with spaces must be double-quoted."""
    return f'"{value}"' if re.search(r'[\s"]', value) else value


def _join_flags(flags: str, flag: str) -> str:
    return f"{flags.rstrip()} {flag}" if flags.strip() else flag


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
