"""Where graphs come from: torch_xla save-tensors files, XLA dump folders, plain HLO files.

:func:`iter_graphs` takes whatever path the user gave and yields :class:`GraphRecord` s in order, each knowing
its provenance; :func:`resolve_ref` finds the one named ``PATH#N``. What a path is, is decided from its content
(the first 64 KB), not its name: users rename and gzip dumps. Nothing here parses HLO unless
:meth:`GraphRecord.module` is called.

The side channels torch_xla offers to explain a graph live in :mod:`hlodiff.dumps.tensors_report` (live-tensor
reports) and :mod:`hlodiff.dumps.debug_log` (``PT_XLA_DEBUG_LEVEL`` output).
"""

from __future__ import annotations

import os
import re
from typing import Iterator

from hlodiff.dumps._io import BOM, check_text, meaningful_lines, missing_path_error, read_head
from hlodiff.dumps.hlo_file import looks_like_hlo, scan_hlo_file
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.save_tensors_sniff import looks_like_save_tensors
from hlodiff.dumps.installed_modules import installed_module_paths
from hlodiff.hlo.installed import list_installed_with
from hlodiff.errors import HlodiffError, InputWarning, shown

# The library-code lookup (hlodiff.hlo.installed, hlodiff.hlo.library_modules) learns from here which distributions are installed where
# hlodiff runs: reading site-packages is this layer's. Listed lazily, at its first lookup.
list_installed_with(installed_module_paths)

