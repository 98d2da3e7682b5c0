"""Why run B compiled what run A had compiled, across a persistent compilation cache.

Each compilation of B is paired with its counterpart in A (JAX: the same jitted function, n-th compilation with
n-th; torch_xla: the graph with the same hash, else the compiled graph at the same position), then given one
verdict from the evidence both runs left:

* ``hit``: B loaded it from the cache (JAX logged a persistent-cache hit; XLA dumped only the loaded program).
* ``miss_same_key``: the same HLO and the same key, yet compiled: the entry was never written or not usable. Why
  comes from the evidence: A's compile time under ``jax_persistent_cache_min_compile_time_secs``, its size
  under the entry-size threshold, host callbacks, no cache configured yet when it compiled, an entry missing from
  the cache folder, an entry found that torch_xla could not load.
* ``miss_key_differs``: the same HLO, another key: the exact option that differs between the dumped options.
* ``miss_hlo_differs``: another HLO: the usual graph diff (:func:`hlodiff.explain.recompile.explain_records`),
  its cause, the user's line and its fix.
* ``new``: A never compiled it (nothing to reuse); not a failure of the cache.

Facts only; :mod:`hlodiff.render.across_runs` says them in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.dumps.cached_run import Run, compiled_modules, nth_module
from hlodiff.dumps.compile_cache import CacheCompilation, CacheFolder
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.source_lines import NoSources, SourceLines
from hlodiff.explain.added_function_call import lead_with_new_function_calls
from hlodiff.explain.library_module_calls import place_library_module_calls
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.explain.across_runs_settings import place_settings
from hlodiff.explain.across_runs_torch import torch_verdicts
from hlodiff.explain.op_by_op import mark_op_by_op
from hlodiff.explain.per_program_options import set_for_this_program
from hlodiff.explain.program_lines import LOCATED_IN_PROGRAM, program_line
from hlodiff.explain.program_pairs import program_frame, same_program
from hlodiff.explain.program_differences import donation_difference
from hlodiff.explain.run_arguments import argument_order_differences
from hlodiff.explain.run_differences import KeyDifference, option_differences, version_differences
from hlodiff.explain.run_settings import relative_cache_folder
from hlodiff.explain.run_verdicts import (CANNOT_DESERIALIZE, Verdict, miss_hlo_differs,  # noqa: F401 (API)
                                          miss_key_differs, recorded_flag_differences)

VERDICTS = ("hit", "miss_same_key", "miss_key_differs", "miss_hlo_differs", "new")
REASONS = ("below_compile_time", "below_entry_size", "host_callbacks", "cache_disabled", "cache_configured_late",
           "no_cache", "other_cache_folder", "exceeds_cache_size", "write_failed", "read_failed", "entry_missing",
           "not_loadable", "renamed", "xla_flag", "compile_option", "version", "elided_constants", "metadata_in_key",
           "device_count", "jit_disabled", "eager_mode", "check_contents", "debug_metadata", "unknown")
"""Reasons of the two verdicts outside the graph (``miss_hlo_differs`` takes the diff's cause kind, or
``device_count`` when the two programs were built for another number of devices; ``jit_disabled`` /
``eager_mode`` mark run B's ``new`` programs when it ran run A's op by op)."""

NOT_WRITTEN_REASONS = {"compile_time": "below_compile_time", "entry_size": "below_entry_size",
                       "cache_size": "exceeds_cache_size", "write_error": "write_failed"}
"""Why JAX did not write run A's entry (:data:`hlodiff.dumps.compile_cache.NOT_WRITTEN`) -> the verdict's reason
(the others keep their name: ``host_callbacks``, ``cache_disabled``)."""


@dataclass(slots=True)
class AcrossRuns:
    run_a: Run
    run_b: Run
    verdicts: list[Verdict]
    warnings: list[InputWarning] = field(default_factory=list)

    @property
    def recompiled(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.recompiled]

    @property
    def exit_code(self) -> int:
        """1 when B compiled something A had compiled, else 0."""
        return 1 if self.recompiled else 0

    def groups(self) -> list[tuple[str, str | None, list[Verdict]]]:
        """B's recompilations by (verdict, reason), the reason explaining most of them first (then the most
        compile seconds, then the first seen)."""
        grouped: dict[tuple[str, str | None], list[Verdict]] = {}
        for v in self.recompiled:
            grouped.setdefault((v.verdict, v.reason), []).append(v)
        order = sorted(grouped.items(), key=lambda kv: (-len(kv[1]), -sum(v.seconds or 0.0 for v in kv[1])))
        return [(verdict, reason, vs) for (verdict, reason), vs in order]


# -- the comparison -------------------------------------------------------------------------------------------------

def compare_runs(run_a: Run, run_b: Run, warnings: list[InputWarning],
                 sources: SourceLines | None = None) -> AcrossRuns:
    """Every compilation of B with its verdict against A; ``sources``: the user's Python files, for the run setting
    behind a path one run traced (none read without them)."""
    if run_a.framework != run_b.framework:
        raise HlodiffError(f"run A is a {run_a.framework} run and run B a {run_b.framework} run", path=run_b.path)
    cache = run_a.cache or run_b.cache  # what B found: A's listing is the cache as A left it
    if run_a.framework == "jax":
        verdicts = _jax_verdicts(run_a, run_b, cache, warnings)
    else:
        verdicts = torch_verdicts(run_a, run_b, cache, warnings)
    mark_op_by_op(run_a, run_b, verdicts)
    for v in verdicts:
        if v.reason in LOCATED_IN_PROGRAM and (rec := v.b_record or v.a_record) is not None:
            v.program_line = program_line(rec, v.reason)
    place_settings(verdicts, sources if sources is not None else NoSources())
    place_library_module_calls(verdicts, sources if sources is not None else NoSources())
    lead_with_new_function_calls(verdicts)
    return AcrossRuns(run_a, run_b, verdicts, warnings)


def _jax_verdicts(run_a: Run, run_b: Run, cache: CacheFolder | None,
                  warnings: list[InputWarning]) -> list[Verdict]:
    compiled_a, compiled_b = compiled_modules(run_a), compiled_modules(run_b)
    seen_a = _by_name(run_a.jax_log.compilations)
    count: dict[str, int] = {}
    compiled_count_b: dict[str, int] = {}
    verdicts = []
    for c in run_b.jax_log.compilations:
        n = count.get(c.module_name, 0)
        count[c.module_name] = n + 1
        a = seen_a.get(c.module_name, [])
        a_c = _counterpart(a, n, c.trace)
        v = Verdict(c.module_name, "new", b=c, a=a_c, key_b=c.key, key_a=a_c.key if a_c else None)
        v.called_at = run_b.call_sites[c.ordinal] if c.ordinal < len(run_b.call_sites) else None
        if c.lookup != "hit":
            k = compiled_count_b.get(c.module_name, 0)
            compiled_count_b[c.module_name] = k + 1
            v.b_record = nth_module(compiled_b, c.module_name, k)
            v.seconds = c.compile_seconds
        if a_c is not None and a_c.lookup != "hit":
            k = sum(1 for x in a[:n] if x.lookup != "hit")
            v.a_record = nth_module(compiled_a, c.module_name, k)
        if cache is not None and c.key is not None:
            v.entry_in_cache = cache.has(c.key)
        if c.lookup == "hit":
            v.verdict = "hit"
        elif a_c is not None:
            _jax_miss(v, c, a_c, run_a, run_b, warnings)
        verdicts.append(v)
    _renamed(verdicts, run_a, compiled_a, {c.module_name for c in run_b.jax_log.compilations})
    return verdicts


def _renamed(verdicts: list[Verdict], run_a: Run, compiled_a: dict[str, list[GraphRecord]],
             names_b: set[str]) -> None:
    """A program of B that A never compiled under its name, yet A compiled it under a name B never used: the
    same program renamed (JAX names the module and the key after the jitted function and hashes the module's
    name), so B compiled what A had cached. A new program of B that is no program of A stays ``new``."""
    left = {name: recs[0] for name, recs in compiled_a.items() if name not in names_b and recs}
    if not left:
        return
    from hlodiff.graph import canonicalize

    prints = {name: canonicalize(rec.module()).fingerprint for name, rec in left.items()}
    for v in verdicts:
        if v.verdict != "new" or v.b_record is None:
            continue
        fingerprint = canonicalize(v.b_record.module()).fingerprint
        name = next((n for n, f in prints.items() if f == fingerprint), None)
        if name is None:
            continue
        del prints[name]  # one program of A stands for one of B
        v.verdict, v.reason, v.a_record = "miss_key_differs", "renamed", left[name]
        v.a = next((c for c in run_a.jax_log.compilations if c.module_name == name), None)
        v.key_a = v.a.key if isinstance(v.a, CacheCompilation) else None
        v.differences = [KeyDifference("module", "function name", name, v.program)]


def _jax_miss(v: Verdict, b: CacheCompilation, a: CacheCompilation, run_a: Run, run_b: Run,
              warnings: list[InputWarning]) -> None:
    same_hlo = same_program(v.a_record, v.b_record)
    if a.key_parts and b.key_parts:
        v.key_components = [name for name, value in b.key_parts.items() if a.key_parts.get(name) != value]
        if "computation" in v.key_components and same_hlo is None:
            same_hlo = False  # JAX hashed another computation: the HLO differs, whether or not it was dumped
    if b.lookup is None and same_hlo is not False:
        v.verdict = "miss_same_key"
        v.reason = "cache_configured_late" if run_b.jax_log.looked_up else "no_cache"
        if v.reason == "cache_configured_late" and v.called_at is None and v.b_record is not None:
            v.called_at = program_frame(v.b_record)  # an eager op: JAX names no call site, its HLO does
        return
    if b.key is not None and b.key == a.key:
        v.verdict = "miss_same_key"
        _never_written(v, a, b, run_a, run_b)
        return
    if same_hlo is False:
        miss_hlo_differs(v, warnings, jax=True)
        return
    if same_hlo and (order := argument_order_differences(v.a_record, v.b_record)):
        miss_hlo_differs(v, warnings, jax=True)  # the same computation over parameters numbered apart
        v.differences = order
        return
    if same_hlo and (donation := donation_difference(v.a_record, v.b_record)) is not None:
        v.verdict, v.reason, v.cause = "miss_hlo_differs", "aliasing", donation  # the header is the program too
        return
    if (a.key is None or b.key is None) and same_hlo is not False and not version_differences(
            run_a.versions, run_b.versions) and not option_differences(v.a_record, v.b_record,
                                                                        run_b.module_options) \
            and not recorded_flag_differences(run_a, run_b):
        v.verdict, v.reason = "miss_same_key", "unknown"  # no key known: the same program, nothing says why
        return
    miss_key_differs(v, run_a, run_b, a.key_flags, b.key_flags)
    if v.reason == "unknown" and not run_a.records and not run_b.records:
        v.detail = NO_DUMP
    elif v.reason == "xla_flag" and (others := set_for_this_program(v.differences[0], v.program, run_b.records,
                                                                     run_b.module_options)):
        v.detail = PER_PROGRAM + ", ".join(others)


def _never_written(v: Verdict, a: CacheCompilation, b: CacheCompilation, run_a: Run, run_b: Run) -> None:
    """The same key in both runs, compiled twice: why A's entry was not there for B (or not usable)."""
    if b.read_error is not None:  # found under the key, unreadable: whatever A did, the entry is there and broken
        v.reason, v.detail = "read_failed", b.read_error
    elif b.verify_error is not None:  # JAX said it recompiled the key to check the entry it had
        v.reason, v.detail = "check_contents", b.verify_error
    elif a.written and run_a.cache_dir and run_b.cache_dir and run_a.cache_dir != run_b.cache_dir:
        v.reason = "other_cache_folder"
        v.differences = [KeyDifference("cache_settings", "cache folder", run_a.cache_dir, run_b.cache_dir)]
    elif a.not_written is not None:
        v.reason = NOT_WRITTEN_REASONS.get(a.not_written, a.not_written)
        v.threshold, v.measured, v.detail = a.threshold, a.measured, a.error
    elif a.lookup is None:
        v.reason = "cache_configured_late"
    elif a.written and (folder := relative_cache_folder(*_options(run_a, v.a_record), *_options(run_b, v.b_record))):
        v.reason = "entry_missing"  # the same string, resolved against each run's working directory
        v.differences = [KeyDifference("cache_settings", RELATIVE_FOLDER, folder, folder)]
    elif a.written and v.entry_in_cache is False:
        v.reason = "entry_missing"
        v.cache_empty = _cache_empty(run_a, run_b)
    elif b.not_written is not None:  # A said nothing: B's own reason is the same threshold
        v.reason = NOT_WRITTEN_REASONS.get(b.not_written, b.not_written)
        v.threshold, v.measured, v.detail = b.threshold, b.measured, b.error
    elif v.entry_in_cache is False:
        v.reason = "entry_missing"
        v.cache_empty = _cache_empty(run_a, run_b)
    else:
        v.reason = "unknown"


