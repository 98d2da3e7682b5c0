"""``compare-runs`` in words: the headline (the reason behind most of run B's recompilations, with what they cost),
the fix, then one line per compilation of B. The ``--json`` body is built here too: its ``summary``, ``reason``
and ``fix`` strings are these words, beside the typed facts of :mod:`hlodiff.explain.across_runs`.

``CACHE_FIXES`` is the knowledge table of fixes for the verdicts outside the graph (one row per reason, each
exercised by a real pair under ``fixtures/*/cache_*`` where one exists); a graph difference takes the fix of the
graph diff's cause (:mod:`hlodiff.diff.fix_rules`).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.across_runs import CANNOT_DESERIALIZE, AcrossRuns, Verdict
from hlodiff.explain.run_differences import jax_setting_of, same_folder_spelled_apart

CACHE_FIXES: dict[str, str] = {
    "below_compile_time": "write fast compilations too: jax.config.update('jax_persistent_cache_min_compile_time_secs'"
                          ", 0) (or JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0) in both runs, before the first "
                          "compilation",
    "below_entry_size": "write small entries too: jax.config.update('jax_persistent_cache_min_entry_size_bytes', -1) "
                        "in both runs",
    "exceeds_cache_size": "raise jax_compilation_cache_max_size above the entry's size ({measured} bytes; it is "
                          "{threshold} bytes for the whole cache), or set it to -1 (no limit), in both runs",
    "write_failed": "run A could not write the entry ({detail}): make the cache folder writable (permissions, free "
                    "space, not a read-only mount) for the run that fills it",
    "host_callbacks": "JAX never caches a program with host callbacks (jax.debug.print, breakpoint, io_callback): "
                      "leave them out of the jitted function in runs meant to reuse the cache",
    "cache_disabled": "the cache was disabled or failed to initialize when it compiled: check "
                      "jax_enable_compilation_cache and that the cache folder can be written",
    "cache_configured_late": "set jax_compilation_cache_dir before the first JAX operation (before the first array "
                             "or jit call), e.g. JAX_COMPILATION_CACHE_DIR in the environment",
    "no_cache": "configure the same persistent cache in run B as in run A (jax_compilation_cache_dir), and check "
                "that nothing switches it off there (jax_enable_compilation_cache / JAX_ENABLE_COMPILATION_CACHE=false"
                ": the same silence in the log)",
    "other_cache_folder": "point both runs at one cache folder (an absolute path: run A used {a}, run B {b})",
    "entry_missing": "point both runs at the same cache folder and check nothing evicts or cleans it between runs",
    "entry_missing_empty": "run A compiled it, yet the cache folder holds no entry at all after run A: nothing was "
                           "written there; check that run A could write to this folder and wrote to this one",
    "entry_missing_empty_torch_xla": "run A wrote nothing to the cache (no entry in the folder after run A, though "
                                     "it compiled): torch_xla writes only from a process that called "
                                     "xr.initialize_cache(path, readonly=False) (XLA_PERSISTENT_CACHE_READ_ONLY "
                                     "unset); give the run that should fill the cache readonly=False, and check the "
                                     "folder is writable",
    "same_folder_spelled_apart": "both runs use one cache folder, spelled two ways (run A: {a}, run B: {b}): JAX "
                                 "writes the folder's string into the compile options it hashes (XLA's autotune "
                                 "cache folder, xla_gpu_per_fusion_autotune_cache_dir), so each spelling is its own "
                                 "key; pass the same string in both runs (os.path.realpath of the folder), or set "
                                 "jax_persistent_cache_enable_xla_caches to 'none' to keep the folder out of the key",
    "jax_setting": "run {side} ran with {setting}: JAX writes it into the compile options it hashes ({name} is {b} in "
                   "run B, {a} in run A), so each value is its own cache entry; set it the same way in both runs "
                   "(look for it in the environment of run {side})",
    "not_loadable": "nothing to change in your code: this backend could not deserialize the cached executable, so "
                    "the persistent cache cannot save a compilation here (torch_xla's CPU client cannot; TPU and GPU "
                    "can)",
    "xla_flag": "run both with the same XLA_FLAGS: --{name} is {b} in run B and {a} in run A",
    "xla_debug_option": "set {name} the same way in both runs ({b} in run B, {a} in run A): it comes from XLA_FLAGS "
                        "(--{name}) or from jax.jit(..., compiler_options={{'{name}': ...}})",
    "device_count": "run A's program was built for {a} devices ({name}), run B's for {b}: each device count is its "
                    "own program and cache entry; expected when the runs had different machines, else run both on "
                    "the same number of devices (the mesh over jax.devices())",
    "device_topology": "set XLA_FLAGS' --{name} the same way in both runs ({b} in run B, {a} in run A): JAX leaves "
                       "this flag out of the key but hashes the devices' topology, so each device configuration is "
                       "its own cache entry",
    "xla_debug_option_torch_xla": "run both with the same XLA_FLAGS: {name} is {b} in run B and {a} in run A "
                                  "(--{name}); torch_xla's graph hash, its cache key, changes with it",
    "compile_option": "compile with the same options in both runs: {name} is {b} in run B and {a} in run A",
    "version": "a new {name} is a cold cache (its version is in the key): fill the cache once after upgrading, or "
               "pin {name} to one version for the runs that share it",
    "elided_constants": "dump with --xla_dump_hlo_as_proto to see the constants, and pass arrays as arguments "
                        "instead of closing over them",
    "unknown_key": "compare what else the key hashes (JAX and jaxlib versions, platform, devices); `hlodiff record` "
                   "notes the versions of each run",
    "unknown_key_torch_xla": "the same HLO under another graph hash, and the dumped options are the same: compare "
                             "what else the runs' environments set (torch_xla version, XLA_FLAGS, PJRT_DEVICE)",
    "unknown": "nothing captured says why; capture both runs with JAX_EXPLAIN_CACHE_MISSES=1 and keep the cache "
               "folder's listing",
    "unknown_torch_xla": "nothing captured says why; keep run B's stderr (torch_xla warns 'Failed to deserialize "
                         "executable') and its metrics_report() (PersistentCacheHit, PersistentCacheMiss, "
                         "PersistentCacheDeserializeFailure) beside its capture, and give the cache folder with "
                         "--cache",
}


GRAPH_FIXES: dict[str, str] = {
    "state_shape": "the step's state has other shapes ({name}: {a} in run A, {b} in run B: parameters the step "
                   "updates and returns, a model's weights or optimizer state): another model is another program "
                   "and cache entry, so this is expected after changing the model; build it with the same sizes in "
                   "both runs to reuse the cache",
    "input_shape": "an input's shape differs between the runs ({name}: {a} in run A, {b} in run B): each input shape "
                   "is its own program and cache entry, so this is expected when the runs feed other shapes; feed "
                   "the same shapes (batch size, sequence length) in both runs to reuse the cache",
    "lowering": "run A's program was lowered with {name} {a}, run B's with it {b}: the same call (jax.random's "
                "draws here) becomes another program, so each value is its own cache entry; set {name} the same "
                "way in both runs (its default changed in JAX 0.5.0: an upgrade, or a setting pinned on one host, "
                "does this)",
    "aliasing": "buffer donation differs between the runs ({summary}): donation is part of the compiled program, so "
                "each choice is its own cache entry; jit with the same donate_argnums in both runs (expected once "
                "after switching donation on or off)",
    "precision": "only run {side}'s program computes in {types} (mixed precision: torch.autocast, a model cast to "
                 "{types}, or a dtype setting), the other's in f32: each precision is its own program and cache "
                 "entry; run both with the same precision setting (autocast on in both runs, or off in both) to "
                 "reuse the cache",
    "x64": "only run {side}'s program uses 64-bit types ({types}); jax_enable_x64 (JAX_ENABLE_X64) was most likely "
           "on in run {side} and off in the other: set it the same way in both runs, or give these values an "
           "explicit dtype (.astype(jnp.int32)) so both runs trace one program",
}
"""Fixes of a graph difference between two runs that replace the graph diff's own (written for two steps of one
run: "pad to a few sizes", "one graph per bucket"), keyed by what differs: shapes of state, shapes of inputs,
64-bit types in one run only."""


LOCATED_AT_CALL = frozenset({"cache_configured_late"})
"""Reasons whose headline is located at the user's line that compiled the program (the operation run before the
cache was configured); reasons of :data:`hlodiff.explain.across_runs.LOCATED_IN_PROGRAM` take the line of the
instruction behind them; the others are settings (a threshold, a flag), not a line, or take their cause's line."""


