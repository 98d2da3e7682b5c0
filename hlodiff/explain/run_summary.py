"""The run in words for its first lines: the counts (graphs, compilations, programs loaded from a cache,
recompilations), the patterns in brief, what could not be read, and hints on what to capture next. Eager ops
outside jit and expected warm-ups are counted apart so the summary never overstates what recompiled."""

from __future__ import annotations

from hlodiff.diff.fix_stance import FixStance
from hlodiff.dumps.graph_record import TRACED_KINDS, GraphRecord
from hlodiff.explain.explanation import Recompilation, RunCounts
from hlodiff.explain.families import Family, first_rest
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.locate import has_source_metadata, output_tensors
from hlodiff.explain.pattern_words import _CUT_WORDS, _in_brief, cuts_text, pattern_text
from hlodiff.explain.patterns import Pattern
from hlodiff.explain.producer import producer


def cut_note(cut) -> str:
    """A save-tensors file cut off mid-graph says so where a cut dump module does (review F10): the graph ran
    (compiled or not, its hash is lost with it) and nothing can be said of it."""
    if not cut:
        return ""
    shown = ", ".join(f"#{c.index}" for c in cut)
    return (f"; and {len(cut)} more graph{'s' if len(cut) != 1 else ''} cut off mid-write ({shown}, not read: "
            "the file ends inside it)")


def unread_note(unread: list[GraphRecord]) -> str:
    if not unread:
        return ""
    modules = ", ".join(str(r.module_number) for r in unread)
    return (f"; and {len(unread)} more compilation{'s' if len(unread) != 1 else ''} whose HLO was cut off "
            f"(module{'s' if len(unread) != 1 else ''} {modules}, not read)")


def run_counts(graphs: list[GraphSummary], recompilations: list[Recompilation], facts: list[Pattern],
               families: list[Family], loaded: set[str] = frozenset()) -> RunCounts:
    """Programs loaded from a persistent cache are counted apart, never as compilations (nor as recompilations: a
    family's second program loaded compiled nothing); eager ops outside jit are no recompilation of the user's, so
    they are never in the count (review 17, F5: "2 recompilations (1 of them an eager op outside jit)" for one
    recompilation of the step and a device_put's staging of another array)."""
    compiled = sum(1 for g in graphs if g.compiled and g.ref not in loaded)
    n = sum(1 for r in recompilations if r.graph.ref not in loaded)
    outside = _outside(recompilations, facts, families, loaded)
    return RunCounts(len(graphs), compiled, len(loaded), n - outside)


def _outside(recompilations: list[Recompilation], facts: list[Pattern], families: list[Family],
             loaded: set[str]) -> int:
    """How many compiled recompilations are JAX's eager ops outside jit."""
    eager = {f.key for f, p in zip(families, facts) if p.name == "eager op"}
    return sum(1 for r in recompilations if r.graph.ref not in loaded and r.family.key in eager)


