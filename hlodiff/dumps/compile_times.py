"""Compile times, from the logs that record them.

Two forms are read, line by line (plain or gzip, any other lines ignored, so a whole training log can be given):

* JAX with ``jax_log_compiles`` (``JAX_LOG_COMPILES=1``): one line per compilation,
  ``Finished XLA compilation of jit(step) in 0.562624931 sec`` (with or without a logging prefix). These are
  per compilation, in the order JAX compiled, and XLA numbers its dumped modules in that same order.
* torch_xla's metrics report (``torch_xla.debug.metrics.metrics_report()``): the ``CompileTime`` metric's
  ``TotalSamples`` and ``Accumulator`` (``01s205ms346.890us``). torch_xla keeps only the total and percentiles,
  so this gives the run's compile time, not each graph's.
* ``compile_times.tsv`` written by ``hlodiff record`` (header ``compilation graph_hash seconds execution``,
  tab-separated): torch_xla's ``CompileTime`` sample of each compilation, by graph hash.

``PT_XLA_DEBUG_LEVEL`` logs carry graph sizes but no times; given one, the result is empty and says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps._io import text_lines
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import HlodiffError, InputWarning

_JAX_RE = re.compile(r"Finished XLA compilation of (.+?) in ([0-9.]+(?:[eE][-+]?\d+)?) sec\b")
_METRIC_RE = re.compile(r"^Metric: (\S+)\s*$")
_FIELD_RE = re.compile(r"^\s+(TotalSamples|Accumulator):\s*(.+?)\s*$")
_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ns|us|ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


@dataclass(frozen=True, slots=True)
class Compilation:
    """One compilation JAX logged: the function as JAX names it (``jit(step)``) and the seconds it took."""

    function: str
    seconds: float
    line: int


@dataclass(slots=True)
class CompileTimes:
    """What one or more logs say about compile times."""

    compilations: list[Compilation] = field(default_factory=list)
    total_seconds: float | None = None
    """The ``CompileTime`` accumulator of a torch_xla metrics report (the whole run)."""
    total_count: int | None = None
    by_hash: dict[str, float] = field(default_factory=dict)
    """torch_xla graph hash -> compile seconds (``compile_times.tsv``)."""
    sources: list[str] = field(default_factory=list)

    def seconds(self) -> float | None:
        """The run's compile seconds: torch_xla's total when given, else the sum of JAX's compilations."""
        if self.total_seconds is not None:
            return self.total_seconds
        if self.by_hash:
            return sum(self.by_hash.values())
        if self.compilations:
            return sum(c.seconds for c in self.compilations)
        return None


TSV_COLUMNS = ("compilation", "graph_hash", "seconds")


def _tsv_row(line: str, times: CompileTimes, path: str, lineno: int) -> None:
    """``0<TAB>17d3c2078efdbc452cc3e34ffec48296<TAB>0.123456<TAB>3``; an empty ``seconds`` is a sample torch_xla
    dropped (kept unknown)."""
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) < 3 or not fields[0].strip():
        return
    graph_hash, seconds = fields[1].strip(), fields[2].strip()
    if not graph_hash or not seconds:
        return
    try:
        times.by_hash[graph_hash] = times.by_hash.get(graph_hash, 0.0) + float(seconds)
    except ValueError:
        raise HlodiffError(f"compile seconds {seconds!r} is not a number", path=path, line=lineno) from None


def parse_duration(text: str) -> float | None:
    """torch_xla's ``01s205ms346.890us`` / ``124ms512.432us`` / ``02m03s...`` in seconds; None when not one."""
    compact = text.replace(" ", "")
    pieces = _DURATION_RE.findall(compact)
    if not pieces or "".join(n + u for n, u in pieces) != compact:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in pieces)


def read_compile_times(paths: list[str], warnings: list[InputWarning] | None = None) -> CompileTimes:
    """Read every log given; a log without any compile time adds a warning (it is still a valid input)."""
    times = CompileTimes()
    read: set[str] = set()
    for path in paths:
        real = os.path.realpath(os.fspath(path))
        if real in read:  # one log reached twice (given, and found beside the dump): its times count once
            continue
        read.add(real)
        before = (len(times.compilations), times.total_seconds, len(times.by_hash))
        debug_log = _read_one(os.fspath(path), times, warnings)
        times.sources.append(os.fspath(path))
        if (len(times.compilations), times.total_seconds, len(times.by_hash)) == before and warnings is not None:
            why = ("a PT_XLA_DEBUG log has graph sizes but no compile times; give torch_xla's metrics report "
                   "(CompileTime) or JAX's jax_log_compiles output" if debug_log else
                   "no compile times found (expected JAX's 'Finished XLA compilation of ... in X sec' lines or a "
                   "torch_xla metrics report with CompileTime)")
            warnings.append(InputWarning(why, path=os.fspath(path)))
    return times


