"""``compare-runs`` in words: the headline (the reason behind most of run B's recompilations, with what they cost),
the fix, then one line per compilation of B. The ``--json`` body is built here too: its ``summary``, ``reason``
and ``fix`` strings are these words, beside the typed facts of :mod:`hlodiff.explain.across_runs`.

Why each compilation was not loaded is said by :mod:`hlodiff.render.across_runs_reasons` (a table keyed by
reason). The fixes are rows of :mod:`hlodiff.render.across_runs_fixes` (``CACHE_FIXES`` for the verdicts outside
the graph, ``GRAPH_FIXES`` for a graph difference said for two runs); any other graph difference takes the fix of
the graph diff's cause (:mod:`hlodiff.diff.fix_rules`).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from hlodiff.dumps.compile_cache import CacheCompilation
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.across_runs import CANNOT_DESERIALIZE, NO_DUMP, PER_PROGRAM, RELATIVE_FOLDER, AcrossRuns, Verdict
from hlodiff.explain.op_by_op import compiled_programs
from hlodiff.explain.seed_offset import SEED_OFFSET_SETTING
from hlodiff.explain.across_runs_torch import LOOKED_ELSEWHERE
from hlodiff.explain.run_programs import is_users_program, users_first
from hlodiff.explain.program_differences import PRECISION_ATTRIBUTE, SAME_KEY_PROGRAM, same_argument_types
from hlodiff.explain.run_differences import jax_setting_of, same_folder_spelled_apart
from hlodiff.explain.run_settings import DEVICE_ASSIGNMENT_OPTIONS, DONORS_SWITCH, compile_setting_of
from hlodiff.explain.exponent_type import EXPONENT_TYPE
from hlodiff.hlo.installed import package_path
from hlodiff.explain.mesh_axis_names import MESH_AXIS_NAMES
from hlodiff.explain.run_repeats import REPEATED_WEIGHTS, REPEATED_WORK
from hlodiff.explain.run_arguments import ARGUMENT_DTYPES, ARGUMENT_LEAVES, ARGUMENT_ORDER
from hlodiff.render.across_runs_fixes import (ACROSS_RUNS_RULES, CACHE_FIXES, GRAPH_FIXES,  # noqa: F401 (API)
                                            setting_fix)
from hlodiff.render.across_runs_reasons import compared_words, short_line, value_words, why_text
from hlodiff.render.plural import counted

PIECES_SWITCH = {"jit_disabled": "jit disabled", "eager_mode": "torch_xla's eager mode"}
"""The switch behind an op-by-op run B, as its summary names it."""

LOCATED_AT_CALL = frozenset({"cache_configured_late"})
"""Reasons whose headline is located at the user's line that compiled the program (the operation run before the
cache was configured); reasons of :data:`hlodiff.explain.across_runs.LOCATED_IN_PROGRAM` take the line of the
instruction behind them; the others are settings (a threshold, a flag), not a line, or take their cause's line."""

LOCATED_AT_CALL_DIFFERENCES = frozenset({ARGUMENT_ORDER})
"""Differences whose headline, when the graph diff gives no line, is located at the call that passed the arguments
(JAX's call site): the pytree flattened in another order was passed there."""


def label(v: Verdict) -> str:
    """The program as the user knows it: JAX's module name, or a torch_xla graph by its sync line."""
    if v.program.startswith("jit") or v.called_at is None or v.b_record is None or v.b_record.kind == "xla_dump":
        return v.program[:24]
    return f"graph {v.program[:8]} (sync at {short_line(v.called_at)})"


def listed_label(v: Verdict) -> str:
    """The program in the per-program list: a jitted function of the user's with the line that called it (review
    14, F8: ``jit_update`` had none), an eager op or a torch_xla graph as :func:`label` names it."""
    if v.program.startswith("jit") and is_users_program(v.program) and v.called_at is not None:
        return f"{label(v)} ({short_line(v.called_at)})"
    return label(v)


def reason_text(v: Verdict) -> str:
    """What happened to one compilation of B, from its evidence."""
    if v.verdict == "hit":
        return "loaded from the cache"
    if v.in_pieces:
        return f"compiled: {why_text(v)}"
    if v.verdict == "new":
        return "compiled; run A never compiled it (nothing to reuse)"
    return f"compiled again: {why_text(v)}"




