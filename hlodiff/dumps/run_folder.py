"""Where a run's files are: the dumps and the side channels found beside them (live-tensor reports, PT_XLA_DEBUG
logs, JAX compile logs), or where the manifest of a ``hlodiff record`` folder says they went. Finding files is reading
from disk, so it lives with the other readers; ``explain/`` only analyses what this returns.

Besides hlodiff's own names (``tensors_report.txt``, ``pt_xla_debug.log``), side channels are recognized by content:
users redirect their program's output to files named as they like (``train.log``, ``stdout.txt``, ``nohup.out``),
so every ``*.log``, ``*.txt``, ``*.out`` and ``*.err`` file (also gzip) beside the dump — and beside an XLA dump
folder, in its parent — is sniffed: a ``Tensor: id=`` line makes it a live-tensor report (a stdout log holding the
reports users print), ``TRACING CACHE MISS`` or ``Compiling jit(...)`` a JAX log, ``Compilation Analysis:`` a
PT_XLA_DEBUG log. Only the first MB is read. A log kept both plain and gzipped (``stdout.log`` and
``stdout.log.gz``) is read once, plain, with a warning: read twice, every report would be aligned twice.

Paths found beside a dump are spelled from the dump's path as the user typed it (``graphs.hlo.0`` run from its
folder finds ``stdout.log``, not ``./stdout.log``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps._io import found_text_files, names_in
from hlodiff.dumps.manifest import CAPTURE_EXECUTIONS, MANIFEST_NAME
from hlodiff.errors import HlodiffError, InputWarning


@dataclass(slots=True)
class RunInputs:
    """Everything one explanation reads: the dumps and the optional side channels."""

    paths: list[str]
    tensors_reports: list[str] = field(default_factory=list)
    debug_logs: list[str] = field(default_factory=list)
    jax_logs: list[str] = field(default_factory=list)
    warnings: list[InputWarning] = field(default_factory=list)
    dynamo_logs: list[str] = field(default_factory=list)
    """TORCH_LOGS (recompiles, graph_breaks) text and TORCH_TRACE structured logs (issue 31)."""
    empty_logs: list[str] = field(default_factory=list)
    """Empty program logs beside the dump (``stderr.log`` of README's torch.compile recipe, 0 bytes when Dynamo
    logged nothing: review 19, F6): not a missing log, and said so."""


def discover(paths: list[str], tensors_report: str | None, debug_log: str | None,
             jax_log: str | None = None, dynamo_log: str | None = None) -> RunInputs:
    """Side channels given explicitly, else found beside the dump: by hlodiff's names first (as ``hlodiff record``
    lays them out), then by content.

    A folder written by ``hlodiff record`` stands for its save-tensors file or XLA dump folder.
    """
    inputs = RunInputs([])
    for path in paths:
        run_dir = path if os.path.isdir(path) else None
        inner = dump_inside(path) if run_dir else None
        if inner is not None:  # a run folder: read the dump inside, and the logs of both
            path = inner
        folder = path if os.path.isdir(path) else os.path.dirname(path)  # "" (not "."): no "./" on found paths
        recorded = os.path.isdir(path) and not is_xla_dump_folder(path)
        if recorded:
            found = _recorded_dumps(path)
            if not found:
                _one_process_at_a_time(path)
                if not _dynamo_log_alone(path, inputs):
                    raise HlodiffError("no dump here: expected graphs.hlo.N or an xla_dump folder", path=path)
                continue
            inputs.paths.extend(found)
        else:
            inputs.paths.append(path)
        side = _manifest_side_files(folder) if recorded else {}
        if recorded:
            _manifest_library_roots(folder)
        for name, target, given in (("tensors_report.txt", inputs.tensors_reports, tensors_report),
                                    ("pt_xla_debug.log", inputs.debug_logs, debug_log)):
            candidate = side.get(name) or os.path.join(folder, name)
            if given is None and os.path.isfile(candidate) and _key(candidate) not in {_key(t) for t in target} \
                    and found_text_files([candidate], inputs.warnings):  # empty: record saw no sync (torch.compile)
                target.append(candidate)
        _sniff_folder(folder, inputs, given=(tensors_report, debug_log, jax_log))
        if os.path.isdir(path) and not recorded:  # an XLA dump folder: the run's logs sit beside it
            _sniff_folder(os.path.dirname(os.path.normpath(path)), inputs,
                          given=(tensors_report, debug_log, jax_log))
        elif inner is not None:  # a recording inside a run folder: the program's own logs may sit beside it
            _sniff_folder(run_dir, inputs, given=(tensors_report, debug_log, jax_log))
    if tensors_report:
        inputs.tensors_reports = [tensors_report]
    if debug_log:
        inputs.debug_logs = [debug_log]
    if jax_log:
        from hlodiff.dumps.jax_log import check_jax_log

        check_jax_log(jax_log)
        inputs.jax_logs = [jax_log]
    if dynamo_log:  # issue 31: given explicitly, it replaces what was found
        if not os.path.exists(dynamo_log):
            raise HlodiffError("no such file or folder", path=dynamo_log)
        inputs.dynamo_logs = [dynamo_log]
    return inputs


SIDE_NAME = re.compile(r"\.(log|txt|out|err)(\.gz)?$")
"""Names a program's redirected output goes to (sniffed by content; any of them may be gzip)."""
_SNIFF = 1 << 20
EMPTY_LOG_WORDS = ("stderr", "torch_logs", "dynamo")
"""Words in the name of an empty file taken as the program's (empty) stderr or TORCH_LOGS file (review 19, F6):
``stderr.log``, ``torch_logs.txt``, ``dynamo.log``, and any ``*.err``; an empty ``stdout.log`` or notes file says
nothing of Dynamo."""


