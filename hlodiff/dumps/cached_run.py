"""One run's capture as ``compare-runs`` reads it: its graphs, what its logs say about the persistent cache, the
cache folder as the run left it, and what a ``hlodiff record`` manifest noted (versions). Everything here is read
from disk; :mod:`hlodiff.explain.across_runs` compares two of them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlodiff.dumps.compile_cache import (CacheCompilation, CacheFolder, JaxCacheLog, TorchCacheFacts, cache_beside, cache_from_entries,
                                         read_cache_folder, read_jax_cache_log, read_torch_cache_facts,
                                         torch_side_files)
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.hlo.model import SourceFrame

from hlodiff.dumps.graph_record import LOADED_STAGE  # noqa: E402  (here since compare-runs came first)


@dataclass(slots=True)
class Run:
    """One run's capture: its graphs and what it says about the cache."""

    path: str
    framework: str
    records: list[GraphRecord]
    jax_log: JaxCacheLog | None = None
    call_sites: list[SourceFrame | None] = field(default_factory=list)
    """JAX: per compilation of the log (by ordinal), the user's line JAX named in its cache-miss message."""
    torch: TorchCacheFacts | None = None
    compiled_hashes: set[str] | None = None
    """torch_xla: the graph hashes its PT_XLA_DEBUG log says compiled (None without a log)."""
    cache: CacheFolder | None = None
    versions: dict[str, str] = field(default_factory=dict)
    cache_dir: str | None = None
    platform: str | None = None
    """The XLA backend that compiled the run's dumped modules (``cpu`` from ``*.cpu_after_optimizations.txt``), None
    when the capture does not say (a save-tensors file, a dump of loaded modules only)."""
    """The cache folder the run's environment named (a ``hlodiff record`` manifest's ``cache_settings``)."""
    """Framework versions a ``hlodiff record`` manifest noted (empty for a capture made by hand)."""
    xla_flags: list[str] | None = None
    """The run's own XLA_FLAGS as its ``hlodiff record`` manifest noted them (``cache_settings``: the user's
    environment, before hlodiff added its dump flags), the dump flags left out; None for a capture made by hand.
    JAX hashes XLA_FLAGS into every key, and some flags never reach the options XLA dumps (review 21, F1:
    ``--xla_cpu_use_thunk_runtime=false``): then this is the only evidence of the flag."""

    def module_options(self, record: GraphRecord) -> dict[str, tuple[str, ...]] | None:
        """The compile options XLA wrote beside one of the run's dumped modules, flattened (None without them):
        read when asked, for the modules compared only."""
        from hlodiff.dumps.module_options import module_options

        return module_options(record)


def read_run(path: str, cache: str | None, warnings: list[InputWarning]) -> Run:
    """A run folder (a JAX dump folder and its stderr, a torch_xla save file and its logs, a ``record`` folder)."""
    from hlodiff.dumps import iter_graphs
    from hlodiff.dumps.run_folder import discover

    if not os.path.exists(path):
        raise HlodiffError("no such run folder or dump", path=path)
    try:
        inputs = discover([path], None, None, None)
    except HlodiffError:
        if (inputs := jax_log_alone(path)) is None:
            raise
    warnings.extend(inputs.warnings)
    records: list[GraphRecord] = []
    found: list[InputWarning] = []
    for dump in inputs.paths:
        records.extend(iter_graphs(dump, found))
    # A program loaded from the cache is dumped after optimizations only: that is the evidence, not a problem.
    warnings.extend(w for w in found if not (w.path or "").endswith("." + LOADED_STAGE + ".txt"))
    if not records and not inputs.jax_logs:
        raise HlodiffError("no graph found in this run", path=path)
    torch_names = ("SyncTensorsGraph", "IrToHlo")
    framework = "jax" if not records or records[0].kind == "xla_dump" and not (
        records[0].module_name or "").startswith(torch_names) else "torch_xla"
    run = Run(path, framework, records, platform=dump_platform(records))
    if inputs.jax_logs:
        from hlodiff.dumps.jax_log import read_jax_log

        run.jax_log = read_jax_cache_log(inputs.jax_logs[0], warnings)
        compilations = read_jax_log(inputs.jax_logs[0]).compilations
        sites: dict[int, SourceFrame | None] = {
            c.ordinal: c.cache_miss.call_site if c.cache_miss is not None else None for c in compilations}
        if not compilations:  # JAX_EXPLAIN_CACHE_MISSES=1 alone: no Compiling line anchors the messages
            from hlodiff.dumps.log_call_sites import call_sites_from_misses

            sites = call_sites_from_misses(inputs.jax_logs[0], {c.ordinal: c.line for c in run.jax_log.compilations})
        run.call_sites = [sites.get(i) for i in range(len(run.jax_log.compilations))]
    elif framework == "jax":
        run.jax_log = dump_compilations(records)
        warnings.append(InputWarning("no JAX log here (stderr with JAX_LOG_COMPILES=1 JAX_EXPLAIN_CACHE_MISSES=1): "
                                     "hits and misses read from the dump alone, without the cache's keys or why an "
                                     "entry was not written", path=path))
    if framework == "torch_xla":
        from hlodiff.dumps.debug_log import read_compilations

        sides = sorted({f for p in [*inputs.paths, path] for f in torch_side_files(p)})  # and the folder given
        run.torch = read_torch_cache_facts(sides, warnings)
        if inputs.debug_logs:
            run.compiled_hashes = {e.graph_hash for d in inputs.debug_logs for e in read_compilations(d, warnings)
                                   if e.graph_hash}
    manifest = _manifest(path)
    if manifest is not None:
        run.versions = dict(manifest.versions)
        settings = manifest.cache_settings
        run.cache_dir = settings.get("JAX_COMPILATION_CACHE_DIR") or settings.get("XLA_PERSISTENT_CACHE_PATH")
        run.xla_flags = own_flags(settings.get("XLA_FLAGS", ""))
    where = cache or cache_beside(inputs.paths[0] if inputs.paths else path)
    if where is not None:
        run.cache = read_cache_folder(where, warnings)
    elif manifest is not None and manifest.cache_entries:
        run.cache = cache_from_entries(manifest.manifest_path, manifest.cache_entries)
    return run