def fix_text(v: Verdict) -> str | None:
    if v.in_pieces:
        return CACHE_FIXES[v.reason or ""]
    if v.verdict in ("hit", "new"):
        return None
    other = next((d for d in v.differences if d.source == SAME_KEY_PROGRAM), None)
    if v.verdict == "miss_same_key" and other is not None:  # told before why it was not loaded: the bigger risk
        row = "same_key_precision" if other.name == PRECISION_ATTRIBUTE else "same_key_program"
        return CACHE_FIXES[row].format(a=other.a, b=other.b)
    lowering = [d for d in v.differences if d.source == "lowering"]
    if v.verdict == "miss_hlo_differs" and lowering and lowering[0].name == "jax_default_prng_impl":
        return GRAPH_FIXES["prng_impl"].format(a=lowering[0].a, b=lowering[0].b)
    if v.verdict == "miss_hlo_differs" and lowering and lowering[0].name == SEED_OFFSET_SETTING:
        return GRAPH_FIXES["seed_offset"].format(a=lowering[0].a, b=lowering[0].b)
    if v.verdict == "miss_hlo_differs" and lowering:
        return GRAPH_FIXES["lowering"].format(name=lowering[0].name, a=lowering[0].a, b=lowering[0].b)
    if v.verdict == "miss_hlo_differs" and v.reason == "aliasing" and v.cause is not None and v.cause.fix is None:
        said = (v.cause.summary.partition(": ")[2] or v.cause.summary).replace("on the right only", "in run B only")
        said = said.replace("on the left only", "in run A only")
        if isinstance(v.b, CacheCompilation):  # JAX: donate_argnums
            return GRAPH_FIXES["aliasing"].format(summary=said)
        dropped = next((d for d in v.differences if d.name == DONORS_SWITCH), None)
        if dropped is None:
            return GRAPH_FIXES["aliasing_torch_xla"].format(summary=said)
        side, other = ("A", "B") if dropped.a else ("B", "A")
        return GRAPH_FIXES["param_aliasing_off"].format(summary=said, side=side, other=other)
    if v.verdict == "miss_hlo_differs" and v.reason == "shape" and v.differences:
        d = v.differences[0]
        more = f" and {len(v.differences) - 1} more" if len(v.differences) > 1 else ""
        if v.length_dim is not None:
            return GRAPH_FIXES["input_length" if v.batch_kept else "input_dimension"].format(name=f"{d.name.lstrip('%')}{more}", a=d.a, b=d.b,
                                                      dim=v.length_dim, la=_dims(d.a)[v.length_dim],
                                                      lb=_dims(d.b)[v.length_dim])
        return GRAPH_FIXES["state_shape" if v.state_shapes else "input_shape"].format(
            name=f"{d.name.lstrip('%')}{more}", a=d.a, b=d.b)
    repeats = next((d for d in v.differences if d.name in (REPEATED_WORK, REPEATED_WEIGHTS)), None)
    if v.verdict == "miss_hlo_differs" and repeats is not None:
        more, fewer = ("B", "A") if _instructions(repeats.b) > _instructions(repeats.a) else ("A", "B")
        row = "repeated_work" if repeats.name == REPEATED_WORK else "repeated_weights"
        return GRAPH_FIXES[row].format(more=more, fewer=fewer, a=repeats.a, b=repeats.b)
    powers = next((d for d in v.differences if d.name == EXPONENT_TYPE), None)
    if v.verdict == "miss_hlo_differs" and powers is not None:
        return GRAPH_FIXES["exponent_type"].format(program=v.program, a=powers.a, b=powers.b)
    names = next((d for d in v.differences if d.name == MESH_AXIS_NAMES), None)
    if v.verdict == "miss_hlo_differs" and names is not None:
        return GRAPH_FIXES["mesh_axis_names"].format(a=names.a, b=names.b)
    order = next((d for d in v.differences if d.name == ARGUMENT_ORDER), None)
    if v.verdict == "miss_hlo_differs" and order is not None:
        return GRAPH_FIXES["argument_order"].format(program=v.program, a=order.a, b=order.b)
    if v.verdict == "miss_hlo_differs" and v.reason == "dtype" and v.differences and \
            v.differences[0].name == ARGUMENT_DTYPES:
        d = v.differences[0]
        return GRAPH_FIXES["argument_dtype"].format(side="B", other="A", program=v.program, these=d.b, those=d.a)
    if v.verdict == "miss_hlo_differs" and v.reason == "dtype" and v.differences:
        d = v.differences[0]
        side, types = ("B", d.b) if d.b else ("A", d.a)
        row = {"16-bit floats": "precision", "64-bit integers": "long32", "32-bit floats": "bf16_storage",
               "64-bit floats": "float64"}.get(
            d.name, "x64")
        if row == "precision" and isinstance(v.b, CacheCompilation):
            row = "precision_jax"  # JAX has no autocast: a dtype in the code or config (round 11)
        same = " with the same argument types" if same_argument_types(v.a_record, v.b_record) else ""
        return GRAPH_FIXES[row].format(side=side, types=types, other="A" if side == "B" else "B", same=same)
    leaves = next((d for d in v.differences if d.name == ARGUMENT_LEAVES), None)
    if v.verdict == "miss_hlo_differs" and leaves is not None:
        side, paths = ("B", leaves.b) if leaves.b else ("A", leaves.a)
        return GRAPH_FIXES["pytree_leaves"].format(side=side, other="A" if side == "B" else "B", paths=paths,
                                                   program=v.program)
    if v.verdict == "miss_hlo_differs" and v.setting is not None:  # review 15 F5: a run's setting decided
        return setting_fix(v.setting)
    if v.verdict == "miss_hlo_differs" and v.reason != "device_count":
        if v.cause is not None and v.cause.fix_rule in ACROSS_RUNS_RULES:  # a fix written for two steps of a run
            row = ACROSS_RUNS_RULES[v.cause.fix_rule]
            first = v.cause.locations[0] if v.cause.locations else None
            if f"{row}_call" in GRAPH_FIXES and first is not None and not first.is_library and first.line:
                row = f"{row}_call"  # the user's call into the library was found on disk (library_module_calls)
            return GRAPH_FIXES[row].format(summary=v.cause.summary, library_call=_library_call(v.cause),
                                           line=short_line(first) if first is not None else "?")
        return v.cause.fix if v.cause is not None else None
    reason = v.reason or "unknown"
    if v.verdict == "miss_key_differs" and reason == "unknown":
        reason = "unknown_key_no_dump" if v.detail == NO_DUMP else "unknown_key"
        if reason == "unknown_key" and len(v.compared) > 1 and isinstance(v.b, CacheCompilation):
            return CACHE_FIXES["unknown_key_recorded"].format(compared=compared_words(v))
    d = v.differences[0] if v.differences else None
    if reason == "device_count" and v.verdict == "miss_key_differs":
        # the same program, another device set-up: a flag JAX leaves out of the key, or (round 13) the count the
        # module header says it was built for (torch_xla's replica_count under CPU_NUM_DEVICES)
        reason = "device_count_header" if d is not None and d.source == "module" else "device_topology"
    if reason == "xla_flag" and d is not None and d.source != "XLA_FLAGS":
        reason = "xla_debug_option"  # a dumped debug option: XLA_FLAGS and compiler_options= both land there
        if (v.detail or "").startswith(PER_PROGRAM):  # run B's other programs lack it: this function's own
            return CACHE_FIXES["xla_compiler_options"].format(name=d.name, a=value_words(d.a), b=value_words(d.b),
                                                              program=v.program,
                                                              others=v.detail[len(PER_PROGRAM):])
        if isinstance(v.b, CacheCompilation) and (setting := jax_setting_of(d, v.differences)) is not None:
            return CACHE_FIXES["jax_setting"].format(setting=setting[0], side=setting[1], name=d.name,
                                                     a=value_words(d.a), b=value_words(d.b))
    if reason == "compile_option" and d is not None and d.source == "compile_options.textproto" and \
            d.name in DEVICE_ASSIGNMENT_OPTIONS:
        return CACHE_FIXES["device_assignment"].format(name=d.name, a=value_words(d.a), b=value_words(d.b))
    if reason == "compile_option" and d is not None and (setting := compile_setting_of(d)) is not None:
        return CACHE_FIXES["jax_compile_setting"].format(name=d.name, a=value_words(d.a), b=value_words(d.b),
                                                         setting=setting)
    if reason == "debug_metadata" and d is not None:
        side, n = ("B", d.b) if d.a == "0" else ("A", d.a)
        return CACHE_FIXES["debug_metadata"].format(side=side, n=n)
    if reason == "unknown" and v.verdict == "miss_same_key" and _entry_was_there(v):
        reason = "unknown_entry_there"
    if reason == "entry_missing" and d is not None and d.name == RELATIVE_FOLDER:
        reason = "entry_missing_relative"
    if reason == "not_loadable" and v.detail in CANNOT_DESERIALIZE.values():
        reason = "not_loadable_inferred"  # known of the backend, not seen: say what else it could be
    if reason == "other_cache_folder" and d is not None and same_folder_spelled_apart(d.a, d.b):
        reason = "same_folder_spelled_apart"
    if reason == "entry_missing" and v.cache_empty:
        reason = "entry_missing_empty"
    if reason == "entry_missing" and v.detail == LOOKED_ELSEWHERE:
        reason = "entry_missing_elsewhere"
    if isinstance(v.b, GraphRecord) and v.b.kind != "xla_dump" and f"{reason}_torch_xla" in CACHE_FIXES:
        reason = f"{reason}_torch_xla"  # a torch_xla run: its own words where JAX's would mislead
    template = CACHE_FIXES.get(reason, CACHE_FIXES["unknown"])
    return template.format(name=d.name if d else "?", a=value_words(d.a) if d else "?",
                           b=value_words(d.b) if d else "?",
                           measured=_number(v.measured), threshold=_number(v.threshold), detail=v.detail or "?")


