"""A torch_xla run recorded cheaply (``hlodiff record``, the pytest plugin): the sequence of executions, each
pointing at the HLO of the compilation that produced its executable.

Writing the HLO of every execution (``XLA_SAVE_TENSORS_FILE``) costs a lowering and a device wait at every step;
this capture writes instead

* the ``PT_XLA_DEBUG_LEVEL=2`` log: one ``Execution Analysis`` block per execution, cache hits included (graph
  hash, the Python frames that triggered it, torch_xla's cause), and one ``Compilation Analysis`` block per
  compilation, in the order XLA compiled them;
* the XLA dump folder (``--xla_dump_to``): XLA writes a module only when it compiles one, so module *k* (in module
  number order) is the *k*-th compilation of the log.

:func:`scan_executions` joins the two into one :class:`GraphRecord` per execution (kind ``"executions"``), in run
order, numbered like the entries of a save-tensors file, so ``explain-recompile`` sees the same sequence of graphs
(and cache hits) it would read from a save file; only the text of compiled graphs exists, and cache hits point at
it. ``index`` is the execution's position in the log; the live-tensor reports of the capture use the same number
in their ``## SYNC <n>`` lines.

Users capture the same two files without hlodiff (``PT_XLA_DEBUG_LEVEL=2 PT_XLA_DEBUG_FILE=run/debug.log
XLA_FLAGS=--xla_dump_to=run/dump``): an XLA dump folder with such a log beside it (in the folder or its parent, any
name, recognised by content) whose compilations are exactly the dump's modules is read the same way
(:func:`log_beside`), so cache hits, and with them patterns like "alternating", are seen there too.

A log written with ``PT_XLA_DEBUG_LEVEL=1`` has no executions: the run is then read as its compilations only (with
a warning), each with its sync's frames (records marked ``hits_seen=False``); such a log beside a dump is joined the
same way (review 9, F1), so a setup graph and the step are families of their own. A graph executed from a compilation older than the log (a process cache warmed earlier) has no HLO:
skipped with a warning.

Compilations torch_xla makes inside an op are not announced and their executions are never logged. Those that are
autograd anomaly mode's NaN checks (:mod:`hlodiff.dumps.anomaly_checks`) ran before every execution of the step they
cut: a whole-log read tells them there (records numbered in that order, keyed ``autograd-anomaly-check:<module>``);
a read in windows (``first``/``end``) leaves them out, as before (round 17).
"""

from __future__ import annotations

import functools
import os
import re
import zlib
from dataclasses import dataclass, replace
from typing import Iterator

from hlodiff.dumps.anomaly_checks import CHECK_KEY, anomaly_checks, checked_steps
from hlodiff.dumps.debug_log import CompilationEvent, ExecutionEvent, iter_debug_events
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.manifest import MANIFEST_NAME, read_manifest
from hlodiff.dumps.xla_dump import scan_xla_dump
from hlodiff.errors import HlodiffError, InputWarning

KIND = "executions"


@dataclass(slots=True)
class ExecutionLog:
    """The events of a run's debug log, split by kind, in log order."""

    compilations: list[CompilationEvent]
    executions: list[ExecutionEvent]


def read_execution_log(path: str, warnings: list[InputWarning] | None = None) -> ExecutionLog:
    compilations: list[CompilationEvent] = []
    executions: list[ExecutionEvent] = []
    for event in iter_debug_events(path, warnings):
        (compilations if isinstance(event, CompilationEvent) else executions).append(event)
    return ExecutionLog(compilations, executions)


