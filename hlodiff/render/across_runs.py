"""``compare-runs`` in words: the headline (the reason behind most of run B's recompilations, with what they cost),
the fix, then one line per compilation of B. The ``--json`` body is built here too: its ``summary``, ``reason``
and ``fix`` strings are these words, beside the typed facts of :mod:`hlodiff.explain.across_runs`.

The fixes are rows of :mod:`hlodiff.render.across_runs_fixes` (``CACHE_FIXES`` for the verdicts outside the graph,
``GRAPH_FIXES`` for a graph difference said for two runs); any other graph difference takes the fix of the graph
diff's cause (:mod:`hlodiff.diff.fix_rules`).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.across_runs import CANNOT_DESERIALIZE, AcrossRuns, Verdict
from hlodiff.explain.run_differences import (PRECISION_ATTRIBUTE, SAME_KEY_PROGRAM, jax_setting_of,
                                             same_folder_spelled_apart)
from hlodiff.render.across_runs_fixes import CACHE_FIXES, GRAPH_FIXES  # noqa: F401 (API: the tables' old home)

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
    """Why a compilation of B did not come from the cache (the part after "compiled again"): the graph diff's
    cause, else the row of its verdict's table for its reason (a row that finds its evidence missing gives None,
    and the verdict's words for a reason nothing explains stand instead)."""
    if v.verdict == "miss_hlo_differs":
        return _hlo_differs_words(v)
    if v.verdict == "miss_key_differs":
        row = KEY_DIFFERS_WORDS.get(v.reason or "unknown", _key_not_captured)
        return row(v) or _key_not_captured(v)
    same = "the same key" if _other(v) else "the same HLO and key"
    row = SAME_KEY_WORDS.get(v.reason or "unknown", _same_key_unexplained)
    return row(v, same) or _same_key_unexplained(v, same)


def _hlo_differs_words(v: Verdict) -> str:
    """Another HLO: the graph diff's cause and its line (and the device counts when they differ)."""
    built = ""
    if v.reason == "device_count" and v.differences:
        d = v.differences[0]
        built = f": built for {d.b} devices, run A's for {d.a} ({d.name})"
    if v.cause is None:
        return f"its HLO differs from run A's{built}"
    where = v.cause.locations[0] if v.cause.locations else None
    at = f" at {_short(where)}" if where is not None else ""
    return f"its HLO differs from run A's{built} ({v.cause.kind}{at}: {v.cause.summary})"


# -- miss_key_differs: the same HLO under another key -----------------------------------------------------------------