def label(v: Verdict) -> str:
    """The program as the user knows it: JAX's module name, or a torch_xla graph by its sync line."""
    if v.program.startswith("jit") or v.called_at is None or v.b_record is None or v.b_record.kind == "xla_dump":
        return v.program[:24]
    return f"graph {v.program[:8]} (sync at {_short(v.called_at)})"


def reason_text(v: Verdict) -> str:
    """What happened to one compilation of B, from its evidence."""
    if v.verdict == "hit":
        return "loaded from the cache"
    if v.verdict == "new":
        return "compiled; run A never compiled it (nothing to reuse)"
    return f"compiled again: {why_text(v)}"


def why_text(v: Verdict) -> str:
    """Why a compilation of B did not come from the cache (the part after "compiled again")."""
    r = v.reason
    if v.verdict == "miss_hlo_differs":
        built = ""
        if r == "device_count" and v.differences:
            d = v.differences[0]
            built = f": built for {d.b} devices, run A's for {d.a} ({d.name})"
        if v.cause is None:
            return f"its HLO differs from run A's{built}"
        where = v.cause.locations[0] if v.cause.locations else None
        at = f" at {_short(where)}" if where is not None else ""
        return f"its HLO differs from run A's{built} ({v.cause.kind}{at}: {v.cause.summary})"
    if v.verdict == "miss_key_differs":
        if r in ("xla_flag", "compile_option") and v.differences:
            d = v.differences[0]
            what = {"XLA_FLAGS": "XLA flag --", "debug_options": "XLA option "}.get(d.source, "compile option ")
            more = f" (and {len(v.differences) - 1} more)" if len(v.differences) > 1 else ""
            inputs = f"; the key's inputs that differ: {', '.join(v.key_components)}" if v.key_components else ""
            return (f"the same HLO under another cache key: {what}{d.name} is {_value(d.b)} in run B, "
                    f"{_value(d.a)} in run A{more}{inputs}")
        if r == "other_cache_folder" and v.differences:
            d = v.differences[0]
            return (f"another cache key: run B's cache folder is {_value(d.b)}, run A's {_value(d.a)} (JAX writes the "
                    "folder into the compile options it hashes: xla_gpu_per_fusion_autotune_cache_dir)")
        if r == "device_count" and v.differences:
            d = v.differences[0]
            return (f"the same HLO under another cache key: run B ran on another device configuration ({d.name} is "
                    f"{_value(d.b)} in run B, {_value(d.a)} in run A; JAX hashes the devices' topology, not the flag)")
        if r == "version" and v.differences:
            d = v.differences[0]
            return f"the same HLO under another cache key: {d.name} is {_value(d.b)} in run B, {_value(d.a)} in run A"
        if r == "elided_constants":
            at = f", used at {_short(v.program_line)}" if v.program_line is not None else ""
            return ("another cache key; the HLO texts are the same but XLA's text dump elides large constants "
                    f"(constant({{...}}){at}), which may differ")
        if v.a_record is None or v.b_record is None:
            return ("another cache key; one of the two programs was loaded, not compiled, so its HLO was not dumped "
                    "before optimizations and only the keys can be compared")
        return ("the same HLO under another cache key; the dumped options are the same, so an input of the key "
                "not captured differs (JAX/jaxlib version, platform, devices)")
    same = "the same HLO and key"
    if r == "below_compile_time":
        return (f"{same}, never written: run A compiled it in {v.measured:.2f} s, under "
                f"jax_persistent_cache_min_compile_time_secs ({v.threshold:.2f} s)")
    if r == "below_entry_size":
        return (f"{same}, never written: its entry ({v.measured:.0f} bytes) is under "
                f"jax_persistent_cache_min_entry_size_bytes ({v.threshold:.0f} bytes)")
    if r == "exceeds_cache_size":
        return (f"{same}, never written: its entry ({v.measured:.0f} bytes) is larger than the whole cache "
                f"(jax_compilation_cache_max_size, {v.threshold:.0f} bytes); JAX warned and dropped it")
    if r == "write_failed":
        return f"{same}, never written: writing it failed ({v.detail})"
    if r == "host_callbacks":
        at = f" (at {_short(v.program_line)})" if v.program_line is not None else ""
        return f"{same}, never written: it uses host callbacks{at}"
    if r == "cache_disabled":
        return f"{same}, never written: the cache was disabled or not initialized"
    if r == "cache_configured_late":
        at = f" (called at {_short(v.called_at)})" if v.called_at is not None else ""
        return (f"no cache was configured yet when it compiled{at}, so none was looked at (later compilations of "
                "the run did use one)")
    if r == "no_cache":
        return "run B never looked at a persistent cache"
    if r == "other_cache_folder" and v.differences:
        d = v.differences[0]
        return f"{same}: run A wrote it to {d.a}, but run B's cache folder is {d.b}"
    if r == "entry_missing":
        return f"{same}: run A wrote it, but the cache run B read has no such entry"
    if r == "not_loadable" and v.detail in CANNOT_DESERIALIZE.values():  # known of the backend, not logged
        return f"{same}: its entry is in the cache folder, and this backend cannot load it: {v.detail}"
    if r == "not_loadable":
        why = f" ({v.detail})" if v.detail else ""
        return f"{same}: the entry run A wrote was found but could not be loaded{why}"
    if isinstance(v.b, CacheCompilation) and v.b.lookup == "unknown":
        same_program = "the same HLO and options" if v.a_record is not None and v.b_record is not None else \
            "compiled in run B"
        return (f"{same_program}; without the JAX logs nothing says whether run A wrote it (capture stderr "
                "with JAX_EXPLAIN_CACHE_MISSES=1)")
    if v.entry_in_cache:
        return (f"{same}: its entry is in the cache folder, yet run B compiled it (it could not load it, or did not "
                "look: its stderr and metrics say which)")
    return f"{same}: nothing captured says why run A's entry was not there"


