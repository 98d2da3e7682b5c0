"""What a run says about its persistent compilation cache: JAX's cache log lines, a cache folder (or its listing),
torch_xla's cache counters and warnings.

Why a second run compiled what the first had cached is decided by evidence spread over these files, so this
module reads each into typed facts and leaves the verdict to :mod:`hlodiff.explain.across_runs`.

**JAX** (0.10.2, ``jax/_src/compiler.py`` and ``compilation_cache.py``). With ``JAX_LOG_COMPILES=1`` and
``JAX_EXPLAIN_CACHE_MISSES=1`` each compilation logs, between its ``Compiling jit(f) ...`` line and its
``Finished XLA compilation of jit(f) in S sec`` line (printed for a load from the cache too)::

    Persistent compilation cache hit for 'jit_f' with key 'jit_f-<sha256>'
    PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key 'jit_f-<sha256>'
    Not writing persistent cache entry for 'jit_f' because it took < 1.00 seconds to compile (0.07s)
    Not writing persistent cache entry with key 'jit_f-...' since its size (N bytes) is less than threshold (M bytes)
    Not writing persistent cache entry for 'jit_f' because it uses host callbacks (...)
    Not writing persistent cache entry with key 'jit_f-...' since cache is disabled/not initialized
    Writing jit_f to persistent compilation cache with key 'jit_f-<sha256>'

and, before the miss of an entry it found but could not read (a truncated or corrupt file; JAX warns, compiles,
and does not replace the file)::

    UserWarning: Error reading persistent compilation cache entry for 'jit_f': <error>

and, with ``jax_compilation_cache_check_contents`` on (each key recompiled once per process to verify the cache),
after the "Writing" line of a key whose fresh executable differs from the stored one::

    jax._src.compilation_cache.CacheVerificationError: Persistent compilation cache inconsistency for key jit_f-...

A compilation with none of them never looked at a cache: none was configured when it compiled (JAX decides at
each compilation; ``jax_compilation_cache_dir`` set after the first array leaves the earlier programs uncached).

**Cache folder.** JAX names an entry ``<key>-cache`` (plus ``<key>-atime`` when eviction is on); torch_xla names
it by the graph hash written in decimal (``Graph Hash: 1979...`` in hex in the save file). A folder, or a text
listing of one (any line whose last word is an entry name, e.g. ``ls -l``, or ``SIZE NAME`` lines as
``find DIR -type f -printf '%s %f\\n'`` prints them), is read as a set of entry names.

**torch_xla** (2.9): ``metrics_report()`` counters ``PersistentCacheHit``, ``PersistentCacheMiss``,
``PersistentCacheDeserializeFailure``; stderr ``Failed to deserialize executable: <why>`` (the CPU client cannot).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps._io import found_text_files, names_in, text_lines
from hlodiff.dumps.printed_counters import printed_counters
from hlodiff.errors import HlodiffError, InputWarning

_COMPILING_RE = re.compile(r"Compiling (\S+) with global shapes and types")
_FINISHED_RE = re.compile(r"Finished XLA compilation of (\S+) in ([0-9.]+(?:[eE][-+]?\d+)?) sec\b")
_HIT_RE = re.compile(r"Persistent compilation cache hit for '([^']+)' with key '([^']+)'")
_MISS_RE = re.compile(r"PERSISTENT COMPILATION CACHE MISS for '([^']+)' with key '([^']+)'")
_WRITE_RE = re.compile(r"Writing (\S+) to persistent compilation cache with key '([^']+)'")
_SLOW_RE = re.compile(r"Not writing persistent cache entry for '([^']+)' because it took < ([0-9.]+) seconds to "
                      r"compile \(([0-9.]+)s\)")
_SIZE_RE = re.compile(r"Not writing persistent cache entry with key '([^']+)' since its size \((\d+) bytes\) is "
                      r"less than threshold \((\d+) bytes\)")
_CALLBACK_RE = re.compile(r"Not writing persistent cache entry for '([^']+)' because it uses host callbacks")
_DISABLED_RE = re.compile(r"Not writing persistent cache entry with key '([^']+)' since cache is disabled")
_TOO_LARGE_RE = re.compile(r"Cache value for key '([^']+)' of size (\d+) bytes exceeds the maximum cache size of "
                           r"(\d+) bytes")
_WRITE_ERROR_RE = re.compile(r"Error writing persistent compilation cache entry for '([^']+)': (.*?)\s*$")
_READ_ERROR_RE = re.compile(r"Error reading persistent compilation cache entry for '([^']+)': (.*?)\s*$")
_NEVER_SEEN_RE = re.compile(r"^\s+(\S+) id=\d+ defined at ")
"""The function a "TRACING CACHE MISS ... never seen function:" block names (JAX_EXPLAIN_CACHE_MISSES=1)."""
_TRACED_AGAIN_RE = re.compile(r"^\s+for (\S+) defined at ")
"""The function a "TRACING CACHE MISS" block names when the process had traced it before ("for f defined at ...",
then why: "different input types", ...): another trace of one function, so another program of it."""
_VERIFY_RE = re.compile(r"Persistent compilation cache inconsistency for key '?(\S+?-[0-9a-f]{64})")
"""JAX's ``CacheVerificationError`` (``jax_compilation_cache_check_contents`` on): the fresh executable of a key
differs from the entry on disk; JAX recompiled that key on purpose, to check the cache."""
_KEY_PART_RE = re.compile(r"get_cache_key hash of serialized (.+?): ([0-9a-f]{64})\s*$")
_KEY_FLAG_RE = re.compile(r"(?<!Not )Including XLA flag in cache key: (\S+)\s*$")
_DESERIALIZE_RE = re.compile(r"Failed to deserialize executable: (.*?)\s*$")
_COUNTER_RE = re.compile(r"^Counter: (\S+)\s*$")
_VALUE_RE = re.compile(r"^\s+Value: (\d+)\s*$")
_JAX_ENTRY_RE = re.compile(r"^(.+-[0-9a-f]{64})-(cache|atime)$")
_TORCH_ENTRY_RE = re.compile(r"^\d{20,}$")
_LS_LONG_RE = re.compile(r"^[-dlbcps][-rwxsStT]{9}[.+@]?$")

NOT_WRITTEN = ("compile_time", "entry_size", "host_callbacks", "cache_disabled", "cache_size", "write_error")
"""Why JAX did not write an entry (``CacheCompilation.not_written``): the last two after its "Writing ..." line,
from the warnings JAX's cache raised (an entry larger than ``jax_compilation_cache_max_size``, an error of the
file system)."""


@dataclass(slots=True)
class CacheCompilation:
    """One ``Compiling jit(f)`` of a JAX log and what the persistent cache did for it.

    ``lookup`` is ``hit``, ``miss``, None (no cache was looked at) or ``unknown`` (read from a dump without the
    log: compiled, nothing known of the cache); ``written`` True / False / None (not said);
    ``not_written`` one of :data:`NOT_WRITTEN`; ``compile_seconds`` JAX's ``Finished XLA compilation`` time (a
    load from the cache when ``lookup == "hit"``); ``threshold`` and ``measured`` the two numbers of the
    compile-time or entry-size message. ``ordinal`` counts compilations of the log from 0, ``line`` is the
    ``Compiling`` line (1-based).
    """

    function: str
    module_name: str
    ordinal: int
    line: int
    key: str | None = None
    lookup: str | None = None
    written: bool | None = None
    not_written: str | None = None
    threshold: float | None = None
    measured: float | None = None
    compile_seconds: float | None = None
    error: str | None = None
    """``not_written == "write_error"``: the error JAX warned of (``PermissionError: ...``)."""
    read_error: str | None = None
    """The error JAX warned of when it found this compilation's entry and could not read it (``error: Error -5
    while decompressing data: incomplete or truncated stream``)."""
    cache_line: int | None = None
    """The line of the hit or miss message."""
    key_parts: dict[str, str] = field(default_factory=dict)
    """With JAX's cache-key debug log (``JAX_DEBUG_LOG_MODULES=jax._src.cache_key``): the hash of each input of
    the key (``computation``, ``jax_lib version``, ``XLA flags``, ``compile_options``, ``accelerator_config``...)."""
    key_flags: list[str] = field(default_factory=list)
    """With that log: the XLA flags JAX hashed into the key (``--xla_cpu_enable_fast_math=true``)."""
    verify_error: str | None = None
    """JAX's ``CacheVerificationError`` for this key: the run verified the cache
    (``jax_compilation_cache_check_contents``), so it recompiled an entry it had, and the two executables differ."""
    trace: int | None = None
    """In a log without ``Compiling`` lines: which trace of its function this compilation followed (0 for the
    first), counted from the tracing cache's explanations. A program the run loaded leaves no line there, so the
    n-th compilation read is not the n-th program asked for; the trace is (a function traced again for new input
    types is another program, whatever happened to the earlier ones)."""


@dataclass(slots=True)
class JaxCacheLog:
    path: str
    compilations: list[CacheCompilation] = field(default_factory=list)
    from_dump: bool = False
    """Made from a dump folder for a run captured without its log (:func:`hlodiff.dumps.cached_run.dump_compilations`)."""
    without_compiles: bool = False
    """The log names no ``Compiling`` line (JAX_EXPLAIN_CACHE_MISSES=1 without JAX_LOG_COMPILES, as users set it):
    its compilations are opened by their cache lines, and a hit is not logged at all (JAX logs it at DEBUG unless
    JAX_LOG_COMPILES is on), so a program it loaded leaves no line."""
    traced: list[str] = field(default_factory=list)
    """The functions the tracing cache says were traced for the first time ("never seen function: f id=..."), in
    order: what such a log knows of the programs a run asked for."""

    @property
    def looked_up(self) -> bool:
        """Whether any compilation of the run looked at a persistent cache."""
        return any(c.lookup in ("hit", "miss") for c in self.compilations)


def read_jax_cache_log(path: str, warnings: list[InputWarning] | None = None) -> JaxCacheLog:
    """Every compilation of a JAX log with its persistent-cache events (streamed; other lines are skipped)."""
    from hlodiff.dumps.jax_log import module_name

    log = JaxCacheLog(path)
    open_by_name: dict[str, CacheCompilation] = {}
    by_key: dict[str, CacheCompilation] = {}
    last_by_name: dict[str, CacheCompilation] = {}  # a warning may come after "Finished XLA compilation"
    log.without_compiles = True  # until a Compiling line is read
    traces: dict[str, int] = {}  # module name -> how often the tracing cache explained a trace of its function
    for lineno, raw in enumerate(text_lines(path, warnings), 1):
        text = raw.rstrip("\r\n")
        if (m := _COMPILING_RE.search(text)) is not None:
            log.without_compiles = False
            c = CacheCompilation(m.group(1), module_name(m.group(1)), len(log.compilations), lineno)
            log.compilations.append(c)
            open_by_name[c.module_name] = last_by_name[c.module_name] = c
            continue
        if (m := _FINISHED_RE.search(text)) is not None:
            c = open_by_name.pop(module_name(m.group(1)), None)
            if c is not None:
                c.compile_seconds = float(m.group(2))
            continue
        if "get_cache_key" in text or "in cache key" in text:
            _key_debug(text, log.compilations[-1] if log.compilations else None, open_by_name)
            continue
        if "Cache value for key" in text and (m := _TOO_LARGE_RE.search(text)) is not None and (
                c := by_key.get(m.group(1))) is not None:
            c.written, c.not_written = False, "cache_size"  # warned after "Writing ...": nothing was written
            c.measured, c.threshold = float(m.group(2)), float(m.group(3))
            continue
        if "Error writing" in text and (m := _WRITE_ERROR_RE.search(text)) is not None and (
                c := last_by_name.get(m.group(1))) is not None:
            c.written, c.not_written, c.error = False, "write_error", m.group(2)
            continue
        if "cache inconsistency" in text and (m := _VERIFY_RE.search(text)) is not None and (
                c := by_key.get(m.group(1))) is not None:
            c.verify_error = text.strip()
            continue
        if "Error reading" in text and (m := _READ_ERROR_RE.search(text)) is not None and (
                c := open_by_name.get(m.group(1))) is not None:
            c.read_error = m.group(2)  # warned between "Compiling" and the miss it causes
            continue
        if log.without_compiles and (m := _NEVER_SEEN_RE.search(text)) is not None:
            log.traced.append(m.group(1))
            _count_trace(traces, m.group(1))
            continue
        if log.without_compiles and (m := _TRACED_AGAIN_RE.search(text)) is not None:
            _count_trace(traces, m.group(1))
            continue
        if "ersistent" not in text and "PERSISTENT" not in text:
            continue
        for rx, lookup in ((_HIT_RE, "hit"), (_MISS_RE, "miss")):
            if (m := rx.search(text)) is not None and log.without_compiles:
                c = _opened_by_cache_line(log, m.group(1), lineno)
                c.trace = traces[m.group(1)] - 1 if m.group(1) in traces else None
                open_by_name[c.module_name] = last_by_name[c.module_name] = c
            if (m := rx.search(text)) is not None and (c := open_by_name.get(m.group(1))) is not None:
                c.lookup, c.key, c.cache_line = lookup, m.group(2), lineno
                by_key[c.key] = c
        if (m := _WRITE_RE.search(text)) is not None and (c := open_by_name.get(m.group(1))) is not None:
            c.written = True
        elif (m := _SLOW_RE.search(text)) is not None and (c := open_by_name.get(m.group(1))) is not None:
            c.written, c.not_written = False, "compile_time"
            c.threshold, c.measured = float(m.group(2)), float(m.group(3))
        elif (m := _SIZE_RE.search(text)) is not None and (c := by_key.get(m.group(1))) is not None:
            c.written, c.not_written = False, "entry_size"
            c.measured, c.threshold = float(m.group(2)), float(m.group(3))
        elif (m := _CALLBACK_RE.search(text)) is not None and (c := open_by_name.get(m.group(1))) is not None:
            c.written, c.not_written = False, "host_callbacks"
        elif (m := _DISABLED_RE.search(text)) is not None and (c := by_key.get(m.group(1))) is not None:
            c.written, c.not_written = False, "cache_disabled"
    if not log.without_compiles:
        log.traced.clear()  # read before the first Compiling line: the compilations say it, not the traces
    return log


def _count_trace(traces: dict[str, int], function: str) -> None:
    from hlodiff.dumps.jax_log import module_name

    name = module_name(f"jit({function})")
    traces[name] = traces.get(name, 0) + 1


def _opened_by_cache_line(log: JaxCacheLog, module: str, lineno: int) -> CacheCompilation:
    """A compilation of a log without ``Compiling`` lines, opened by its hit or miss line (the module's name, as
    JAX's cache names it: ``jit_train_step``)."""
    c = CacheCompilation(module, module, len(log.compilations), lineno)
    log.compilations.append(c)
    return c


def _key_debug(text: str, last: CacheCompilation | None, still_open: dict[str, CacheCompilation]) -> None:
    """A cache-key debug line belongs to the compilation computing its key: the last one opened, still open."""
    if last is None or still_open.get(last.module_name) is not last:
        return
    if (m := _KEY_PART_RE.search(text)) is not None:
        last.key_parts.setdefault(m.group(1), m.group(2))  # JAX's debug handler may print each line twice
    elif (m := _KEY_FLAG_RE.search(text)) is not None and m.group(1) not in last.key_flags:
        last.key_flags.append(m.group(1))


# -- the cache folder -----------------------------------------------------------------------------------------------

@dataclass(slots=True)
class CacheFolder:
    """The entries of a persistent cache folder: JAX keys (``jit_f-<sha256>``) and torch_xla graph hashes (hex, as
    the save file prints them), each with its size in bytes when known."""

    path: str
    entries: dict[str, int | None] = field(default_factory=dict)
    listing: bool = False
    """Read from a text listing rather than the folder itself."""

    def has(self, key: str | None) -> bool:
        return key is not None and key in self.entries


def read_cache_folder(path: str, warnings: list[InputWarning] | None = None) -> CacheFolder:
    """A cache folder or a text listing of one; a one-line error when it is neither."""
    if os.path.isdir(path):
        folder = CacheFolder(path)
        for name in names_in(path):
            size = None
            try:
                size = os.path.getsize(os.path.join(path, name))
            except OSError:
                pass
            _add_entry(folder, name, size)
        return folder
    if not os.path.isfile(path):
        raise HlodiffError("no such cache folder or listing", path=path)
    folder = CacheFolder(path, listing=True)
    if os.path.getsize(path) == 0:  # the listing of an empty cache: a run that wrote nothing
        return folder
    lines = 0
    for lineno, raw in enumerate(text_lines(path, warnings), 1):
        words = raw.split()
        if not words:
            continue
        lines += 1
        name = os.path.basename(words[-1])
        if _LS_LONG_RE.match(words[0]) and len(words) >= 9:  # ls -l: mode, links, owner, group, SIZE, date...
            size = int(words[4]) if words[4].isdigit() else None
        else:  # SIZE NAME (find -printf, du -b)
            size = int(words[0]) if len(words) > 1 and words[0].isdigit() else None
        _add_entry(folder, name, size)
    if lines and not folder.entries:
        raise HlodiffError("not a compilation cache listing: no line ends with a JAX entry name (jit_f-<sha256>-cache) "
                           "or a torch_xla one (a decimal graph hash)", path=path, line=1)
    return folder


def cache_from_entries(path: str, entries: dict[str, int]) -> CacheFolder:
    """The cache as a ``hlodiff record`` manifest noted it after the run (``cache_entries``)."""
    folder = CacheFolder(path, listing=True)
    for name, size in sorted(entries.items()):
        _add_entry(folder, name, size)
    return folder


def _add_entry(folder: CacheFolder, name: str, size: int | None) -> None:
    if (m := _JAX_ENTRY_RE.match(name)) is not None:
        if m.group(2) == "cache" or m.group(1) not in folder.entries:
            folder.entries[m.group(1)] = size if m.group(2) == "cache" else folder.entries.get(m.group(1))
    elif _TORCH_ENTRY_RE.match(name):
        folder.entries[format(int(name), "x")] = size


CACHE_NAMES = ("cache_listing.txt", "jax_cache", "compilation_cache", "xla_cache", "cache")
"""Where a run's cache is looked for beside it when not given (the first that exists)."""


def cache_beside(run: str) -> str | None:
    """The cache folder or listing found in a run folder or beside it (in its parent)."""
    folder = run if os.path.isdir(run) else os.path.dirname(run)
    for where in (folder, os.path.dirname(os.path.normpath(folder))):
        for name in CACHE_NAMES:
            candidate = os.path.join(where, name)
            if os.path.exists(candidate) and (name.endswith(".txt") or os.path.isdir(candidate)):
                return candidate
    return None


# -- torch_xla --------------------------------------------------------------------------------------------------

@dataclass(slots=True)
class TorchCacheFacts:
    """What a torch_xla run's metrics report and stderr say about the persistent cache."""

    counters: dict[str, int] = field(default_factory=dict)
    deserialize_failures: list[tuple[str, int, str]] = field(default_factory=list)
    """(file, line, torch_xla's reason) of each ``Failed to deserialize executable`` warning."""
    sources: list[str] = field(default_factory=list)
    printed: dict[str, int] = field(default_factory=dict)
    """Counter values the program printed itself (:mod:`hlodiff.dumps.printed_counters`; a printed None is 0)."""

    def counter(self, name: str) -> int | None:
        return self.counters.get(name)


TORCH_COUNTERS = ("PersistentCacheHit", "PersistentCacheMiss", "PersistentCacheDeserializeFailure",
                  "UncachedCompile", "CachedCompile")


def read_torch_cache_facts(paths: list[str], warnings: list[InputWarning] | None = None) -> TorchCacheFacts:
    """The cache counters of metrics reports (and of the program's own prints of ``counter_value``) and the
    deserialize warnings of logs among ``paths``."""
    facts = TorchCacheFacts()
    for path in paths:
        counter = None
        used = False
        for lineno, raw in enumerate(text_lines(path, warnings), 1):
            if (m := _COUNTER_RE.match(raw)) is not None:
                counter = m.group(1)
                continue
            if counter in TORCH_COUNTERS and (m := _VALUE_RE.match(raw)) is not None:
                facts.counters[counter] = facts.counters.get(counter, 0) + int(m.group(1))
                used = True
                counter = None
                continue
            if (m := _DESERIALIZE_RE.search(raw)) is not None:
                facts.deserialize_failures.append((path, lineno, m.group(1)))
                used = True
            for name, value in printed_counters(raw, TORCH_COUNTERS).items():
                facts.printed[name] = max(facts.printed.get(name, 0), value)  # counters only grow: the largest print is the run
                used = True
        if used:
            facts.sources.append(path)
    for name, value in facts.printed.items():  # a metrics report counts the same events: never both added
        facts.counters[name] = max(facts.counters.get(name, 0), value)
    return facts


def torch_side_files(run: str) -> list[str]:
    """Text files in a torch_xla run folder that may hold the metrics report or C++ warnings."""
    folder = run if os.path.isdir(run) else os.path.dirname(run) or "."
    names = [os.path.join(folder, n) for n in names_in(folder)
             if re.search(r"\.(log|txt|out|err)$", n) and os.path.isfile(os.path.join(folder, n))
             and not n.startswith(("graphs.hlo", "tensors_report", "cache_listing"))]
    return found_text_files(names, None)  # any *.log beside the run: an empty or binary one is none of ours