def own_flags(value: str) -> list[str]:
    """``--a=1 --xla_dump_to=/x --b`` -> ``["--a=1", "--b"]``: the flags of an XLA_FLAGS value, without the dump's
    (JAX leaves ``xla_dump_*`` out of its key; hlodiff's own capture adds them)."""
    return [f for f in value.split() if f.startswith("-") and not f.lstrip("-").startswith("xla_dump")]


def jax_log_alone(path: str):
    """A run folder holding a JAX log and no dump (captured as users do without hlodiff: JAX_EXPLAIN_CACHE_MISSES=1
    and the cache folder): its log alone is read, the programs named by their cache lines (None: no JAX log)."""
    from hlodiff.dumps.run_folder import side_files_in

    if not os.path.isdir(path):
        return None
    inputs = side_files_in(path)
    return inputs if inputs.jax_logs else None


_BACKEND_DUMP = re.compile(r"^module_\d+\..+\.([a-z]+)_after_optimizations\.txt$")


def dump_platform(records: list[GraphRecord]) -> str | None:
    """The backend XLA names in the file of each compiled module's optimized HLO (``module_0000.X.cpu_after_
    optimizations.txt``; a module loaded from a cache has a bare ``after_optimizations.txt``), when the dump
    folders of ``records`` (a dump read alone, or joined with torch_xla's debug log) hold one backend only."""
    found: set[str] = set()
    for folder in sorted({os.path.dirname(r.path) for r in records if r.path.endswith("optimizations.txt")}):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found.update(m.group(1) for n in names if (m := _BACKEND_DUMP.match(n)) is not None)
    return found.pop() if len(found) == 1 else None


def _manifest(path: str):
    """The ``hlodiff record`` manifest of a run folder (or of the folder holding the dump), if any."""
    from hlodiff.dumps.manifest import MANIFEST_NAME, read_manifest

    folder = path if os.path.isdir(path) else os.path.dirname(path)
    for where in (folder, os.path.dirname(os.path.normpath(folder))):
        if os.path.isfile(os.path.join(where, MANIFEST_NAME)):
            return read_manifest(where)
    return None


def dump_compilations(records: list[GraphRecord]) -> JaxCacheLog:
    """A JAX run captured without its log: one compilation per dumped module, in module order; a module XLA
    dumped only after optimizations was loaded from the cache (``lookup == "hit"``), the others compiled with
    nothing known of the cache (``lookup == "unknown"``)."""
    log = JaxCacheLog("", from_dump=True)
    for record in records:
        if record.kind == "xla_dump" and record.module_name:
            name = record.module_name.rstrip("_")
            log.compilations.append(CacheCompilation(name, name, len(log.compilations), 0,
                                                     lookup="hit" if record.stage == LOADED_STAGE else "unknown"))
    return log


def compiled_modules(run: Run) -> dict[str, list[GraphRecord]]:
    """Dumped modules XLA compiled (not the ones JAX loaded from the cache), by module name, in order."""
    out: dict[str, list[GraphRecord]] = {}
    for r in run.records:
        if r.kind == "xla_dump" and r.stage != LOADED_STAGE and r.module_name:
            out.setdefault(r.module_name.rstrip("_"), []).append(r)
    return out


def nth_module(modules: dict[str, list[GraphRecord]], name: str, n: int) -> GraphRecord | None:
    found = modules.get(name.rstrip("_"), [])
    return found[n] if n < len(found) else None