def _library_call(cause) -> str:
    """``torch/nn/functional.py:3458``: the library frame a cause's ops were traced in, as the fix table writes it."""
    frame = cause.library_locations[0] if cause.library_locations else None
    return f"{package_path(frame.file)}:{frame.line}" if frame is not None else "a library function"


def _instructions(said: str) -> int:
    """``"f32[4,16] x2; 177 instructions"`` -> 177 (:func:`hlodiff.explain.run_repeats.repeated_work`'s words)."""
    return int(said.rpartition("; ")[2].split()[0])


def _dims(shape: str) -> list[str]:
    """``s32[8,122]`` -> ``["8", "122"]``."""
    return shape.partition("[")[2].rstrip("]").split(",")


def _entry_was_there(v: Verdict) -> bool:
    """JAX: run A wrote the entry, the cache (as the listing shows it) holds the key, and run B logged a miss for it
    without a read error: it had the entry and did not use it (a verifying cache, or another folder)."""
    return isinstance(v.b, CacheCompilation) and isinstance(v.a, CacheCompilation) and bool(v.a.written) and \
        v.entry_in_cache is True and v.b.lookup == "miss" and v.b.read_error is None


def run_names(result: AcrossRuns) -> tuple[str, str]:
    """The two runs as the user named them (their folders' names; the paths given when both names are the same),
    not "run A" and "run B" (review F9: runD was called "run B")."""
    a, b = (str(r.path).rstrip("/\\") for r in (result.run_a, result.run_b))
    short = tuple(p.replace("\\", "/").rsplit("/", 1)[-1] or p for p in (a, b))
    return short if short[0] != short[1] else (a, b)