def scan_executions(folder: str, warnings: list[InputWarning] | None = None, *, stage: str | None = None,
                    first: int = 0, end: int | None = None) -> Iterator[GraphRecord]:
    """The executions ``first`` to ``end`` (exclusive) of a recorded folder, as graph records, in run order."""
    debug_log, xla_dump = _sources(folder)
    log = read_execution_log(debug_log, warnings)
    modules = _one_per_module(scan_xla_dump(xla_dump, warnings, stage=stage))
    runtime = [m for m in modules if runtime_module(m.module_name or "")]
    if runtime:
        modules = [m for m in modules if not runtime_module(m.module_name or "")]
        if first == 0:
            _warn(warnings, f"{len(runtime)} {RUNTIME_MODULES[0]} module{'s' if len(runtime) != 1 else ''} in the XLA "
                            "dump (torch_xla's SPMD runtime gathering a sharded tensor for a host read: .cpu(), "
                            ".item(), a state_dict) have no entry in the PT_XLA_DEBUG log: set aside, not steps",
                  xla_dump)
    source = os.fspath(folder)
    misfit = _misfit(log.compilations, modules)
    if misfit is not None:
        # Paired in order, the k-th compilation would be told with another graph's HLO, and every story after it
        # compares graphs of different families (review 8, F1): no sequence of executions is better than a wrong one.
        _warn(warnings, f"the PT_XLA_DEBUG log's compilations do not line up with the XLA dump's modules "
                        f"({misfit}): reading the dump's modules alone, as compilations without cache hits",
                        xla_dump)
        for index, module in enumerate(modules[first:end], start=first):
            yield _record(module, index, source, None)
        return
    by_hash = _compiled_modules(log.compilations, modules, xla_dump, warnings)
    sequence: list[CompilationEvent | ExecutionEvent] = list(log.executions)
    hits_seen = bool(sequence)
    if not sequence:
        _warn(warnings, "the PT_XLA_DEBUG log has no executions (PT_XLA_DEBUG_LEVEL=1?): reading the "
                        "compilations only, without cache hits", debug_log)
        sequence = [e for e in log.compilations if e.announced]
    checks = anomaly_checks(log.compilations, modules) if hits_seen and first == 0 and end is None else []
    steps = checked_steps(checks, log.executions)
    woven = sum(len(m) for m in steps.values())
    unannounced = sum(not e.announced for e in log.compilations)
    if unannounced and first == 0:
        told = "each keeps its module of the XLA dump, left out of the sequence of executions"
        if woven:
            rest = ", the others left out of the sequence" if unannounced > woven else ""
            told = (f"{woven} of them are autograd anomaly mode's NaN checks (any(isnan(...)) of a backward "
                    "value, read on the host), told before every execution of the step they cut, where they ran "
                    f"unlogged{rest}")
        _warn(warnings, f"{unannounced} compilation{'s' if unannounced > 1 else ''} the PT_XLA_DEBUG log does not "
                        "announce (a Post Compilation Analysis block alone: torch_xla compiled inside an op and "
                        f"logs no execution of it): {told}", debug_log)
    shift = 0
    for index, event in enumerate(sequence[first:end], start=first):
        module = by_hash.get(event.graph_hash or "")
        if module is None:
            _warn(warnings, f"execution {index} (graph hash {event.graph_hash}) has no compiled HLO in the dump "
                            "(compiled before the capture started?); skipped", debug_log, event.line)
            continue
        for check in steps.get(event.graph_hash or "", ()):
            yield replace(_record(check, index + shift, source, None, hits_seen),
                          graph_hash=f"{CHECK_KEY}{check.module_number}")
            shift += 1
        yield _record(module, index + shift, source, event, hits_seen)
    unlogged = modules[len(log.compilations):]
    if unlogged and log.executions and end is None:
        # The log stops before the dump does (the process was killed while writing it, or the file was cut): the
        # modules it never reached were still compiled. Damage is local: they follow its last execution, as
        # compilations only, rather than vanish with the log's tail.
        _warn(warnings, f"the PT_XLA_DEBUG log ends before the XLA dump's last {len(unlogged)} "
                        f"module{'s' if len(unlogged) > 1 else ''} (cut off?): read after its last execution, as "
                        "compilations only (their cache hits are not known)", debug_log)
        for index, module in enumerate(unlogged, start=max(first, len(sequence))):
            yield _record(module, index, source, None)


def _record(module: GraphRecord, index: int, source: str,
            event: CompilationEvent | ExecutionEvent | None, hits_seen: bool = True) -> GraphRecord:
    """The record of one execution (``event``) of a dumped module; without an event, a compilation the log missed."""
    return GraphRecord(path=module.path, index=index, kind=KIND, start_line=module.start_line, source=source,
                       graph_name=event.graph_name if event else None, frames=event.frames if event else None,
                       graph_hash=event.graph_hash if event else None, module_number=module.module_number,
                       module_name=module.module_name, stage=module.stage, complete=module.complete,
                       byte_offset=module.byte_offset, byte_length=module.byte_length,
                       packed_text=module.packed_text, proto_path=module.proto_path, hits_seen=hits_seen)


