"""Where a run's files are: the dumps and the side channels found beside them (live-tensor reports, PT_XLA_DEBUG
logs), or where the manifest of a ``hlodiff record`` folder says they went. Finding files is reading from disk, so it
lives with the other readers; ``explain/`` only analyses what this returns.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlodiff.errors import HlodiffError


@dataclass(slots=True)
class RunInputs:
    """Everything one explanation reads: the dumps and the optional side channels."""

    paths: list[str]
    tensors_reports: list[str] = field(default_factory=list)
    debug_logs: list[str] = field(default_factory=list)


def discover(paths: list[str], tensors_report: str | None, debug_log: str | None) -> RunInputs:
    """Side channels given explicitly, else found beside a save-tensors file (as ``hlodiff record`` lays them out).

    A folder written by ``hlodiff record`` stands for its save-tensors file or XLA dump folder.
    """
    inputs = RunInputs([])
    for path in paths:
        folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
        recorded = os.path.isdir(path) and not _has_hlo_files(path)
        if recorded:
            found = _recorded_dumps(path)
            if not found:
                raise HlodiffError("no dump here: expected graphs.hlo.N or an xla_dump folder", path=path)
            inputs.paths.extend(found)
        else:
            inputs.paths.append(path)
        side = _manifest_side_files(folder) if recorded else {}
        for name, target, given in (("tensors_report.txt", inputs.tensors_reports, tensors_report),
                                    ("pt_xla_debug.log", inputs.debug_logs, debug_log)):
            candidate = side.get(name) or os.path.join(folder, name)
            if given is None and os.path.isfile(candidate) and candidate not in target:
                target.append(candidate)
    if tensors_report:
        inputs.tensors_reports = [tensors_report]
    if debug_log:
        inputs.debug_logs = [debug_log]
    return inputs


def _manifest_side_files(folder: str) -> dict[str, str]:
    """Where a recording's report and debug log went (the user may have set PT_XLA_DEBUG_FILE themselves)."""
    if not os.path.isfile(os.path.join(folder, "hlodiff-record.json")):
        return {}
    from hlodiff.capture.env import read_manifest

    paths = read_manifest(folder)
    return {name: p for name, p in (("tensors_report.txt", paths.tensors_report),
                                    ("pt_xla_debug.log", paths.debug_log)) if p}


def _has_hlo_files(folder: str) -> bool:
    return any(name.startswith("module_") for name in os.listdir(folder))


_SAVE_FILE = re.compile(r"graphs\.hlo\.\d+(\.gz)?$")


def _recorded_dumps(folder: str) -> list[str]:
    """The dumps of a `hlodiff record` folder: where its manifest says they went (the user may have chosen their
    own XLA_SAVE_TENSORS_FILE), else the names record uses."""
    manifest = os.path.join(folder, "hlodiff-record.json")
    if os.path.isfile(manifest):
        from hlodiff.capture.env import read_manifest  # stdlib only; no torch

        paths = read_manifest(folder)
        found = list(paths.save_tensors_files())
        if paths.xla_dump and os.path.isdir(paths.xla_dump) and os.listdir(paths.xla_dump):
            found.append(paths.xla_dump)
        if found:
            return found
    found = sorted(os.path.join(folder, n) for n in os.listdir(folder) if _SAVE_FILE.match(n))
    dump = os.path.join(folder, "xla_dump")
    if os.path.isdir(dump):
        found.append(dump)
    return found
