"""Dynamo's recompilations joined to the XLA graphs, told as the user of ``torch.compile(backend="openxla")`` sees
them.

Two levels compile in such a program: Dynamo traces the Python function into an FX graph (guarded: a failed guard
means a new trace, compile id ``0/1``), and torch_xla's bridge compiles each FX graph, and the syncs it does on its
own, to XLA. What changed for Dynamo is in Dynamo's log (:mod:`hlodiff.dumps.dynamo_log`); what changed in the
graphs is in the XLA dump. This module takes the reason from Dynamo's log (the failed guard, at the user's call of
the compiled function) and the difference from the graphs, and says which level paid:

* a Dynamo recompilation whose XLA graph was already compiled (torch_xla passes Python scalars as device data):
  only Dynamo paid;
* XLA compilations with no Dynamo recompilation behind them: the bridge's own graphs (the backward, its syncs while
  compiling, its warm-up): expected;
* graph breaks: a finding of their own (how many, why, the user's line), never a recompilation.

What Dynamo's log says alone (its recompilations with their guards and fixes, its graph breaks) is read by
:mod:`hlodiff.explain.dynamo_log_findings`; this module joins it to the graphs. Facts are typed; the words of the
fixes are rows of :mod:`hlodiff.diff.fix_rules` (kinds ``shape``, ``dtype``, ``python_value``, ``mode``, ``guard``,
``graph_break`` with the fact ``dynamo``).
"""

from __future__ import annotations

from hlodiff.diff.causes import _SLICE_KEYS
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog
from hlodiff.errors import InputWarning
from hlodiff.explain.dynamo_bridge_words import (bridge_consequences, quiet_bridge_hints, tell_bridge_own,
                                                 tell_first_calls)
from hlodiff.explain.dynamo_bridge import bridge_ops, bridge_run
from hlodiff.explain.dynamo_every_step import fixed_set_pairs
from hlodiff.explain.dynamo_log_findings import breaks_of, read_logs, recompile_of, recompiled_calls
from hlodiff.explain.dynamo_past_limit import past_limit_graphs, tell_past_limit
from hlodiff.explain.dynamo_eager_break import eager_break_graphs, tell_eager_break
from hlodiff.explain.dynamo_types import DynamoFindings
from hlodiff.explain.dynamo_recompile_fixes import choose_fix, float_recompiled_once, int_recompiled_once, tell_with_fact, varying_sizes
from hlodiff.explain.dynamo_late_switch import late_switches
from hlodiff.explain.dynamo_xla import (UNRELATED, _mostly_alike, first_call_syncs, follows_expected, inference_variant,
                                        padded_buckets, paired_graphs, sized, xla_sizes)
from hlodiff.explain.dynamo_random_inputs import random_inputs
from hlodiff.explain.dynamo_grown_cat import mark_grown_by_cat
from hlodiff.explain.dynamo_short_batch import full_size_again
from hlodiff.explain.dynamo_compiled_only import tell_unsequenced, unsequenced
from hlodiff.explain.dynamo_reset import cache_resets
from hlodiff.explain.dynamo_stance import stance_recompiles
from hlodiff.hlo.model import SourceFrame


# -- the join --------------------------------------------------------------------------------------------------------


