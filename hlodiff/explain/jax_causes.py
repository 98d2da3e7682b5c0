"""Join JAX's own cache-miss explanations to the compilations they caused, as causes in the shared vocabulary.

JAX knows why its cache missed (a weak type, a static argument's value, a function it never saw, another pytree
or sharding) but sees nothing inside the function; the dumps show the computation but not the cache key. A
compilation's explanation (read by :mod:`hlodiff.dumps.jax_log`) becomes ``weak_type``, ``static_argument``,
``sharding``, or ``cache_key`` quoting JAX's line for its other reasons. When the HLO is identical, JAX's reason is
the headline (replacing the bare "identical HLO" cause); when the graph changed too, the graph's causes lead and
JAX's reason follows. Shape and dtype reasons are what the graph comparison already shows; they only lend JAX's
call site to causes that have no line. Each of JAX's reasons becomes its cause and fix in
:mod:`hlodiff.explain.jax_reason_causes`; here they are joined to the recompilation's own.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.fix_stance import FixStance
from hlodiff.dumps.evidence import Run
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.dumps.jax_cache_miss import JaxCacheMiss, JaxReason
from hlodiff.dumps.jax_log import JaxCompilation
from hlodiff.errors import InputWarning
from hlodiff.explain.cause_facts import own_placement
from hlodiff.explain.fix_context import static_argument_fix
from hlodiff.explain.eager_ops import is_eager_op
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.jax_contexts import ContextChange, context_at
from hlodiff.explain.jax_reason_causes import rebuilt_tree_cause, reason_cause
from hlodiff.explain.argument_lines import lead_with_the_call

_KEY_CHANGES = frozenset({"static_argument", "weak_type"})


def jax_compilations(run: Run, graphs: list[GraphSummary], warnings: list[InputWarning] | None
                     ) -> dict[str, JaxCompilation]:
    """Graph ref -> the JAX compilation that produced it, for the XLA dump modules of the run (from its JAX
    logs)."""
    dumped = [g for g in graphs if g.record.kind == "xla_dump"]
    if not run.jax_logs or not dumped:
        return {}
    found: dict[str, JaxCompilation] = {}
    names = [g.record.module_name or g.name for g in dumped]
    wanted = Counter(name.rstrip("_") for name in names)  # bounded: only compilations a dumped module can join
    for joined in run.jax_joined(names, wanted, warnings):
        for graph, compilation in zip(dumped, joined):
            if compilation is not None:
                found.setdefault(graph.ref, compilation)
    return found


def static_values(recompilations, joined: dict) -> dict[tuple, tuple[str, ...]]:
    """(family key, JAX's argument text) -> every value the static argument took over the run, in order (the first
    call's, then each cache miss's new one): a fix names the run's values, not one recompilation's pair (review 4,
    F8: a temperature schedule 1.0, 0.8, 0.6, 0.4 told as "(1.0, 0.8)")."""
    seen: dict[tuple, list[str]] = {}
    for r in recompilations:
        compilation = joined.get(r.graph.ref)
        miss = compilation.cache_miss if compilation is not None else None
        for reason in (miss.reasons if miss is not None else ()):
            if reason.kind != "static_argument":
                continue
            values = seen.setdefault((r.family.key, reason.argument), [])
            for v in (reason.before, reason.now):
                if v and v not in values:
                    values.append(v)
    return {k: tuple(v) for k, v in seen.items()}


def merge_jax(r, compilation: JaxCompilation | None, explained: bool = False, log_given: bool = False, *,
              sources: SourceLines, run_values: dict[tuple, tuple[str, ...]] | None = None,
              contexts: dict[tuple[str, int], ContextChange] | None = None) -> None:
    """Add JAX's reasons to a recompilation's causes, each with the fix for what JAX named. ``explained``: the log
    explains JAX's cache misses (then a compilation without one reused its trace); ``log_given``: a JAX log was
    given but none of its compilations could be matched to a dumped module; ``sources``: the run's Python files
    (an argument's name and the line that made it); ``contexts``: the config contexts JAX named, by line
    (:func:`hlodiff.explain.jax_contexts.contexts_by_line`)."""
    miss = compilation.cache_miss if compilation is not None else None
    if miss is None:
        if compilation is not None or explained:
            _placed_elsewhere(r, contexts or {})
        elif log_given:
            _log_not_joined(r)
        return
    reasons = list(miss.reasons)
    if any(r.kind == "redefined_function" for r in reasons):  # one cause: a function created anew each call
        reasons = [r for r in reasons if r.kind != "never_seen"]
    _lead_with_the_argument(r, [x for x in reasons if x.kind == "input_types" and x.argument], miss, sources)
    if any(x.kind == "pytree" for x in reasons):
        _arguments_at_the_call(r, miss, sources)
    made = []
    tree = rebuilt_tree_cause(reasons, miss, sources)
    if tree is not None:  # review 19, F2: one cause for a tree's scalars all made weak at once
        made.append(tree)
        reasons = [x for x in reasons if x.kind != "weak_type"]
    for reason in reasons:
        if (jc := reason_cause(reason, miss, sources, len(r.family.compiled))) is not None:
            if reason.kind == "static_argument" and run_values:
                jc = replace(jc, values=run_values.get((r.family.key, reason.argument)) or jc.values)
            jc.cause.reason = reason.kind  # typed: the cause graph reads it (a new function drags its ops)
            made.append(jc)
    call_site = miss.call_site
    if call_site is not None:
        for cause in r.causes:
            if not cause.locations and cause.kind != "partial":
                cause.locations = [call_site]
                cause.hint = None
    if not made:
        return
    for jc in made:
        jc.cause.fix, jc.cause.fix_is_final = jc.fix, True
        if jc.cause.kind == "static_argument":  # chosen from what the argument changed in the graph
            defined = miss.defined_at
            nondiff = sources.nondiff_callee(defined.file, defined.line, jc.argument) if defined else None
            axes = sources.passed_as_axes(defined.file, defined.line, jc.argument) if defined else None
            choice = static_argument_fix(jc.cause, r, jc.argument, jc.values, jc.pair, nondiff=nondiff or "",
                                         loop_counter=_passes_loop_counter(miss, jc.argument, sources),
                                         axes_passed=axes)
            jc.cause.fix, jc.cause.fix_rule = choice.text, choice.rule.name
        elif jc.cause.fix_rule == "cache_key_new_function" and any(c.kind == "constant" for c in r.causes):
            # round 10 (r10_jx_closure_table): the new function object bakes another value it closes over (a
            # factory's closure): "jit it once" alone would keep the first value; row cache_key_new_closure
            choice = decide(jc.cause, FixContext(producer="jax", new_function=True, others=("constant",)))
            jc.cause.fix, jc.cause.fix_rule = choice.text, choice.rule.name
    identical = r.diff is not None and r.diff.equal
    if identical:  # JAX's reason replaces "the HLO is identical, cause unknown"
        r.causes[:] = [c for c in r.causes if c.kind != "cache_key"]
        for jc in made:
            if not jc.cause.hlo_identical:
                jc.cause.summary, jc.cause.hlo_identical = "the HLO is identical; " + jc.cause.summary, True
        r.causes[0:0] = [jc.cause for jc in made]
    elif any(jc.cause.kind in _KEY_CHANGES or jc.cause.fix_rule == "dtype_prng_key_jax" for jc in made):
        # A static argument (or weak type) changed and the graph with it: the traced program follows from the
        # argument, so JAX's reason leads and the graph's causes say what they follow from.
        leading = [jc.cause for jc in made if jc.cause.kind in _KEY_CHANGES or jc.cause.fix_rule == "dtype_prng_key_jax"]
        head = leading[0]
        for cause in r.causes:
            if own_placement(cause):  # an argument placed otherwise: its own fix (review 14, F2)
                continue
            cause.write_fix(f"follows from the {head.kind.replace('_', ' ')} change above", FixStance.FOLLOWS)
            cause.fix_is_final = True
        r.causes[0:0] = leading
        r.causes.extend(jc.cause for jc in made if jc.cause not in leading)
    else:
        r.causes.extend(jc.cause for jc in made)


def _passes_loop_counter(miss: JaxCacheMiss, argument: str, sources: SourceLines) -> bool:
    """The caller passes the static argument as a loop's step count (the source at JAX's call site, when on
    disk): values that count up, not a statistic under the data's ceiling (tenth stop, t10_jx_resumed_step_log)."""
    call, defined = miss.call_site, miss.defined_at
    if call is None or call.line is None or not argument.isidentifier():
        return False
    params = sources.parameter_names(defined.file, defined.line) if defined is not None else None
    return sources.passes_loop_counter(call.file, call.line, miss.function, argument, params)