# Names re-exported from the readers of folders, logs and live-tensor reports, imported on first use: a file
# of HLO text (what `compare A B` reads) needs none of them.
_LAZY = {
    "CompilationEvent": "debug_log", "ExecutionEvent": "debug_log", "iter_debug_events": "debug_log",
    "read_compilations": "debug_log", "IrNode": "tensors_report", "IrOperand": "tensors_report",
    "LiveTensor": "tensors_report", "SyncReport": "tensors_report", "iter_reports": "tensors_report",
    "read_reports": "tensors_report",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hlodiff.dumps' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"hlodiff.dumps.{module}"), name)

__all__ = [
    "GraphRecord", "detect_kind", "dump_stages", "iter_graphs", "resolve_ref", "split_ref",
    "IrNode", "IrOperand", "LiveTensor", "SyncReport", "iter_reports", "read_reports",
    "CompilationEvent", "ExecutionEvent", "iter_debug_events", "read_compilations",
]

_REF_RE = re.compile(r"^(.*)#(-?[0-9]{1,9})$")


def detect_kind(path: str | os.PathLike[str]) -> str:
    """``"save_tensors"``, ``"xla_dump"``, ``"executions"`` (a folder ``hlodiff record`` wrote with the cheap
    torch_xla capture, or an XLA dump with its PT_XLA_DEBUG_LEVEL=2 log beside it: :mod:`hlodiff.dumps.executions`) or ``"hlo_file"``; a one-line :class:`HlodiffError` for anything else."""
    p = os.fspath(path)
    if os.path.isdir(p):
        from hlodiff.dumps.executions import log_beside
        from hlodiff.dumps.manifest import is_execution_run

        return "executions" if is_execution_run(p) or log_beside(p) else "xla_dump"
    if not os.path.exists(p):
        raise missing_path_error(p)
    if not os.path.isfile(p):
        raise HlodiffError("not a regular file (a pipe or a device?): save the dump to a file first", path=p)
    head = read_head(p)
    check_text(p, head)
    head = head.removeprefix(BOM)
    if looks_like_save_tensors(head):
        return "save_tensors"
    if looks_like_hlo(head):
        return "hlo_file"
    raise HlodiffError(f"not an HLO dump: {_why_not(head)}", path=p, line=1)


def iter_graphs(path: str | os.PathLike[str], warnings: list[InputWarning] | None = None, *,
                stage: str | None = None) -> Iterator[GraphRecord]:
    """Yield the graphs found at ``path``, in order, with their provenance.

    Problems that do not stop the run (a graph cut off by a killed process, junk between entries) are appended
    to ``warnings`` when a list is given, and dropped otherwise. ``stage`` only matters for XLA dump folders:
    see :func:`hlodiff.dumps.xla_dump.select` (default: ``before_optimizations``, the HLO the program produced).
    """
    p = os.fspath(path)
    if os.path.isdir(p):
        from hlodiff.dumps.run_folder import dump_inside

        p = dump_inside(p) or p  # a run folder stands for the one dump inside it
    kind = detect_kind(p)  # eagerly: a bad path fails at this call, not at the first next()
    if kind == "xla_dump":
        from hlodiff.dumps.xla_dump import scan_xla_dump

        return scan_xla_dump(p, warnings, stage=stage)
    if kind == "executions":
        from hlodiff.dumps.executions import scan_executions

        return scan_executions(p, warnings, stage=stage)
    if kind == "save_tensors":
        from hlodiff.dumps.save_tensors import scan_save_tensors  # not at start-up: a file of HLO text needs none of it

        return scan_save_tensors(p, shown(p), warnings)
    return scan_hlo_file(p, shown(p), warnings)


def split_ref(ref: str) -> tuple[str, int | None]:
    """``"graphs.hlo.0#3"`` -> ``("graphs.hlo.0", 3)``; a plain path (even one containing ``#``) -> ``(path, None)``."""
    m = _REF_RE.match(ref)
    if os.path.exists(ref):
        return ref, None
    if m is None:
        head, hash_sign, tail = ref.rpartition("#")
        if hash_sign and head and os.path.exists(head):  # a graph selector that is not a number: say that
            raise HlodiffError(f"'#{tail}' is not a graph number: name a graph as {head}#N (#0 the first, #-1 the "
                               "last)", path=head)
        return ref, None
    return m.group(1), int(m.group(2))


def resolve_ref(ref: str, warnings: list[InputWarning] | None = None, *, stage: str | None = None) -> GraphRecord:
    """The graph a user named as ``PATH#N`` (``#-1`` is the last one). ``PATH`` alone is accepted when it holds
    exactly one graph."""
    path, n = split_ref(ref)
    graphs = iter_graphs(path, warnings, stage=stage)
    if n is not None and n >= 0:  # the scan stops at the graph asked for: what follows is not read
        records = []
        for record in graphs:
            if record.index == n:
                return record
            records.append(record)
        raise HlodiffError(_out_of_range(records, n), path=path)
    records = list(graphs)
    if n is None:
        if len(records) == 1:
            return records[0]
        raise HlodiffError(f"holds {_count(records)}; name one as {path}#N", path=path)
    if -n <= len(records):
        return records[n]
    raise HlodiffError(_out_of_range(records, n), path=path)


def dump_stages(path: str | os.PathLike[str]) -> list[str]:
    """The stages present in an XLA dump folder, in pipeline order (for ``--stage`` help and errors)."""
    from hlodiff.dumps.xla_dump import list_dump_files, stages_of

    return stages_of(list_dump_files(os.fspath(path)))


def _count(records: list[GraphRecord]) -> str:
    if not records:
        return "no readable graph"
    return "1 graph" if len(records) == 1 else f"{len(records)} graphs"


def _out_of_range(records: list[GraphRecord], n: int) -> str:
    if not records:
        return f"no graph #{n}: no readable graph here"
    indices = [r.index for r in records]
    if 0 <= n < indices[-1]:
        return f"graph #{n} was skipped (cut off or malformed; see the warnings)"
    verb = "is" if len(records) == 1 else "are"
    return f"no graph #{n}: there {verb} {_count(records)} (#{indices[0]} to #{indices[-1]})"


def _why_not(head: bytes) -> str:
    """Name what the file looks like instead, so the user knows which option or tool wanted it."""
    lines = meaningful_lines(head, limit=5)
    first = lines[0] if lines else b""
    if first.startswith((b"## SYNC", b"Tensor: id=")):
        return ("this is a torch_xla live-tensor report (a side input: give the dump it goes with, and this file "
                "with --tensors-report or beside the dump)")
    if b"Compilation Analysis: " in head or b"Execution Analysis: " in head:
        return ("this is a PT_XLA_DEBUG log (a side input: give the dump it describes, --debug-log for the log; "
                "a PT_XLA_DEBUG log (level 1 or 2) beside an --xla_dump_to folder is joined to it by itself)")
    from hlodiff.dumps.jax_log import looks_like_jax_log

    if first.startswith(b"Finished tracing") or looks_like_jax_log(head.decode("utf-8", "replace")):
        return "this is a JAX compile log (hlodiff reads it as a side input, --jax-log, not as a graph)"
    if first.startswith((b"module @", b"module {", b"func.func")):
        return "StableHLO/MLIR text is not supported; dump HLO text instead"
    text = first.decode("utf-8", "replace")
    if len(text) > 60:
        text = text[:57] + "..."
    return f"first line is {text!r}; expected 'HloModule' or a torch_xla save-tensors entry"