def findings(log: DynamoLog, paths: list[str], explanation, events: dict) -> DynamoFindings:
    """Dynamo's compiles and breaks, joined to the explanation's XLA graphs (``events``: PT_XLA_DEBUG compilations
    by graph hash)."""
    found = DynamoFindings(paths, list(log.compiles))
    cause_of = {h: e.cause for h, e in events.items()}
    bridge = [g for g in explanation.graphs if g.compiled and (bridge_run(g.record.frames,
                                                                          cause_of.get(g.record.graph_hash))
                                                               or bridge_ops(g))]
    found.bridge_compilations = [g.ref for g in bridge]
    bridge_refs = set(found.bridge_compilations)
    xla_recompiles = [r for r in explanation.recompilations if r.graph.ref in bridge_refs]
    found.bridge_recompilations = [r.graph.ref for r in xla_recompiles]
    traced = [c for c in log.compiles if not c.resume]
    # Dynamo graphs that reached XLA as a compilation "dynamo is compiling a FX graph": fewer than Dynamo's compiles
    # (forward graphs; AOTAutograd's backward compiles later, with its own) means XLA reused graphs.
    found.fx_compilations = [g.ref for g in bridge if "dynamo is compiling" in (cause_of.get(g.record.graph_hash) or "")]
    fx = len(found.fx_compilations)
    backward = _has_backward(bridge, cause_of)
    # a TORCH_LOGS=recompiles log names only the recompilations: frame F's first compile F/0 is there all the same
    # (dyn_global_cfg: 5 compiles, not 4); the attempt that hit the recompile limit compiled nothing
    gave_up = {cid for cid, _ in log.limit_hits}
    firsts = {c.frame for c in traced if c.recompiled} - {c.frame for c in traced if not c.recompiled}
    made = sum(1 for c in traced if c.compile_id not in gave_up) + len(firsts)
    dynamo_graphs = made * (2 if backward else 1)
    found.cache_hits = max(0, dynamo_graphs - fx) // (2 if backward else 1) if fx else 0
    calls = recompiled_calls(log)
    found.recompiles = [recompile_of(c, log, position == len(calls) - 1) for position, c in enumerate(calls)]
    varying_sizes(found.recompiles)
    int_recompiled_once(found.recompiles)
    float_recompiled_once(found.recompiles)
    limited = {cid.split("/")[0] for cid, _ in log.limit_hits}
    limits = {cid.split("/")[0]: n for cid, n in log.limit_hits}
    for r in found.recompiles:
        if r.compile_id.split("/")[0] in limited:  # this frame ran past Dynamo's recompile limit
            r.facts = r.facts | {"limit_hit"}
            r.limit = limits[r.compile_id.split("/")[0]]
    # XLA reused graphs for the last ones (new graphs come first: its cache only grows), and the bridge's XLA
    # recompilations in compile order belong to the Dynamo recompilations that compiled: the last that many
    # (the first bridge graphs are the first Dynamo compile's forward, backward and syncs)
    # never more cache hits than recompilations: a compiled library method (torch.compile(opt.step)) breaks into
    # frames whose compiles reach XLA as fewer graphs than the count above assumes (dyn_sched_lr: 4 of 2)
    found.cache_hits = min(found.cache_hits, len(found.recompiles))
    paid = len(found.recompiles) - found.cache_hits
    for r in found.recompiles[paid:]:
        r.xla = "cache_hit"
    for r, x in zip(found.recompiles[:paid], paired_graphs(explanation, bridge_refs, xla_recompiles, paid)):
        lead = x.causes[0] if x.causes else None
        r.difference, r.difference_graph = (lead.summary if lead else None), x.graph.ref
        if x.diff is not None and x.diff.similarity < UNRELATED:
            # review 23 F6: a pair that shares almost nothing (3 % alike) is no change of one program: its first
            # difference (a constant's type) under Dynamo's guard is noise; the guard says what changed
            r.difference = None
        r.difference_kind = lead.kind if lead else None
        r.difference_rule = lead.fix_rule if lead else None
        if any(c.kind == "shape" or _slice_resized(c) for c in x.causes):  # a size changed with it
            r.difference_kind = "shape"
        r.xla = "compiled"
        if r.location is None and r.located == "wrapper":  # the XLA graph's own source lines are the user's then
            r.location = next((f for c in x.causes for f in c.locations if not f.is_library), None)
            r.located = "xla" if r.location is not None else r.located
        if r.located == "definition" and (call := caller_in_graph(x, r.function)) is not None:
            r.location, r.located = call, "xla_call"
        if "last_call" in r.facts and full_size_again(explanation, x):
            r.facts = (r.facts - {"last_call"}) | {"full_again"}  # the full size ran after it: no epoch's end
    padded_buckets(found.recompiles)
    for r in found.recompiles:
        if r.xla is None and fx:
            r.xla = "compiled"
        if r.facts & _NUMBERS and r.xla == "compiled" and r.difference_kind == "shape":
            r.facts = r.facts | {"sets_shape"}  # the number sets a size: XLA compiled a graph of another shape for it
    _shape_setters_alike(found.recompiles)
    mark_grown_by_cat(found.recompiles, explanation)  # round 31: a queue grown by cat
    for r in found.recompiles:
        choose_fix(r)
    found.recompiles += stance_recompiles(log)  # refused by the stance: nothing compiled, the program stopped
    found.xla_sizes = xla_sizes(found, traced, xla_recompiles)
    found.xla_size_graphs = [x.graph.ref for x in xla_recompiles if found.xla_sizes and sized(x, found)]
    found.xla_graphs = _graphs_by_compile(found, traced)
    found.graph_breaks = breaks_of(log)
    found.resets = cache_resets(log.restarts)
    found.first_call_syncs = first_call_syncs(explanation, found)
    late_switches(explanation, found.first_call_syncs)
    return found


