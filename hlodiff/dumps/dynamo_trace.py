"""TorchDynamo's ``TORCH_TRACE`` structured log (what tlparse reads), the second of the two things users capture
beside ``TORCH_LOGS`` text (:mod:`hlodiff.dumps.dynamo_log`, which decides which one a file is): one JSON record
per line after the glog prefix, payload lines indented by a tab after it; a ``str`` table of file names,
``dynamo_start`` (the call stack, the user's call of the compiled function outermost), ``compilation_metrics``
(compile id, function, file, first line), the ``recompile_reasons`` artifact (a JSON list of failed guards) and
``dynamo_graph_break_reason`` (the same text as the graph-break log).

Its own module because it reads a different format into the same :class:`~hlodiff.dumps.dynamo_log.DynamoLog`:
records are told from their first bytes, the FX graphs that make most of a real model's log are never parsed, and
the guard and graph-break texts inside the records are read by the text reader's helpers.
"""

from __future__ import annotations

import json
import os
import re
from typing import Iterable

from hlodiff.dumps.dynamo_log import LOG_PREFIX, CacheRestart, DynamoLog, break_block, guard_failure, with_whole_path
from hlodiff.dumps.python_calls import callee_on_line
from hlodiff.errors import InputWarning
from hlodiff.hlo.model import SourceFrame

TRACE_PREFIX = "dedicated_log_torch_trace"
"""How ``TORCH_TRACE`` names its files (one per process/rank) in the folder it was given."""