def _sources(folder: str) -> tuple[str, str]:
    """The debug log and the XLA dump folder of a recording (from its manifest) or of a dump with its log beside."""
    if not os.path.isfile(os.path.join(folder, MANIFEST_NAME)):
        log = log_beside(folder)
        if log is None:
            raise HlodiffError("no PT_XLA_DEBUG_LEVEL=2 log beside this XLA dump (the sequence of executions)",
                               path=folder)
        return log, folder
    paths = read_manifest(folder)
    if not paths.debug_log or not os.path.isfile(paths.debug_log):
        raise HlodiffError("this recording has no PT_XLA_DEBUG log (the sequence of executions)", path=folder)
    if not paths.xla_dump or not os.path.isdir(paths.xla_dump):
        raise HlodiffError("this recording has no XLA dump folder (the HLO of compiled graphs)", path=folder)
    from hlodiff.dumps.run_folder import as_typed

    return as_typed(paths.debug_log, folder), as_typed(paths.xla_dump, folder)


_MODULE_FILE = re.compile(r"^module_(\d+)\..+\.txt$")
_JAX_MODULE = re.compile(r"^module_\d+\.p?jit_")
"""A JAX dump's module file (``module_0003.jit_train_step...``): jax.jit names every module it lowers ``jit_<fn>``.
Since level-1 logs are read too (review 9), a count of compilations alone matched a torch_xla log in the parent of
a folder of JAX runs (../shared/scenarios' jax_weak_type, told as torch ops)."""

RUNTIME_MODULES = ("ReplicateShardedData",)
"""Modules torch_xla's runtime compiles without a PT_XLA_DEBUG compilation entry (round 8, spmd_load_state_mid: SPMD
gathers a sharded tensor with one such module per shape and sharding when it is read on the host). Pairing the
log's compilations with the dump's modules in order skips them, or every later module would be paired off by one."""


def runtime_module(name: str) -> bool:
    """A module (or its dump file name) that :data:`RUNTIME_MODULES` names."""
    return any(name.startswith(r) or f".{r}." in name for r in RUNTIME_MODULES)


_COMPILATION = b"Compilation Analysis: Compilation Cause"
_EXECUTION = b"Execution Analysis: "
_POST = b"Post Compilation Analysis: Graph input size"  # one per compilation, announced or not


def log_beside(dump: str) -> str | None:
    """The ``PT_XLA_DEBUG`` log of the run that wrote the XLA dump folder ``dump``, spelled from ``dump`` as
    given: a file in the folder or in its parent that has ``Execution Analysis`` (level 2) or ``Compilation
    Analysis`` (level 1) blocks and exactly as many
    compilations as the folder has modules (torch_xla writes one module per compilation, in order, and
    :func:`scan_executions` pairs them so). Anything else — no such file, a count that differs (another run's
    log, a log started late), two candidates — gives ``None``: the dump is then read as its compilations only,
    and the log still serves as a side input."""
    folder = os.path.abspath(dump)
    found = _log_beside(folder, _stamp(folder), _stamp(os.path.dirname(folder)))
    if found is None:
        return None
    inside, name = found
    return os.path.join(dump if inside else os.path.dirname(os.path.normpath(dump)), name)


def _stamp(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=32)
def _log_beside(folder: str, *_stamps: int) -> tuple[bool, str] | None:
    """Cached per folder and the folders' modification times: ``detect_kind`` asks again for every path."""
    from hlodiff.dumps._io import names_in
    from hlodiff.dumps.run_folder import MAX_SNIFFED, SIDE_NAME

    files = [name for name in names_in(folder) if _MODULE_FILE.match(name) and not runtime_module(name)]
    modules = {_MODULE_FILE.match(name).group(1) for name in files}
    if not modules or any(_JAX_MODULE.match(name) for name in files):
        return None  # JAX's modules (jit_f): a PT_XLA_DEBUG log beside them is another run's, whatever its count
    found = []
    for inside, place in ((True, folder), (False, os.path.dirname(folder))):
        names = [n for n in names_in(place) if SIDE_NAME.search(n) and not n.startswith("module_")]
        for name in names[:MAX_SNIFFED]:
            path = os.path.join(place, name)
            if os.path.isfile(path) and _is_debug_log(path) and len(modules) in (
                    _count(path, _COMPILATION), _count(path, _POST)):  # _POST: with unannounced compilations
                found.append((inside, name))
    return found[0] if len(found) == 1 else None