def _graphs_by_compile(found: DynamoFindings, traced: list[DynamoCompile]) -> dict[str, list[str]]:
    """The bridge's XLA compilations cut in compile order at each paired recompilation's graph: the first Dynamo
    compile owns what comes before the first cut, each recompilation XLA paid for what follows its own; a cache
    hit owns none."""
    if not traced:
        return {}
    owned: dict[str, list[str]] = {c.compile_id: [] for c in traced}
    cuts = {r.difference_graph: r.compile_id for r in found.recompiles if r.difference_graph}
    owner = traced[0].compile_id
    for ref in found.bridge_compilations:
        owner = cuts.get(ref, owner)
        owned.setdefault(owner, []).append(ref)
    return owned


def _has_backward(bridge, cause_of) -> bool:
    """AOTAutograd's backward graph is compiled by the bridge too: its stacks pass through the backward wrapper."""
    return any(any("_backward" in (f.function or "") for f in g.record.frames) for g in bridge)


def bridge_without_log(explanation, events: dict, empty_logs: list[str] = ()) -> DynamoFindings | None:
    """A torch.compile run captured without Dynamo's log (an XLA dump alone, or TORCH_LOGS that printed nothing):
    the bridge's graphs still differ from one another in ops, inputs and outputs (a compiled function's forward and
    its backward run in turn, the bridge's warm-up variants), which the graphs alone would tell as a Python `if`.
    Those, far from their closest earlier graph (another program), are the bridge's own; a graph mostly alike an
    earlier one is that program changed (a new size, dtype, input or branch: a Dynamo retrace or a dynamic size,
    which only Dynamo's log tells apart) and stays XLA's story; the sentence says the log is missing. None for a run with no bridge graph."""
    cause_of = {h: e.cause for h, e in events.items()}
    if not any(g.compiled and (bridge_run(g.record.frames, cause_of.get(g.record.graph_hash)) or bridge_ops(g))
               for g in explanation.graphs):
        return None
    found = findings(DynamoLog("", "none"), [], explanation, events)
    fixed = fixed_set_pairs(explanation, set(found.bridge_compilations))
    changed = {r.graph.ref for r in explanation.recompilations
               if r.causes and _mostly_alike(r) and not inference_variant(r) and r.graph.ref not in fixed}
    found.bridge_recompilations = [ref for ref in found.bridge_recompilations if ref not in changed]
    found.no_log = True
    found.empty_log = next((p for p in empty_logs), None)
    quiet_bridge_hints(explanation, found)
    tell_bridge_own(explanation, found)
    tell_first_calls(explanation, found)
    _tell_compilations_only(explanation, found)
    return found