PER_PROGRAM = "this program only; not in "
"""``Verdict.detail`` prefix of an ``xla_flag`` verdict whose option run B's other programs do not hold (then their
names): the option came from that function's ``compiler_options``
(:func:`hlodiff.explain.per_program_options.set_for_this_program`)."""

NO_DUMP = "no_dump"
"""``Verdict.detail`` of a key that differs between two runs captured without a dump (their JAX logs alone, as
users capture them): nothing to compare the programs or their options by, so the words say what the key covers
and what to capture, not that a program was loaded."""

RELATIVE_FOLDER = "relative cache folder"
"""The name of an ``entry_missing`` verdict's difference when the cache folder is a relative path
(:func:`hlodiff.explain.run_settings.relative_cache_folder`): run A wrote the entry under the key run B looked up,
in a folder B did not look in."""


def _options(run: Run, record: GraphRecord | None) -> list[dict[str, tuple[str, ...]] | None]:
    return [run.module_options(record)] if record is not None else []


def _cache_empty(run_a: Run, run_b: Run) -> bool:
    cache = run_a.cache or run_b.cache
    return cache is not None and not cache.entries




# -- evidence helpers -------------------------------------------------------------------------------------------------

def _counterpart(a: list[CacheCompilation], n: int, trace: int | None) -> CacheCompilation | None:
    """Run A's compilation of the same function that run B's n-th compilation of it stands for: the n-th, or when
    B's log tells which trace of the function it followed (a log without ``Compiling`` lines, where a program
    loaded from the cache leaves no line), A's compilation of that same trace (A's k-th when A's log counts no
    traces: each trace of a cold run compiles)."""
    if trace is None:
        return a[n] if n < len(a) else None
    if any(x.trace is not None for x in a):
        return next((x for x in a if x.trace == trace), None)
    return a[trace] if trace < len(a) else None


def _by_name(compilations: list[CacheCompilation]) -> dict[str, list[CacheCompilation]]:
    out: dict[str, list[CacheCompilation]] = {}
    for c in compilations:
        out.setdefault(c.module_name, []).append(c)
    return out