def empty_log_name(name: str) -> bool:
    """``name`` is one :data:`EMPTY_LOG_WORDS` names, or a ``.err`` file."""
    lower = name.lower()
    return lower.endswith(".err") or any(word in lower for word in EMPTY_LOG_WORDS)
_REPORT_LINE = re.compile(r"^Tensor: id=\d+, shape=", re.M)
_DEBUG_BLOCK = re.compile(r"^(?:Unexpected )?(?:Compilation|Execution) Analysis: =+\s*$", re.M)
"""The first line of a block torch_xla writes: what the debug-log reader needs to find at least once."""
MAX_SNIFFED = 64
"""At most this many candidate files are opened per folder (a dump beside a home folder full of logs)."""


def side_files_in(folder: str) -> RunInputs:
    """The side channels of one folder recognized by content, as :func:`discover` recognizes them: a growing run's
    folder is asked again at each poll until its live-tensor report or JAX log appears (:mod:`hlodiff.live_run`)."""
    inputs = RunInputs([])
    _sniff_folder(folder, inputs, given=(None, None, None))
    return inputs


def _dynamo_log_alone(folder: str, inputs: RunInputs) -> bool:
    """A folder with Dynamo's log and no dump: the program stopped before XLA compiled anything (Dynamo raised at
    the first call, e.g. a graph break under ``fullgraph=True``: Dynamo round 12). Dynamo's log alone is read."""
    found = RunInputs([])
    _sniff_folder(folder, found, given=(None, None, None))
    if not found.dynamo_logs:
        return False
    inputs.dynamo_logs.extend(p for p in found.dynamo_logs if p not in inputs.dynamo_logs)
    return True


def _sniff_folder(folder: str, inputs: RunInputs, given: tuple[str | None, str | None, str | None]) -> None:
    """Add the side channels of ``folder`` recognized by content (see the module docstring)."""
    from hlodiff.dumps._io import decode, is_nul_tail, read_head
    from hlodiff.dumps.jax_log import looks_like_jax_log

    known = {_key(p) for p in (*inputs.paths, *inputs.tensors_reports, *inputs.debug_logs, *inputs.jax_logs)}
    names = names_in(folder)
    candidates = [os.path.join(folder, n) for n in names if SIDE_NAME.search(n) and not n.startswith("module_")
                  and not _SAVE_FILE.match(n)]
    for path in candidates[:MAX_SNIFFED]:
        if _key(path) in known or not os.path.isfile(path):
            continue
        if path.endswith(".gz") and _key(path[:-3]) in known:  # sorted: the plain one came first
            inputs.warnings.append(InputWarning(f"{os.path.basename(path[:-3])} is beside it: read that one only "
                                                "(the same log compressed?)", path))
            continue
        try:
            head = decode(read_head(path, _SNIFF))
        except HlodiffError:
            continue  # unreadable: not ours to complain about, the user did not name it
        if not head:
            if empty_log_name(os.path.basename(path)):
                inputs.empty_logs.append(path)
            continue
        if (nul := head.find("\0")) >= 0:
            if nul == 0 or not is_nul_tail(head[nul:]):
                continue  # binary
            head = head[:nul]  # a NUL tail (a crash): the log is still read, and its reader warns where it ends
        if given[0] is None and _REPORT_LINE.search(head):
            inputs.tensors_reports.append(path)
        elif given[2] is None and looks_like_jax_log(head):
            inputs.jax_logs.append(path)
        elif given[1] is None and "Compilation Analysis:" in head:
            if not _DEBUG_BLOCK.search(head):  # grep output, notes quoting the log: not a log to read
                inputs.warnings.append(InputWarning("has 'Compilation Analysis:' lines but no PT_XLA_DEBUG analysis "
                                                    "block; not read as the run's debug log", path))
                continue
            inputs.debug_logs.append(path)
        elif _dynamo_head(head):
            inputs.dynamo_logs.append(path)
        else:
            continue
        known.add(_key(path))
    _dynamo_trace_folders(folder, names, inputs, known)


def _dynamo_head(head: str) -> bool:
    from hlodiff.dumps.dynamo_log import looks_like_dynamo_log

    return looks_like_dynamo_log(head)