def _arguments_at_the_call(r, miss: JaxCacheMiss, sources: SourceLines) -> None:
    """JAX says the arguments' structure changed (a list one item longer, a dict with another key) and the graph
    shows inputs that came or went: the caller made that structure, so the inputs are located at the call first,
    then where the jitted function reads them (review 3, F1b: the list passed at the call, not the `jnp.array` of
    it inside)."""
    if miss.call_site is None:
        return
    for cause in r.causes:
        if cause.kind == "inputs" and cause.locations:
            lead_with_the_call(cause, miss.call_site, None, miss.function, miss.defined_at, sources=sources)


def _lead_with_the_argument(r, reasons: list[JaxReason], miss: JaxCacheMiss, sources: SourceLines) -> None:
    """JAX names the argument whose type changed (``* at xs, now bf16[...] and before f32[...]``): the graph's
    cause on that entry parameter is the root and leads, located at JAX's call site and the line that made the
    argument before the use inside jit; the same change seen inside called computations (a scan body's
    parameters) follows from it."""
    for reason in reasons:
        name = re.compile(rf"{re.escape(reason.argument)}(?:\.\d+)?")
        lead = next((c for c in r.causes if _names_parameter(c, name)), None)
        if lead is None:
            continue
        r.causes.remove(lead)
        r.causes.insert(0, lead)
        # where the argument enters: JAX's call site and the line that made it, then where the function reads it
        lead_with_the_call(lead, miss.call_site, reason.argument, miss.function, miss.defined_at, sources=sources)
        if _same_dims(reason.before, lead):
            lead.summary += f" (JAX: argument `{reason.argument}` is now {reason.now}, before {reason.before})"
        else:
            # review 8 F9: JAX compares with one of its own earlier compilations (the first, for a prefix grown by
            # concatenation), not with the graph hlodiff compared: "3 -> 4 ... before i32[2,2]" read as a slip
            lead.summary += (f" (JAX compared it with another earlier compilation: argument `{reason.argument}` "
                             f"is now {reason.now}, {reason.before} there)")
        lead.jax_types = (reason.before, reason.now)
        for cause in r.causes[1:]:
            if cause.kind == lead.kind:
                cause.write_fix(f"follows from argument `{reason.argument}` above: its new type reaches this "
                                "computation", FixStance.FOLLOWS)
                cause.fix_is_final = True
        return