def fix_text(v: Verdict) -> str | None:
    if v.verdict in ("hit", "new"):
        return None
    lowering = [d for d in v.differences if d.source == "lowering"]
    if v.verdict == "miss_hlo_differs" and lowering:
        return GRAPH_FIXES["lowering"].format(name=lowering[0].name, a=lowering[0].a, b=lowering[0].b)
    if v.verdict == "miss_hlo_differs" and v.reason == "aliasing" and v.cause is not None and v.cause.fix is None:
        said = (v.cause.summary.partition(": ")[2] or v.cause.summary).replace("on the right only", "in run B only")
        return GRAPH_FIXES["aliasing"].format(summary=said.replace("on the left only", "in run A only"))
    if v.verdict == "miss_hlo_differs" and v.reason == "shape" and v.differences:
        d = v.differences[0]
        more = f" and {len(v.differences) - 1} more" if len(v.differences) > 1 else ""
        return GRAPH_FIXES["state_shape" if v.state_shapes else "input_shape"].format(
            name=f"{d.name.lstrip('%')}{more}", a=d.a, b=d.b)
    if v.verdict == "miss_hlo_differs" and v.reason == "dtype" and v.differences:
        d = v.differences[0]
        side, types = ("B", d.b) if d.b else ("A", d.a)
        return GRAPH_FIXES["precision" if d.name == "16-bit floats" else "x64"].format(side=side, types=types)
    if v.verdict == "miss_hlo_differs" and v.reason != "device_count":
        return v.cause.fix if v.cause is not None else None
    reason = v.reason or "unknown"
    if v.verdict == "miss_key_differs" and reason == "unknown":
        reason = "unknown_key"
    d = v.differences[0] if v.differences else None
    if reason == "device_count" and v.verdict == "miss_key_differs":
        reason = "device_topology"  # the same program, another device set-up: not the device_count of two HLOs
    if reason == "xla_flag" and d is not None and d.source != "XLA_FLAGS":
        reason = "xla_debug_option"  # a dumped debug option: XLA_FLAGS and compiler_options= both land there
        if isinstance(v.b, CacheCompilation) and (setting := jax_setting_of(d)) is not None:
            return CACHE_FIXES["jax_setting"].format(setting=setting[0], side=setting[1], name=d.name,
                                                     a=_value(d.a), b=_value(d.b))
    if reason == "other_cache_folder" and d is not None and same_folder_spelled_apart(d.a, d.b):
        reason = "same_folder_spelled_apart"
    if reason == "entry_missing" and v.cache_empty:
        reason = "entry_missing_empty"
    if isinstance(v.b, GraphRecord) and v.b.kind != "xla_dump" and f"{reason}_torch_xla" in CACHE_FIXES:
        reason = f"{reason}_torch_xla"  # a torch_xla run: its own words where JAX's would mislead
    template = CACHE_FIXES.get(reason, CACHE_FIXES["unknown"])
    return template.format(name=d.name if d else "?", a=_value(d.a) if d else "?", b=_value(d.b) if d else "?",
                           measured=_number(v.measured), threshold=_number(v.threshold), detail=v.detail or "?")