def _dynamo_trace_folders(folder: str, names: list[str], inputs: RunInputs, known: set[str]) -> None:
    """A TORCH_TRACE folder beside the dump (``TORCH_TRACE=run/trace``): its structured logs (issue 31)."""
    from hlodiff.dumps.dynamo_trace import trace_files

    for name in names:
        sub = os.path.join(folder, name)
        if name.startswith("module_") or not os.path.isdir(sub) or _key(sub) in known:
            continue
        if trace_files(sub):
            inputs.dynamo_logs.append(sub)
            known.add(_key(sub))


def _key(path: str) -> str:
    """One spelling per file, however it was reached (relative, absolute, through ``..``)."""
    return os.path.abspath(path)


def _manifest_side_files(folder: str) -> dict[str, str]:
    """Where a recording's report and debug log went (the user may have set PT_XLA_DEBUG_FILE themselves)."""
    if not os.path.isfile(os.path.join(folder, "hlodiff-record.json")):
        return {}
    from hlodiff.dumps.manifest import read_manifest

    paths = read_manifest(folder)
    return {name: as_typed(p, folder) for name, p in (("tensors_report.txt", paths.tensors_report),
                                                       ("pt_xla_debug.log", paths.debug_log)) if p}


def as_typed(path: str, folder: str) -> str:
    """A path the manifest holds, spelled from the folder as the user typed it when it lies inside it (so a file
    found there by name and by content is seen as one file, and reports name it as the user knows it)."""
    inside = os.path.relpath(os.path.abspath(path), os.path.abspath(folder or "."))
    return path if inside.startswith(os.pardir) else os.path.join(folder, inside)


def _manifest_library_roots(folder: str) -> None:
    """Where the recorded program's interpreter and installed distributions lived (``library_roots`` in the
    manifest, when ``record`` wrote it): frames under them are library code, whatever their folder names."""
    import json

    from hlodiff.hlo.installed import add_library_roots

    manifest = os.path.join(folder, "hlodiff-record.json")
    if not os.path.isfile(manifest):  # absent, or a FIFO that would block the open
        return
    try:
        with open(manifest, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return  # no manifest, or one read_manifest reports on
    roots = data.get("library_roots") if isinstance(data, dict) else None
    if isinstance(roots, list):
        add_library_roots(r for r in roots if isinstance(r, str))


def dump_inside(folder: str) -> str | None:
    """The one dump in a subfolder of a run folder that holds none itself: the folder a script's output went to,
    with ``--xla_dump_to=dump`` (or ``hlodiff record --out rec``) inside it and the program's logs beside that
    (``run/stderr.log``, ``run/dump/``). Users point at the run, not at the dump. ``None`` when the folder holds a
    dump of its own, or none or several dump subfolders (several are ranks or separate runs: see
    :mod:`hlodiff.dumps.ranks`)."""
    names = names_in(folder)
    if MANIFEST_NAME in names and not any(n.startswith("module_") or _SAVE_FILE.match(n) for n in names):
        from hlodiff.dumps.manifest import recorded_processes

        processes = recorded_processes(folder)  # one process of a launcher captured (issue 36): its folder
        if len(processes) == 1:
            return os.path.join(folder, os.path.relpath(processes[0]["path"], os.path.abspath(folder)))
    if any(n.startswith("module_") or _SAVE_FILE.match(n) or n == MANIFEST_NAME for n in names):
        return None
    inner = [os.path.join(folder, n) for n in names if os.path.isdir(os.path.join(folder, n))]
    dumps = [d for d in inner if is_xla_dump_folder(d) or _holds_recording(d)]
    return dumps[0] if len(dumps) == 1 else None


def _one_process_at_a_time(folder: str) -> None:
    """A recording of a launcher's processes (issue 36) given to a command that reads one run: say which folders
    to give instead."""
    from hlodiff.dumps.manifest import recorded_processes

    processes = recorded_processes(folder)
    if len(processes) > 1:
        names = ", ".join(os.path.join(folder, p["folder"]) for p in processes[:4])
        raise HlodiffError(f"a recording of {len(processes)} processes, one folder each ({names}"
                           f"{', ...' if len(processes) > 4 else ''}): give one of them", path=folder)


def _holds_recording(folder: str) -> bool:
    return any(_SAVE_FILE.match(n) or n == MANIFEST_NAME for n in names_in(folder))


def is_xla_dump_folder(folder: str) -> bool:
    """A folder XLA dumped modules into (``module_NNNN.*`` files); an unreadable folder is not one."""
    return any(name.startswith("module_") for name in names_in(folder))


_SAVE_FILE = re.compile(r"graphs\.hlo\.\d+(\.gz)?$")


def _recorded_dumps(folder: str) -> list[str]:
    """The dumps of a `hlodiff record` folder: where its manifest says they went (the user may have chosen their
    own XLA_SAVE_TENSORS_FILE), else the names record uses."""
    manifest = os.path.join(folder, "hlodiff-record.json")
    if os.path.isfile(manifest):
        from hlodiff.dumps.manifest import read_manifest

        paths = read_manifest(folder)
        if paths.capture == CAPTURE_EXECUTIONS and paths.debug_log and os.path.isfile(paths.debug_log):
            return [folder]  # read as a sequence of executions (hlodiff.dumps.executions)
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