def explain_dynamo(dynamo_logs: list[str], explanation, events: dict,
                   warnings: list[InputWarning], *, logs: list[DynamoLog],
                   empty_logs: list[str] = ()) -> DynamoFindings | None:
    """The findings for a run with Dynamo logs (``dynamo_logs`` their paths, ``logs`` them read), or None when none
    were given or found."""
    if not dynamo_logs:
        return bridge_without_log(explanation, events, empty_logs)
    log = read_logs(logs)
    if log is None or (not log.compiles and not log.graph_breaks and not log.limit_hits
                       and not log.stance_raises):
        return bridge_without_log(explanation, events)
    found = findings(log, dynamo_logs, explanation, events)
    found.traced, found.limit_hits = log.form == "trace", list(log.limit_hits)
    quiet_bridge_hints(explanation, found)
    bridge_consequences(explanation, found)
    found.random_inputs, found.random_input_graphs = random_inputs(explanation, found, [c for c in log.compiles if not c.resume])
    found.follows_expected = follows_expected(explanation, found)
    position = {g.ref: i for i, g in enumerate(explanation.graphs)}
    for x in explanation.recompilations:
        if x.graph.ref not in found.follows_expected:
            continue
        # the Dynamo recompilation whose XLA graph came last before this one (the one the step changed with)
        before = [r for r in found.recompiles if r.difference_graph
                  and position.get(r.difference_graph, len(position)) < position.get(x.graph.ref, 0)]
        dyn = before[-1] if before else found.recompiles[-1]
        args = {"cid": dyn.compile_id, "guard": dyn.guard.guard}
        follows = "step_follows_expected" if dyn.expected else "step_follows_dynamo"
        tell_with_fact(x, follows, args)
    found.past_limit_graphs = [ref for ref in past_limit_graphs(explanation, found)
                               if ref not in found.follows_expected]
    tell_past_limit(explanation, found)
    found.eager_break_graphs = eager_break_graphs(explanation, found)
    tell_eager_break(explanation, found)
    tell_first_calls(explanation, found)
    _tell_compilations_only(explanation, found)
    return found


def _tell_compilations_only(explanation, found: DynamoFindings) -> None:
    """Review 11 F1: what a dump without execution log cannot tell from the bridge's warm-up
    (:mod:`hlodiff.explain.dynamo_compiled_only`)."""
    told = (set(found.bridge_recompilations) | set(found.first_call_syncs) | set(found.follows_expected)
            | set(found.past_limit_graphs) | set(found.eager_break_graphs))
    found.compilations_only = unsequenced(explanation, found, told)
    tell_unsequenced(explanation, found)


def caller_in_graph(x, function: str | None) -> SourceFrame | None:
    """The user's call of a compiled function, read from the stack of the XLA graph it compiled again: the first
    user frame that called a frame of that function (``forward`` at its decorator, called from the loop's line).
    Dynamo's text log names only the ``def`` and its trace no caller of a compiled function; the loop's call is
    where the new size or value came from (review 13, F4: the headline named the ``@torch.compile`` line)."""
    if not function:
        return None
    for cause in x.causes:
        for frame in cause.locations:
            if frame.function != function:
                continue
            caller = next((f for f in cause.callers.get(frame, ()) if not f.is_library and f.function != function),
                          None)
            if caller is not None:
                return caller
    return None


def _slice_resized(cause) -> bool:
    """A slice whose new bounds changed its length (``x[:n]``, ``torch.split(h, lengths)``: ``[0:8] -> [0:2]``) sets a
    size even where no shape cause follows it (a forward that reduces each piece: Dynamo round 11,
    d11_split_lengths); a slice moved at one length (``xs[:, t]``: ``[0:1] -> [1:2]``) is an index, not a size."""
    return cause.kind == "attribute" and any(
        "shape" in o.kinds and any(k in o.kinds for k in _SLICE_KEYS) for o in cause.origins)


_NUMBERS = frozenset({"python_int", "python_float"})
"""A guarded Python number: an int that slices or a float that scales (F.interpolate's scale_factor, round 31) may
set a size."""


def _shape_setters_alike(recompiles) -> None:
    """A number's guard (an int, a float) of one frame that set a shape once sets it on every value: a recompilation of the same frame
    for the same guarded int whose XLA graph was a cache hit (or not joined to one) gets the fact ``sets_shape``
    too, so it is not told "pass it as a tensor", which a shape cannot be (Dynamo round 8, dyn_grid_tuple: 0/1
    compiled a new reshape for grid[0], 0/2 for another grid[0] was counted as XLA's cache hit)."""
    setters = {(r.compile_id.split("/")[0], r.subject) for r in recompiles if "sets_shape" in r.facts and r.subject}
    for r in recompiles:
        if r.facts & _NUMBERS and (r.compile_id.split("/")[0], r.subject) in setters:
            r.facts = r.facts | {"sets_shape"}