def run_names(result: AcrossRuns) -> tuple[str, str]:
    """The two runs as the user named them (their folders' names; the paths given when both names are the same),
    not "run A" and "run B" (review F9: runD was called "run B")."""
    a, b = (str(r.path).rstrip("/\\") for r in (result.run_a, result.run_b))
    short = tuple(p.replace("\\", "/").rsplit("/", 1)[-1] or p for p in (a, b))
    return short if short[0] != short[1] else (a, b)


def summary_text(result: AcrossRuns) -> str:
    name_a, name_b = run_names(result)
    shared = [v for v in result.verdicts if v.verdict != "new"]
    again = result.recompiled
    new = len(result.verdicts) - len(shared)
    tail = f"; {new} program{'s' if new != 1 else ''} {name_a} never compiled" if new else ""
    if not again:
        hits = sum(1 for v in shared if v.verdict == "hit")
        return (f"{name_b} loaded all {hits} program{'s' if hits != 1 else ''} {name_a} had compiled from the "
                f"persistent cache{tail}")
    seconds = sum(v.seconds or 0.0 for v in again)
    cost = f" ({seconds:.2f} s of compilation)" if any(v.seconds is not None for v in again) else ""
    verdict, reason, group = result.groups()[0]
    what = (f"the {'one program' if len(shared) == 1 else f'{len(shared)} programs'} {name_a} had compiled"
            if len(again) == len(shared) else f"{len(again)} of the {len(shared)} programs {name_a} had compiled")
    lead = _group_text(verdict, reason, group, whole=len(group) == len(again))
    return f"{name_b} compiled again {what}{cost}; {lead}{tail}"