_DIMS = re.compile(r"\[([0-9, ]*)\]")


def _same_dims(jax_type: str, cause) -> bool:
    """JAX's "before" type has the dimensions of the left side of the graphs hlodiff compared (or either is
    unknown)."""
    named = cause.named
    before = named.details.get("shape", (None, None))[0] if named is not None else None
    a = _DIMS.search(str(jax_type or ""))
    b = _DIMS.search(str(before or ""))
    if a is None or b is None:
        return True
    return a.group(1).replace(" ", "") == b.group(1).replace(" ", "")


def _names_parameter(cause, name: re.Pattern) -> bool:
    """The cause names a parameter of that name (JAX's argument; ``x.1`` for ``x`` in a called computation)."""
    side = cause.named.right or cause.named.left if cause.named is not None else None
    return side is not None and side.opcode == "parameter" and name.fullmatch(side.name) is not None


def _log_not_joined(r) -> None:
    """The user gave JAX's log, but it holds no ``Compiling jit(...)`` lines to match its explanations to the dumped
    modules (JAX_EXPLAIN_CACHE_MISSES=1 without JAX_LOG_COMPILES=1): "rerun with JAX_EXPLAIN_CACHE_MISSES" would ask
    for what was given. The table's row says what is missing instead."""
    for cause in r.causes:
        if cause.kind == "cache_key" and not cause.fix_is_final and r.diff is not None and r.diff.equal:
            choice = decide(cause, FixContext(producer="jax", hlo_identical=True, log_unjoined=True))
            cause.fix, cause.fix_rule, cause.fix_is_final = choice.text, choice.rule.name, True


def _placed_elsewhere(r, contexts: dict[tuple[str, int], ContextChange]) -> None:
    """JAX compiled again with the same HLO, the same compiler options and no tracing cache miss although its
    misses were being explained: the trace was reused and only what lies below it changed, the devices or the
    sharding the committed arguments live on (``jax.device_put`` onto another device), or, when JAX named a config
    context for another compilation on this very line (an eager ``xs[0]`` beside the jitted call inside ``with
    jax.default_matmul_precision(...)``), that context (review 12, F5). The table's rows say which."""
    if r.diff is None or not r.diff.equal or any(c.kind == "compile_options" for c in r.causes):
        return
    for cause in r.causes:
        # the devices seen to differ (outside.py's placement cause) may be the context's doing: jax.default_device
        if cause.kind == "cache_key" and (not cause.fix_is_final or cause.fix_rule == "cache_key_placement"):
            context = context_at(cause, contexts)
            if context is None and (cause.fix_is_final or is_eager_op(r.family)):
                continue  # devices seen to differ keep their row; an eager op is keyed on more than its trace
            if context is not None:
                cause.summary += f"; compiled under the config context JAX names at this line (JAX: \"{context.text}\")"
                cause.reason = "tracing_context"
            choice = decide(cause, FixContext(producer="jax", hlo_identical=True, placement=context is None,
                                              context_setting=context.setting if context else "",
                                              context_line=context.short() if context else ""))
            cause.fix, cause.fix_rule, cause.fix_is_final = choice.text, choice.rule.name, True