def trace_files(folder: str) -> list[str]:
    """The structured logs in a ``TORCH_TRACE`` folder."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.startswith(TRACE_PREFIX)
            and os.path.isfile(os.path.join(folder, n))]




_WANTED = ('{"str"', '{"dynamo_start"', '{"compilation_metrics"')
_WANTED_ARTIFACTS = ('"recompile_reasons"', '"dynamo_graph_break_reason"')


def _wanted(body: str) -> bool:
    """A record this reader uses, told from its first bytes (the rest, mostly FX graphs, is never parsed)."""
    return body.startswith(_WANTED) or (body.startswith('{"artifact"') and any(a in body for a in _WANTED_ARTIFACTS))


def read_trace(path: str, lines: Iterable[str], warnings: list[InputWarning] | None) -> DynamoLog:
    records: list[tuple[int, dict, list[str]]] = []
    keep = False
    for lineno, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if text.startswith("\t"):
            if keep and records:
                records[-1][2].append(text[1:])
            continue
        keep = False
        prefix = LOG_PREFIX.match(text)
        if prefix is None:
            continue
        body = text[prefix.end():]
        if body.startswith("{") and not _wanted(body):
            continue
        keep = True
        try:
            record = json.loads(body)
        except ValueError:
            if warnings is not None:
                warnings.append(InputWarning("a structured-log record that is not JSON (cut?); skipped", path,
                                             lineno))
            keep = False  # its payload lines are dropped with it
            continue
        if isinstance(record, dict):
            records.append((lineno, record, []))
    return log_of_records(path, records, warnings)


def log_of_records(path: str, records: list[tuple[int, dict, list[str]]],
                   warnings: list[InputWarning] | None = None) -> DynamoLog:
    """Typed events from structured-log records (line number, the record, its payload lines): read from a
    TORCH_TRACE file, or caught in the process by :mod:`hlodiff.capture.dynamo_watch`."""
    log = DynamoLog(path, "trace")
    names: dict[int, str] = {}
    finished: dict[str, tuple] = {}  # compile id -> the function its compilation_metrics named
    started: dict[str, SourceFrame | None] = {}  # compile id -> the call of its latest dynamo_start
    for lineno, record, payload in records:
        try:
            if not record:
                continue
            cid = _compile_id(record)
            if "str" in record:
                entry = record["str"]
                if isinstance(entry, list) and len(entry) == 2:
                    names[int(entry[1])] = str(entry[0])
            elif "dynamo_start" in record and cid:
                c = log.compile(cid)
                c.log_line = c.log_line or lineno
                stack = [_stack_frame(f, names) for f in record["dynamo_start"].get("stack", [])]
                stack = [f for f in stack if f is not None]
                started[cid] = _call_site(stack)
                c.call = c.call or started[cid]
                c.callee = callee_on_line(c.call.file, c.call.line) if c.call is not None else None
                if stack and c.definition is None:
                    c.definition = stack[-1]
            elif "compilation_metrics" in record:
                m = record["compilation_metrics"]
                cid = m.get("compile_id") or cid
                if not cid:
                    continue
                c = log.compile(cid)
                limit = _recompile_limit(m)
                if limit is not None and (cid, limit) not in log.limit_hits:
                    log.limit_hits.append((cid, limit))
                key = (m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno"))
                if cid in finished and finished[cid] == key and key[0]:
                    # the same function compiled again under an id it had finished: Dynamo was reset in between
                    where = (SourceFrame(key[1], int(key[2]), key[0]) if key[1] and key[2] is not None else None)
                    log.restarts.append(CacheRestart(cid, key[0], where, started.get(cid), lineno))
                finished[cid] = key
                c.function = m.get("co_name") or c.function
                c.resume = bool(c.function and c.function.startswith("torch_dynamo_resume_in_"))
                if m.get("co_filename") and m.get("co_firstlineno") is not None:
                    c.definition = SourceFrame(m["co_filename"], int(m["co_firstlineno"]), c.function)
            elif "artifact" in record and cid:
                name = record["artifact"].get("name")
                if name == "recompile_reasons":
                    try:
                        reasons = json.loads("\n".join(payload))
                    except ValueError:
                        if warnings is not None:
                            warnings.append(InputWarning("recompile reasons cut off; skipped", path, lineno))
                        continue
                    c = log.compile(cid)
                    for reason in reasons if isinstance(reasons, list) else []:
                        against, _, guard = str(reason).partition(": ")
                        if not re.fullmatch(r"\d+/\d+", against):
                            against, guard = None, str(reason)
                        c.failures.append(guard_failure(against, guard))
                elif name == "dynamo_graph_break_reason":
                    brk = break_block(cid, lineno, payload)
                    if brk is not None:
                        log.graph_breaks.append(brk)
        except (KeyError, TypeError, ValueError, AttributeError):
            # a record of the right keys with values of another shape (a cut or edited trace, another torch):
            # it costs only itself (quality bar: damage is local)
            if warnings is not None:
                warnings.append(InputWarning("a structured-log record of an unexpected shape; skipped", path, lineno))
    _whole_paths(log, names.values())
    log.compiles.sort(key=lambda c: (c.frame, c.attempt))
    return log


def _whole_paths(log: DynamoLog, files: Iterable[str]) -> None:
    """The structured log's recompile reasons quote the guard's file as torch shortened it, as the text log does:
    read with the whole path its compilation_metrics (the definition) or its file table names, once every record is
    in (the reasons come before the metrics that name the file)."""
    files = list(files)
    # an attempt Dynamo refused at its recompile limit names no function of its own (review 18, F2: its guard read
    # as ``ork/notes/...`` and a --source-map hint): its frame's other compiles name the same definition
    # (one frame is one code object: the same function and definition), so every path reads it from there
    # (only a refused attempt: a compile read live before its own metrics arrive keeps waiting for them, so its
    # line stays the call's, not the definition's: dyn_modulelist_grow, review3_hook_guard)
    of_frame = {c.frame: c for c in log.compiles if c.definition is not None and not c.resume}
    refused = {cid for cid, _ in log.limit_hits}
    for c in log.compiles:
        if c.definition is None and c.compile_id in refused and (named := of_frame.get(c.frame)) is not None:
            c.definition, c.function = named.definition, c.function or named.function
        if c.definition is not None:
            c.failures = [with_whole_path(f, c.definition, files) for f in c.failures]


_DEFAULT_LIMIT = 8  # torch._dynamo.config.recompile_limit (cache_size_limit) when the record does not say


def _recompile_limit(metrics: dict) -> int | None:
    """The limit of a compilation Dynamo refused (review 18, F1): a TORCH_TRACE names it only in the metrics of the
    attempt, ``fail_type: RecompileLimitExceeded``; the text log's ``hit config.recompile_limit (8)`` warning goes
    to stderr, which `hlodiff record` does not keep. The attempt compiled nothing and the frame runs without Dynamo
    from then on. The number is the run's config when the record carries it."""
    if metrics.get("fail_type") != "RecompileLimitExceeded":
        return None
    try:
        config = json.loads(metrics.get("dynamo_config") or "{}")
        return int(config.get("recompile_limit") or config.get("cache_size_limit") or _DEFAULT_LIMIT)
    except (ValueError, TypeError, AttributeError):
        return _DEFAULT_LIMIT


def _call_site(stack: list[SourceFrame]) -> SourceFrame | None:
    """The user's call of the compiled function: the innermost user frame that hands over to torch's wrappers (the
    stack is outermost first: pytest or the script, the user's loop line, torch's wrappers, the compiled function
    last)."""
    for i in range(len(stack) - 2, -1, -1):
        if not stack[i].is_library and stack[i + 1].is_library:
            return stack[i]
    return None


def _compile_id(record: dict) -> str | None:
    if "frame_id" in record and "frame_compile_id" in record:
        return f"{record['frame_id']}/{record['frame_compile_id']}"
    return None


def _stack_frame(entry: dict, names: dict[int, str]) -> SourceFrame | None:
    try:
        file = names.get(int(entry["filename"]), str(entry["filename"]))
        return SourceFrame(file, int(entry["line"]), entry.get("name"))
    except (KeyError, TypeError, ValueError):
        return None