def _read_one(path: str, times: CompileTimes, warnings: list[InputWarning] | None) -> bool:
    """Add what ``path`` holds to ``times``; return whether it looked like a PT_XLA_DEBUG log."""
    if not os.path.exists(path):
        raise HlodiffError("no such file", path=path)
    metric = None
    debug_log = False
    samples = None
    tsv = False
    for lineno, line in enumerate(text_lines(path, warnings), 1):
        if lineno == 1 and line.rstrip("\r\n").split("\t")[:3] == list(TSV_COLUMNS):
            tsv = True
            continue
        if tsv:
            try:
                _tsv_row(line, times, path, lineno)
            except HlodiffError as err:  # one damaged row costs its own sample (an unknown time), not the run
                if warnings is None:
                    raise
                warnings.append(InputWarning(f"{err.message}; row skipped", path, lineno))
            continue
        m = _JAX_RE.search(line)
        if m:
            times.compilations.append(Compilation(m.group(1), float(m.group(2)), lineno))
            continue
        m = _METRIC_RE.match(line)
        if m:
            metric = m.group(1)
            continue
        if line.startswith(("Compilation Analysis:", "Post Compilation Analysis:")):
            debug_log = True
        if metric != "CompileTime":
            continue
        m = _FIELD_RE.match(line)
        if m is None:
            continue
        if m.group(1) == "TotalSamples" and m.group(2).isdigit():
            samples = int(m.group(2))
        else:
            seconds = parse_duration(m.group(2))
            if seconds is None:
                raise HlodiffError(f"CompileTime accumulator {m.group(2)!r} is not a duration", path=path,
                                   line=lineno)
            times.total_seconds = (times.total_seconds or 0.0) + seconds
            times.total_count = (times.total_count or 0) + (samples or 0)
    return debug_log
def compile_seconds(records: list[GraphRecord], compiled: list[bool], times: CompileTimes,
                    warnings: list[InputWarning] | None = None) -> dict[int, float]:
    """Seconds per compiled graph (by position in ``records``). JAX logs one line per compilation, in order, and
    XLA numbers its dumped modules in that same order: they are paired by function name (``jit(step)`` is
    dumped as ``jit_step``), in order."""
    found: dict[int, float] = {}
    if times.by_hash:
        for position, (record, was_compiled) in enumerate(zip(records, compiled)):
            if was_compiled and record.graph_hash in times.by_hash:
                found[position] = round(times.by_hash[record.graph_hash], 6)
    if not times.compilations:
        return found
    queues: dict[str, list] = {}
    for c in times.compilations:
        queues.setdefault(_sanitize(c.function), []).append(c)
    unmatched = 0
    for position, (record, was_compiled) in enumerate(zip(records, compiled)):
        if record.kind != "xla_dump" or not was_compiled:
            continue
        queue = queues.get(_sanitize(record.module_name or ""))
        if queue:
            found[position] = round(queue.pop(0).seconds, 6)
        else:
            unmatched += 1
    if unmatched and warnings is not None:
        warnings.append(InputWarning(f"{unmatched} compiled module(s) have no 'Finished XLA compilation' line in "
                                     f"the log", path=times.sources[0] if times.sources else None))
    return found


def _sanitize(name: str) -> str:
    """JAX logs ``jit(<lambda>)``; XLA's dump file says ``jit__lambda`` (odd characters become ``_``, trailing
    ones dropped)."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name).rstrip("_")


LOG_NAMES = ("metrics.txt", "jax_log.txt", "jax.log", "compile_times.tsv")
"""Where the fixtures (and ``hlodiff record``) leave compile-time logs beside a dump."""


def logs_beside(paths: list[str]) -> list[str]:
    """Compile-time logs sitting beside the given dumps (save files, dump folders, ``PATH#N`` refs)."""
    found: list[str] = []
    seen: set[str] = set()
    for path in paths:
        base = re.sub(r"#-?\d+$", "", path) if not os.path.exists(path) else path
        # a folder (an XLA dump, a `record` folder) holds its logs; a file's logs sit beside it, and so do an
        # XLA dump folder's when it lies inside a run folder (run/xla_dump beside run/jax.log)
        folders = [base] if os.path.isdir(base) else []
        folders.append(os.path.dirname(os.path.normpath(base)))  # spelled as given: warnings name it so
        for folder in folders:
            for name in LOG_NAMES:
                candidate = os.path.join(folder, name)
                if os.path.isfile(candidate) and os.path.abspath(candidate) not in seen:
                    seen.add(os.path.abspath(candidate))
                    found.append(candidate)
    return found