def summary_line(counts: RunCounts, recompilations: list[Recompilation], facts: list[Pattern],
                 families: list[Family], loaded: set[str] = frozenset()) -> str:
    """The run in one line: its counts, then its patterns in brief."""
    recompilations = [r for r in recompilations if r.graph.ref not in loaded]
    n = len(recompilations)
    eager = {f.key for f, p in zip(families, facts) if p.name == "eager op"}
    outside = _outside(recompilations, facts, families, loaded)
    # review 5 F6: a recompilation the report itself calls an expected warm-up (Adam's first step) is counted apart
    warm = sum(1 for r in recompilations if r.family.key not in eager and r.causes and
               r.causes[0].fix_stance is FixStance.WARMUP)
    # review 10 F2: the rest of the first step an early read cut is that step's second graph, not a step compiled again
    firsts = [r for r in recompilations if r.family.key not in eager and first_rest(r.family, r.graph.ref)]
    rest = len(firsts)
    # round 11 (r11_tx_nanmedian_fallback): the cut's words follow its reason, as the cause below does
    reasons = {c.reason for r in firsts for c in r.causes if c.kind == "partial" and c.reason in _CUT_WORDS}
    reason = reasons.pop() if len(reasons) == 1 else "read" if not reasons else "mixed"
    one, many = cuts_text(reason, 1), _CUT_WORDS[reason][1]
    ours = n - outside  # the count the head states: eager ops are none of the user's (review 17, F5)
    asides = ([f"{_of_them(warm, ours)}{'an expected warm-up' if warm == 1 else 'expected warm-ups'}"] if warm else []) \
        + ([f"{_of_them(1, ours)}the first step's second graph, after {one} cut the step" if rest == 1 else
            f"{_of_them(rest, ours)}first steps' second graphs, after {many} cut the steps"] if rest else []) \
        + ([f"+{outside} eager op{'s' if outside != 1 else ''} outside jit, not {'steps' if outside != 1 else 'a step'}"]
           if outside else [])
    head = counts.head() + (f" ({'; '.join(asides)})" if asides else "")
    if outside and outside == n:
        return _eager_only(counts, facts, families, outside, loaded)
    # review 15 F6: a family whose every program came from the persistent cache compiled nothing in this run: its
    # pattern (jit__normal's two shapes, both loaded) is no story of it; what did compile is named instead
    interesting = [p for f, p in zip(families, facts) if p.name != "steady" and _compiled_here(f, loaded)]
    interesting.sort(key=lambda p: p.name == "eager op")  # JAX's eager compiles come after the real story
    if n == 0 and not loaded and not any(p.name != "eager op" for p in interesting):
        return _steady_with_eager(counts, facts, families) or head  # a restart names what compiled, below
    if not interesting:
        return head + compiled_here_clause(families, loaded)
    real = [p for p in interesting if p.name != "eager op"]
    if len(real) > 1:  # several families recompiled: each in a few words, the report lists their patterns
        return head + ": " + "; ".join(_in_brief(p) for p in real)
    more = len(interesting) - 1  # the summary stays two lines: the other patterns are listed under it
    return head + ": " + pattern_text(interesting[0], aside=False) + _avoidable(interesting[0], recompilations, facts, families) + (
        f"; +{more} more pattern{'s' if more != 1 else ''} below" if more else "")


AVOIDABLE = " (avoidable: the fix asks for a change; exit 1 unless --warmup N covers it)"
"""Said after a warm-up whose root fix asks for a change (review 19, F8: "warm-up only" above an exit status of 1
read as a contradiction; the exit status follows :func:`hlodiff.explain.verdict.unexpected`'s rule)."""


def _avoidable(pattern: Pattern, recompilations: list[Recompilation], facts: list[Pattern],
               families: list[Family]) -> str:
    """:data:`AVOIDABLE` for a warm-up family one of whose recompilations asks a change, else nothing."""
    from hlodiff.explain.verdict import asks_a_change

    family = next((f for f, p in zip(families, facts) if p is pattern), None)
    if family is None or pattern.name != "warm-up only":
        return ""
    mine = [r for r in recompilations if r.family is family]
    return AVOIDABLE if any(asks_a_change(r, pattern.name) for r in mine) else ""


def _of_them(count: int, n: int) -> str:
    """How an aside counts its share of the recompilations: "1 recompilation (1 of them ...)" read as a miscount
    (review 16, F3); the only one is said plainly, all of several as "all of them"."""
    return "" if count == n == 1 else "all of them " if count == n else f"{count} of them "


def _compiled_here(family: Family, loaded: set[str]) -> bool:
    """Some program of the family compiled in this run (not every one loaded from a persistent cache)."""
    return any(g.compiled and g.ref not in loaded for g in family.members)


def compiled_here_clause(families: list[Family], loaded: set[str]) -> str:
    """A restarted run that loaded programs from the persistent cache: the functions that did compile, named
    (``: jit_train_step compiled (the persistent cache did not hold it); every other program was loaded``); empty
    when nothing was loaded or nothing compiled."""
    if not loaded:
        return ""
    names = list(dict.fromkeys(f.label for f in families if _compiled_here(f, loaded)))
    if not names:
        return ""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    one = len(names) == 1
    return (f": {shown} compiled (the persistent cache did not hold {'it' if one else 'them'}); every other program "
            "was loaded")


def first_rest_title(r: Recompilation) -> str:
    """How the report titles :func:`first_rest`'s graph (``compiled as the first step's second graph, after an early
    read cut the step``), empty for any other: a graph compiled for the first time is no recompilation (review 13,
    F5: t3_nan_guard's #1 was titled "recompiled")."""
    if not first_rest(r.family, r.graph.ref):
        return ""
    reasons = {c.reason for c in r.causes if c.kind == "partial" and c.reason in _CUT_WORDS}
    reason = reasons.pop() if len(reasons) == 1 else "read"
    return f"compiled as the first step's second graph, after {cuts_text(reason, 1)} cut the step"