def summary_text(result: AcrossRuns) -> str:
    name_a, name_b = run_names(result)
    shared = [v for v in result.verdicts if v.verdict != "new" and (v.verdict != "hit" or v.a is not None)]
    # a load of an entry run A never wrote (run B's own, from earlier in run B) is no program run A had compiled
    again = result.recompiled
    new = len(result.verdicts) - len(shared)
    tail = f"; {counted(new, 'program')} {name_a} never compiled" if new else ""
    if not again:
        hits = sum(1 for v in shared if v.verdict == "hit")
        if (log := getattr(result.run_b, "jax_log", None)) is not None and log.without_compiles and log.traced:
            return silent_log_summary(name_b, log.traced, hits, tail,
                                          configured_as=name_a if log.looked_up else None)
        if not hits:  # nothing of run A asked for: "loaded all 0" read as a warm start
            return f"{name_b} asked for none of the programs {name_a} had compiled{tail}"
        return (f"{name_b} loaded all {counted(hits, 'program')} {name_a} had compiled from the "
                f"persistent cache{tail}")
    seconds = sum(v.seconds or 0.0 for v in again)
    cost = f" ({seconds:.2f} s of compilation)" if any(v.seconds is not None for v in again) else ""
    verdict, reason, group = result.groups()[0]
    if group[0].in_pieces:
        return _pieces_summary(result, group, cost)
    lead = _group_text(verdict, reason, group, whole=len(group) == len(again))
    return f"{name_b} {_compiled_words(again, shared, name_a)}{cost}; {lead}{tail}"