def _group_text(verdict: str, reason: str | None, group: list[Verdict], whole: bool = False) -> str:
    """One reason and the programs it explains (``whole``: all of B's recompilations, said without a count)."""
    n = len(group)
    names = ", ".join(label(v) for v in group[:3]) + (", ..." if n > 3 else "")
    why = why_text(group[0])
    measured = [v.measured for v in group if v.measured is not None]
    if reason == "below_compile_time" and len(measured) > 1:  # one threshold, each program's own time
        why = (f"the same HLO and key, never written: run A compiled each in {min(measured):.2f}-"
               f"{max(measured):.2f} s, under jax_persistent_cache_min_compile_time_secs "
               f"({group[0].threshold:.2f} s)")
    if whole:
        return f"{names}: {why}"
    cost = f", {_seconds(group):.2f} s" if _seconds(group) is not None else ""
    return f"{n} of them ({names}{cost}): {why}"


def render(console: Console, result: AcrossRuns) -> None:
    console.print(Text(summary_text(result), style="bold"), highlight=False)
    groups = result.groups()
    if groups:
        fix = fix_text(groups[0][2][0])
        if fix:
            console.print(Text(f"fix: {fix}", style="green"), highlight=False)
        for verdict, reason, group in groups[1:]:
            console.print(Text(f"  also: {_group_text(verdict, reason, group)}"), highlight=False)
    console.print()
    width = max((len(label(v)) for v in result.verdicts), default=8)
    for v in result.verdicts:
        line = Text(f"  {label(v):<{width}}  ")
        style = "green" if v.verdict == "hit" else ("" if v.verdict == "new" else "red")
        line.append(reason_text(v), style=style)
        if v.seconds is not None and v.verdict != "hit":
            line.append(f" [{v.seconds:.2f} s]", style="dim")
        console.print(line, highlight=False)
    for verdict, reason, group in groups[1:]:
        fix = fix_text(group[0])
        if fix:
            console.print(Text(f"fix ({label(group[0])}): {fix}", style="green"), highlight=False)