def _eager_only(counts: RunCounts, facts: list[Pattern], families: list[Family], outside: int,
                loaded: set[str] = frozenset()) -> str:
    """A JAX run whose only recompilations are eager ops (``jax.random.normal`` outside jit for a few shapes): the
    user's jitted functions head the summary, the eager compilations are an aside (review F9: a steady run opened
    with "3 recompilations" of JAX's own internals and never named the train step)."""
    from hlodiff.explain.eager_ops import is_eager_op

    steady = [p.family for f, p in zip(families, facts) if p.name == "steady" and not is_eager_op(f)]
    head = counts.head() + " of the jitted functions"
    if steady:
        shown = ", ".join(steady[:3]) + (f" and {len(steady) - 3} more" if len(steady) > 3 else "")
        head += f": steady: {shown} compiled once{' each' if len(steady) > 1 else ''}"
    # every compilation of an eager op, its first for each op included: "15 compilations ... 9 more of eager ops"
    # read as a miscount where 14 were eager (review 6 F9); the 9 are those for another shape
    eager = sum(1 for f in families if is_eager_op(f) for g in f.members if g.compiled and g.ref not in loaded)
    if eager <= outside:
        return head + f"; {outside} more compilation{'s' if outside != 1 else ''} of eager ops outside jit below"
    return head + f"; {eager} eager-op compilations ({outside} for a new shape) below"


def _steady_with_eager(counts: RunCounts, facts: list[Pattern], families: list[Family],
                       loaded: set[str] = frozenset()) -> str:
    """A JAX run that recompiled nothing, with eager ops beside its jitted functions: which functions compiled once
    and how many compilations were eager ops (review 16, F5: "10 graphs, 10 compilations, 0 recompilations" worried
    a user whose loop compiles one train step; 8 were jnp/random ops run outside jit). Empty without eager ops."""
    from hlodiff.explain.eager_ops import is_eager_op

    eager = sum(1 for f in families if is_eager_op(f) for g in f.members if g.compiled and g.ref not in loaded)
    if not eager:
        return ""
    steady = [p.family for f, p in zip(families, facts) if p.name == "steady" and not is_eager_op(f)]
    head = counts.head()
    if steady:
        shown = ", ".join(steady[:3]) + (f" and {len(steady) - 3} more" if len(steady) > 3 else "")
        head += f": steady: {shown} compiled once{' each' if len(steady) > 1 else ''}"
    return head + (f"; {eager} compilation{'s' if eager != 1 else ''} of eager ops outside jit (once per op and "
                   "shape: expected)")


def run_hints(graphs: list[GraphSummary], recompilations: list[Recompilation], reports: dict,
              reports_given: bool = False) -> list[str]:
    hints = []
    if (reports or reports_given) and not any(output_tensors(g, reports) for g in graphs if g.compiled):
        hints.append("the live-tensor report fits none of these graphs (another run, or another save file?); "
                     "it was not used")
    unknown = [r for r in recompilations if any(not c.locations for c in r.causes)]
    if not unknown:
        return hints
    if all(producer(r.graph) == "jax" for r in unknown):
        return hints  # torch_xla's flags and `record` give a JAX run no stack it lacks (review F5)
    if not any(has_source_metadata(r.graph) for r in unknown):
        hints.append("source lines unknown: the dump has no source metadata; rerun with "
                     "`hlodiff record -- python train.py` (sets XLA_HLO_DEBUG=1 and captures live tensors)")
    elif not reports and any(g.record.kind in TRACED_KINDS for g in graphs):
        # review 13 F8: the README's recipe prints the report into stdout (found by content), no flag to pass
        hints.append("some causes have no user line in the HLO metadata; print "
                     "torch_xla._XLAC._xla_tensors_report(0, str(device)) before each sync into the stdout log kept "
                     "beside the dump (found there by content; --tensors-report FILE names a report kept elsewhere), "
                     "or use `hlodiff record`, to trace them to the live tensors and their Python stacks")
    return hints