def _compiled_words(again: list[Verdict], shared: list[Verdict], name_a: str) -> str:
    """What run B compiled, against run A: "compiled again" only for programs run A had compiled (the same HLO);
    a program whose HLO differs from run A's (another static value, another shape) is one run A never compiled, and
    no cache could have held it (new-user review 22, F3: "compiled again 1 of the 7 programs crA had compiled" for
    an n_valid run A never saw read as if the cache had lost an entry)."""
    differs = [v for v in again if v.verdict == "miss_hlo_differs"]
    same = [v for v in again if v.verdict != "miss_hlo_differs"]
    had = len(shared) - len(differs)
    parts = []
    if same:
        parts.append(f"compiled again the {'one program' if had == 1 else f'{had} programs'} {name_a} had compiled"
                     if len(same) == had else f"compiled again {len(same)} of the {had} programs {name_a} had compiled")
    if differs:
        n = len(differs)
        parts.append(f"compiled {counted(n, 'program')} {name_a} never compiled")
    return " and ".join(parts)


def silent_log_summary(name_b: str, traced: list[str], hits: int, tail: str, configured_as: str | None = None) -> str:
    """Run B's log (JAX_EXPLAIN_CACHE_MISSES=1 without JAX_LOG_COMPILES) shows functions traced and no persistent
    miss for run A's programs: JAX logs a miss only while a cache is configured and a hit only with
    JAX_LOG_COMPILES, so the silence is a load or no cache at all; say both and what tells them apart, never "asked
    for none". ``configured_as`` (run A's name): run B logged a miss for a program of its own (one run A never
    compiled), so a cache was configured and the silence is a load."""
    names = ", ".join(dict.fromkeys(traced[:3])) + (", ..." if len(dict.fromkeys(traced)) > 3 else "")
    loaded = f"{name_b} loaded {counted(hits, 'program')} from the persistent cache; " if hits else ""
    if configured_as:
        return (f"{loaded}{name_b} traced {names} and logged a persistent-cache miss only for programs "
                f"{configured_as} never compiled: a cache was configured, so the programs it logged no miss for "
                f"were loaded from it (JAX logs a hit only with JAX_LOG_COMPILES=1){tail}")
    return (f"{loaded}{name_b} traced {names} and logged no persistent-cache miss: with JAX_EXPLAIN_CACHE_MISSES=1 "
            "JAX logs a miss only while a cache is configured, and a hit only with JAX_LOG_COMPILES=1, so they were "
            "loaded from the cache (or this run had no cache configured; run it with JAX_LOG_COMPILES=1 to tell)"
            f"{tail}")


def _pieces_summary(result: AcrossRuns, group: list[Verdict], cost: str) -> str:
    """Run B ran run A's programs op by op: what run A compiled, and the pieces run B compiled instead."""
    name_a, name_b = run_names(result)
    programs = len(compiled_programs(result.run_a))
    names = ", ".join(dict.fromkeys(label(v) for v in group[:3])) + (", ..." if len(group) > 3 else "")
    return (f"{name_b} compiled none of the {counted(programs, 'program')} {name_a} ran: "
            f"it ran them op by op ({PIECES_SWITCH[group[0].reason or '']}), {len(group)} programs of a few "
            f"operations each{cost} ({names})")


def _group_text(verdict: str, reason: str | None, group: list[Verdict], whole: bool = False) -> str:
    """One reason and the programs it explains (``whole``: all of B's recompilations, said without a count)."""
    n = len(group)
    names = _names([label(v) for v in users_first(group)])
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
    width = max((len(listed_label(v)) for v in result.verdicts), default=8)
    for v in users_first(result.verdicts):
        line = Text(f"  {listed_label(v):<{width}}  ")
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
        if first.at_call and first.called_at is not None:
            where = first.called_at  # more of what both runs traced: the call decided how much
        if where is None and (reason in LOCATED_AT_CALL or any(d.name in LOCATED_AT_CALL_DIFFERENCES
                                                                for d in first.differences)):
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




def _names(labels: list[str], shown: int = 3) -> str:
    """The first names of a group, each once with its count (review 18, F8: "jit_unstack, jit_train_step,
    jit_train_step, ..." for two programs of one function): ``jit_unstack, jit_train_step (2 programs), ...``."""
    counts: dict[str, int] = {}
    for name in labels:
        counts[name] = counts.get(name, 0) + 1
    words = [f"{name} ({k} programs)" if k > 1 else name for name, k in list(counts.items())[:shown]]
    return ", ".join(words) + (", ..." if len(counts) > shown else "")