def document_body(result: AcrossRuns) -> dict:
    """The body of the ``compare-runs`` document (docs/json.md)."""
    groups = result.groups()
    headline = None
    if groups:
        verdict, reason, group = groups[0]
        first = group[0]
        where = first.cause.locations[0] if first.cause is not None and first.cause.locations else None
        if where is None and reason in LOCATED_AT_CALL:
            where = first.called_at
        if where is None:
            where = first.program_line  # a callback or a baked constant of the program (LOCATED_IN_PROGRAM)
        headline = {"verdict": verdict, "reason": reason, "count": len(group),
                    "compile_seconds": _seconds(group), "programs": [v.program for v in group],
                    "location": where.to_json() if where is not None else None, "fix": fix_text(first)}
    cache = result.run_a.cache or result.run_b.cache
    return {
        "run_a": result.run_a.path, "run_b": result.run_b.path, "framework": result.run_a.framework,
        "cache": None if cache is None else {"path": cache.path, "listing": cache.listing,
                                              "entries": len(cache.entries)},
        "summary": summary_text(result),
        "headline": headline,
        "recompiled": len(result.recompiled),
        "compile_seconds": _seconds(result.recompiled),
        "compilations": [_verdict_json(v) for v in result.verdicts],
    }


def _verdict_json(v: Verdict) -> dict:
    where = v.cause.locations[0] if v.cause is not None and v.cause.locations else None
    return {
        "program": v.program, "label": label(v), "verdict": v.verdict, "reason": v.reason,
        "called_at": v.called_at.to_json() if v.called_at is not None else None,
        "ref_a": v.a_record.ref if v.a_record is not None else None,
        "ref_b": v.b_record.ref if v.b_record is not None else None,
        "compile_seconds": v.seconds, "key_a": v.key_a, "key_b": v.key_b, "key_components": v.key_components,
        "entry_in_cache": v.entry_in_cache,
        "threshold": v.threshold, "measured": v.measured,
        "differences": [d.to_json() for d in v.differences],
        "cause": None if v.cause is None else {"kind": v.cause.kind, "summary": v.cause.summary,
                                               "location": where.to_json() if where is not None else None},
        "detail": v.detail, "text": reason_text(v), "fix": fix_text(v),
    }


def _seconds(group: list[Verdict]) -> float | None:
    known = [v.seconds for v in group if v.seconds is not None]
    return round(sum(known), 6) if known else None


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


def _value(value: str | None) -> str:
    return "not set" if value is None else value


def _short(frame) -> str:
    return f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}"