def _key_option(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    what = {"XLA_FLAGS": "XLA flag --", "debug_options": "XLA option "}.get(d.source, "compile option ")
    more = f" (and {len(v.differences) - 1} more)" if len(v.differences) > 1 else ""
    inputs = f"; the key's inputs that differ: {', '.join(v.key_components)}" if v.key_components else ""
    return (f"the same HLO under another cache key: {what}{d.name} is {_value(d.b)} in run B, "
            f"{_value(d.a)} in run A{more}{inputs}")


def _key_cache_folder(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return (f"another cache key: run B's cache folder is {_value(d.b)}, run A's {_value(d.a)} (JAX writes the "
            "folder into the compile options it hashes: xla_gpu_per_fusion_autotune_cache_dir)")


def _key_devices(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return (f"the same HLO under another cache key: run B ran on another device configuration ({d.name} is "
            f"{_value(d.b)} in run B, {_value(d.a)} in run A; JAX hashes the devices' topology, not the flag)")


def _key_source_lines(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return f"another cache key; the two programs differ only in their source lines ({d.a} in run A, {d.b} in run B)"


def _key_renamed(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return (f"the same HLO under another name: run A compiled it as {d.a}, run B as {d.b} (the module's "
            "name is in the key)")


def _key_version(v: Verdict) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return f"the same HLO under another cache key: {d.name} is {_value(d.b)} in run B, {_value(d.a)} in run A"


def _key_elided_constants(v: Verdict) -> str:
    at = f", used at {_short(v.program_line)}" if v.program_line is not None else ""
    return ("another cache key; the HLO texts are the same but XLA's text dump elides large constants "
            f"(constant({{...}}){at}), which may differ")


def _key_not_captured(v: Verdict) -> str:
    """The same HLO, another key, and no difference found between what the two runs dumped."""
    if v.a_record is None or v.b_record is None:
        return ("another cache key; one of the two programs was loaded, not compiled, so its HLO was not dumped "
                "before optimizations and only the keys can be compared")
    return ("the same HLO under another cache key; the dumped options are the same, so an input of the key "
            "not captured differs (JAX/jaxlib version, platform, devices)")


KEY_DIFFERS_WORDS: dict[str, Callable[[Verdict], str | None]] = {
    "xla_flag": _key_option,
    "compile_option": _key_option,
    "other_cache_folder": _key_cache_folder,
    "device_count": _key_devices,
    "metadata_in_key": _key_source_lines,
    "renamed": _key_renamed,
    "version": _key_version,
    "elided_constants": _key_elided_constants,
    "unknown": _key_not_captured,
}
"""``miss_key_differs`` reason -> its words (None when the verdict lacks the difference the words quote)."""


# -- miss_same_key: the same HLO and key, compiled again --------------------------------------------------------------

def _below_compile_time(v: Verdict, same: str) -> str:
    return (f"{same}, never written: run A compiled it in {v.measured:.2f} s, under "
            f"jax_persistent_cache_min_compile_time_secs ({v.threshold:.2f} s)")


def _below_entry_size(v: Verdict, same: str) -> str:
    return (f"{same}, never written: its entry ({v.measured:.0f} bytes) is under "
            f"jax_persistent_cache_min_entry_size_bytes ({v.threshold:.0f} bytes)")


def _exceeds_cache_size(v: Verdict, same: str) -> str:
    return (f"{same}, never written: its entry ({v.measured:.0f} bytes) is larger than the whole cache "
            f"(jax_compilation_cache_max_size, {v.threshold:.0f} bytes); JAX warned and dropped it")


def _host_callbacks(v: Verdict, same: str) -> str:
    at = f" (at {_short(v.program_line)})" if v.program_line is not None else ""
    return f"{same}, never written: it uses host callbacks{at}"


def _configured_late(v: Verdict, same: str) -> str:
    at = f" (called at {_short(v.called_at)})" if v.called_at is not None else ""
    return (f"no cache was configured yet when it compiled{at}, so none was looked at (later compilations of "
            "the run did use one)")


def _same_key_cache_folder(v: Verdict, same: str) -> str | None:
    if not v.differences:
        return None
    d = v.differences[0]
    return f"{same}: run A wrote it to {d.a}, but run B's cache folder is {d.b}"


def _not_loadable(v: Verdict, same: str) -> str:
    if v.detail in CANNOT_DESERIALIZE.values():  # known of the backend, not logged
        return f"{same}: its entry is in the cache folder, and this backend cannot load it: {v.detail}{_other(v)}"
    why = f" ({v.detail})" if v.detail else ""
    return f"{same}: the entry run A wrote was found but could not be loaded{why}{_other(v)}"


def _same_key_unexplained(v: Verdict, same: str) -> str:
    """The same HLO and key, compiled again, and nothing captured names the reason."""
    if isinstance(v.b, CacheCompilation) and v.b.lookup == "unknown":
        same_program = "the same HLO and options" if v.a_record is not None and v.b_record is not None else \
            "compiled in run B"
        return (f"{same_program}; without the JAX logs nothing says whether run A wrote it (capture stderr "
                "with JAX_EXPLAIN_CACHE_MISSES=1)")
    if v.entry_in_cache:
        return (f"{same}: its entry is in the cache folder, yet run B compiled it (it could not load it, or did not "
                "look: its stderr and metrics say which)")
    return f"{same}: nothing captured says why run A's entry was not there"


SAME_KEY_WORDS: dict[str, Callable[[Verdict, str], str | None]] = {
    "below_compile_time": _below_compile_time,
    "below_entry_size": _below_entry_size,
    "exceeds_cache_size": _exceeds_cache_size,
    "write_failed": lambda v, same: f"{same}, never written: writing it failed ({v.detail})",
    "read_failed": lambda v, same: f"{same}: run B found its entry but could not read it ({v.detail})",
    "host_callbacks": _host_callbacks,
    "cache_disabled": lambda v, same: f"{same}, never written: the cache was disabled or not initialized",
    "cache_configured_late": _configured_late,
    "no_cache": lambda v, same: "run B never looked at a persistent cache",
    "other_cache_folder": _same_key_cache_folder,
    "entry_missing": lambda v, same: f"{same}: run A wrote it, but the cache run B read has no such entry",
    "not_loadable": _not_loadable,
    "unknown": _same_key_unexplained,
}
"""``miss_same_key`` reason -> its words; ``same`` is "the same HLO and key", or "the same key" when run B's
program is not the one filed under it (None when the verdict lacks the difference the words quote)."""


def _other(v: Verdict) -> str:
    """The clause saying that run B's program is not the one filed under the key both runs share."""
    d = next((d for d in v.differences if d.source == SAME_KEY_PROGRAM), None)
    if d is None:
        return ""
    what = f"{d.name} {d.b} in run B, {d.a} in run A" if d.name == PRECISION_ATTRIBUTE else "its HLO differs"
    return f"; and run B's program is not the one under this key ({what})"


def fix_text(v: Verdict) -> str | None:
    if v.verdict in ("hit", "new"):
        return None
    other = next((d for d in v.differences if d.source == SAME_KEY_PROGRAM), None)
    if v.verdict == "miss_same_key" and other is not None:  # told before why it was not loaded: the bigger risk
        row = "same_key_precision" if other.name == PRECISION_ATTRIBUTE else "same_key_program"
        return CACHE_FIXES[row].format(a=other.a, b=other.b)
    lowering = [d for d in v.differences if d.source == "lowering"]
    if v.verdict == "miss_hlo_differs" and lowering and lowering[0].name == "jax_default_prng_impl":
        return GRAPH_FIXES["prng_impl"].format(a=lowering[0].a, b=lowering[0].b)
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