def _is_debug_log(path: str) -> bool:
    """A PT_XLA_DEBUG log of either level: level 2's executions, or level 1's compilations alone (review 9, F1:
    its ``Compilation Cause`` blocks still name the sync of every compilation, so a setup probe's graph and the
    training step's are told apart; left unread, they were one family and a steady run got three false fixes)."""
    from hlodiff.dumps._io import read_head

    try:
        head = read_head(path, 1 << 20)
        return _EXECUTION in head or _COMPILATION in head
    except HlodiffError:
        return False


def _count(path: str, needle: bytes) -> int:
    """Occurrences of ``needle`` in the (decompressed) file, read in chunks: a long run's log is not loaded whole."""
    from hlodiff.dumps._io import open_binary

    count, tail = 0, b""
    try:
        with open_binary(path) as f:
            while chunk := f.read(1 << 20):
                data = tail + chunk
                count += data.count(needle)
                tail = data[-(len(needle) - 1):]  # too short to hold a needle: none is counted twice
    except (OSError, EOFError, zlib.error):
        return -1
    return count


def count_executions(folder: str, warnings: list[InputWarning] | None = None) -> int:
    """How many executions the recording's log holds (the ``end`` of a complete :func:`scan_executions`)."""
    paths = read_manifest(folder)
    if not paths.debug_log or not os.path.isfile(paths.debug_log):
        return 0
    return len(read_execution_log(paths.debug_log, warnings).executions)


def _compiled_modules(compilations: list[CompilationEvent], modules: list[GraphRecord], dump: str,
                      warnings: list[InputWarning] | None) -> dict[str, GraphRecord]:
    """Graph hash -> the dump module of its compilation: the k-th compilation is the k-th module."""
    if len(modules) != len(compilations):
        _warn(warnings, f"{len(compilations)} compilations in the PT_XLA_DEBUG log but {len(modules)} modules in "
                        "the XLA dump; pairing them in order as far as both go", dump)
    found: dict[str, GraphRecord] = {}
    for event, module in zip(compilations, modules):
        if event.graph_hash:
            found.setdefault(event.graph_hash, module)
    return found


_ENTRY = re.compile(r"^ENTRY\s+%?\S+\s*\((.*)\)\s*->\s*(.*?)\s*\{\s*$", re.M)


def _signature(module: GraphRecord) -> tuple[int, int] | None:
    """(parameters, outputs) of a module's entry computation, from its ENTRY line; None where it cannot be read."""
    try:
        text = module.text()
    except (HlodiffError, OSError):
        return None
    m = _ENTRY.search(text)
    if m is None:
        return None
    return _top_level_count(m.group(1)), _top_level_count(m.group(2)[1:-1]) if m.group(2).startswith("(") else 1


def _top_level_count(text: str) -> int:
    """Comma-separated items outside brackets (``p0: f32[2,3], p1: (s32[], f32[])`` is 2)."""
    if not text.strip():
        return 0
    depth, count = 0, 1
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


def _misfit(compilations: list[CompilationEvent], modules: list[GraphRecord]) -> str | None:
    """The first compilation whose counts of inputs and outputs (torch_xla's Graph Info) are not those of the dump
    module it is paired with in order, said in words; None when every pair that can be checked fits."""
    for k, (event, module) in enumerate(zip(compilations, modules)):
        if not event.announced or event.num_inputs is None or event.num_outputs is None:
            continue
        sig = _signature(module)
        if sig is not None and sig != (event.num_inputs, event.num_outputs):
            return (f"compilation {k} has {event.num_inputs} inputs and {event.num_outputs} outputs, module "
                    f"{module.module_number} {sig[0]} parameters and {sig[1]} outputs")
    return None


def _one_per_module(records) -> list[GraphRecord]:
    seen: set[int | None] = set()
    out = []
    for record in records:
        if record.module_number not in seen:
            seen.add(record.module_number)
            out.append(record)
    return out


def _warn(warnings: list[InputWarning] | None, message: str, path: str, line: int | None = None) -> None:
    if warnings is not None:
        warnings.append(InputWarning(message, path, line))
