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

Facts are typed here; the words of the fixes are rows of :mod:`hlodiff.diff.fix_rules` (kinds ``shape``, ``dtype``,
``python_value``, ``mode``, ``guard``, ``graph_break`` with the fact ``dynamo``).
"""

from __future__ import annotations

import re

from hlodiff.diff.causes import _SLICE_KEYS
from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.dumps.dynamo_log import GAVE_UP, DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.errors import InputWarning
from hlodiff.explain.dynamo_bridge_words import bridge_consequences, quiet_bridge_hints, tell_first_calls
from hlodiff.explain.dynamo_bridge import bridge_ops, bridge_run, tell_bridge_own
from hlodiff.explain.dynamo_break_calls import break_call_facts, entered_lines
from hlodiff.explain.dynamo_every_step import fixed_set_pairs
from hlodiff.explain.dynamo_past_limit import past_limit_graphs, tell_past_limit
from hlodiff.explain.dynamo_eager_break import eager_break_graphs, tell_eager_break
from hlodiff.explain.dynamo_types import (DynamoFindings, DynamoRecompile, GraphBreakFinding, choose_fix,
                                          compiled_name, int_recompiled_once, tell_with_fact, varying_sizes,
                                          wrapped_module)
from hlodiff.explain.dynamo_xla import (_mostly_alike, first_call_syncs, follows_expected, inference_variant,
                                        padded_buckets, paired_graphs, sized, xla_sizes)
from hlodiff.explain.dynamo_random_inputs import random_inputs
from hlodiff.explain.dynamo_short_batch import full_size_again
from hlodiff.explain.dynamo_compiled_only import tell_unsequenced, unsequenced
from hlodiff.explain.dynamo_reset import cache_resets
from hlodiff.explain.dynamo_stance import stance_recompiles
from hlodiff.explain.dynamo_guard_kinds import _after_data_dependent, _classify, _is_data_dependent, assigned_on_line, bounds_loop, \
    break_before_resume, is_data_dependent_branch, python_random_call, is_scalar_read, what_breaks, \
    sizes_on_line
from hlodiff.hlo.library_modules import cut_module_path
from hlodiff.hlo.model import SourceFrame


# -- reading and merging the logs -------------------------------------------------------------------------------------


def read_logs(logs: list[DynamoLog]) -> DynamoLog | None:
    """All Dynamo logs given or found (read by the run's evidence, :meth:`hlodiff.dumps.evidence.Run.read_dynamo`),
    merged by compile id: a TORCH_TRACE log first (it holds the call stacks), a TORCH_LOGS text log fills what it
    lacks."""
    logs = list(logs)
    logs.sort(key=lambda log: log.form != "trace")
    if not logs:
        return None
    merged = DynamoLog(logs[0].path, logs[0].form)
    for log in logs:
        for c in log.compiles:
            have = next((m for m in merged.compiles if m.compile_id == c.compile_id), None)
            if have is None:
                merged.compiles.append(c)
                continue
            have.function = have.function or c.function
            have.definition = have.definition or c.definition
            have.call = have.call or c.call
            have.callee = have.callee or c.callee
            have.failures = have.failures or c.failures
        if not merged.graph_breaks:
            merged.graph_breaks = list(log.graph_breaks)
        merged.limit_hits += [hit for hit in log.limit_hits if hit not in merged.limit_hits]
        merged.restarts += [r for r in log.restarts if r not in merged.restarts]
        merged.stance_raises += [r for r in log.stance_raises if r not in merged.stance_raises]
    merged.compiles.sort(key=lambda c: (c.frame, c.attempt))
    return merged


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
    calls = [c for c in log.compiles if c.recompiled]
    found.recompiles = [_recompile(c, log, position == len(calls) - 1) for position, c in enumerate(calls)]
    varying_sizes(found.recompiles)
    int_recompiled_once(found.recompiles)
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
        if "python_int" in r.facts and r.xla == "compiled" and r.difference_kind == "shape":
            r.facts = r.facts | {"sets_shape"}  # the int sets a size: XLA compiled a graph of another shape for it
    _shape_setters_alike(found.recompiles)
    for r in found.recompiles:
        choose_fix(r)
    found.recompiles += stance_recompiles(log)  # refused by the stance: nothing compiled, the program stopped
    found.xla_sizes = xla_sizes(found, traced, xla_recompiles)
    found.xla_size_graphs = [x.graph.ref for x in xla_recompiles if found.xla_sizes and sized(x, found)]
    found.xla_graphs = _graphs_by_compile(found, traced)
    found.graph_breaks = breaks_of(log)
    found.resets = cache_resets(log.restarts)
    found.first_call_syncs = first_call_syncs(explanation, found)
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


def recompiles_of(log: DynamoLog) -> list[DynamoRecompile]:
    """Dynamo's recompilations alone, each with its kind and fix (no XLA side: the pytest plugin's check)."""
    calls = [c for c in log.compiles if c.recompiled]
    found = [_recompile(c, log, position == len(calls) - 1) for position, c in enumerate(calls)]
    varying_sizes(found)
    int_recompiled_once(found)
    for r in found:
        choose_fix(r)
    return found


def _has_backward(bridge, cause_of) -> bool:
    """AOTAutograd's backward graph is compiled by the bridge too: its stacks pass through the backward wrapper."""
    return any(any("_backward" in (f.function or "") for f in g.record.frames) for g in bridge)


def _absolute(source: SourceFrame | None, definition: SourceFrame | None) -> SourceFrame | None:
    """A guard's source as Dynamo's trace prints it, relative to a folder above the script
    (``notes/review5/scripts/t.py:10``), made whole from the compiled function's definition in the same file
    (``/work/notes/review5/scripts/t.py``): the printed path is the user's to open (review 5, F4)."""
    if source is None or definition is None or not source.file or source.file.startswith("/") \
            or ":" in source.file[:3] or not definition.file.endswith("/" + source.file):
        return source
    return SourceFrame(definition.file, source.line, source.function)


def _recompile(c: DynamoCompile, log: DynamoLog, last: bool) -> DynamoRecompile:
    failure = c.failures[0] if c.failures else GuardFailure(None, "a guard failed (Dynamo's log names none)")
    kind, subject, seen, facts = _classify(failure.guard)
    if last and "leading_dim_shrank" in facts:
        facts.add("last_call")
    if "python_int" in facts and bounds_loop(subject, failure.code):
        facts.add("sets_loop")  # the int bounds a loop on its guard's line: it sets how many times the body is traced
    if "python_int" in facts and sizes_on_line(subject, failure.code):
        facts.add("sets_shape")  # the int is a size on its guard's line (torch.split's sizes, x[:n]): a shape
    if kind == "python_value" and assigned_on_line(subject, failure.code):
        facts.add("assigned_in_call")  # the compiled function changes the value it guarded (a counter kept inside)
    if kind == "python_value" and (subject or "").startswith("___stack") \
            and (made := break_before_resume(c, log)) is not None and made.at is not None:
        # a value the code before a graph break made outside the graph (a clock read), the rest specialised on it
        facts.add("resume_stack_value")
        if is_scalar_read(made):
            # the number is a tensor's value read into Python (float(t)): it follows the data, and need not be read
            facts.add("tensor_read")
            seen = f"{seen}, a tensor's value read as a Python number at {made.at.short()}, where Dynamo breaks the graph"
        else:
            seen = f"{seen}, made by {what_breaks(made)} at {made.at.short()}, where Dynamo breaks the graph"
    if kind == "shape" and (subject or "").startswith("___stack") and _after_data_dependent(c, log):
        facts.add("data_dependent_size")  # the value made before a break at a data-dependent op: its size follows the data
    definition = None if wrapped_module(c) else c.definition
    source = _absolute(failure.source, c.definition)
    if source is not None and cut_module_path(source.file):
        source = None  # the guard names torch's own line, its path cut short (nn/modules/dropout.py:73): no user line
    location = c.call or source or definition
    located = ("call" if c.call else "guard" if source else "definition" if definition
               else "wrapper" if wrapped_module(c) else None)
    if location is not None and location.is_library and not c.call:
        # Dynamo compiled library code (torch.compile(opt.step): torch's step in sgd.py) and its guard names a
        # library line; the user's line that reached it is the one the graph breaks' tracebacks share, if one
        users = {(b.call.file, b.call.line): b.call for b in log.graph_breaks
                 if b.call is not None and not b.call.is_library}
        if len(users) == 1:
            location, located = next(iter(users.values())), "call"
    return DynamoRecompile(c.compile_id, compiled_name(c), kind, failure, location, subject,
                           facts=frozenset(facts), seen=seen, located=located)


_OPTIMIZER_CALL = re.compile(r"`Optimizer\.(?:zero_grad|step)`")
"""A graph break at the optimizer's own method (``the function `Optimizer.zero_grad` should not be traced``): the
training step is inside the compiled function, as at ``loss.backward()``."""


def breaks_of(log: DynamoLog) -> list[GraphBreakFinding]:
    """One finding per line Dynamo broke at (or per user line that entered library code a table knows), with its fix."""
    by_line: dict[tuple, list[GraphBreak]] = {}
    entered = entered_lines(log.graph_breaks)  # library breaks a user line inside the compiled code ran into
    for b in log.graph_breaks:
        key = (b.at.file, b.at.line) if b.at else (b.reason,)
        if key in entered:
            key = ("entered", entered[key].file, entered[key].line)
        by_line.setdefault(key, []).append(b)
    resumes = sum(1 for c in log.compiles if c.resume)
    found = []
    for group in by_line.values():
        first = group[0]
        graphs = 1 + max(resumes, len(group))
        facts = {"dynamo", "raised"} if first.raised else {"dynamo"}
        if first.raised:
            graphs = 0  # Dynamo raised (fullgraph=True): no graph was made, the program stopped
        if "print" in (first.explanation or "") or "`print`" in first.reason:
            facts.add("op:print")
        elif "Tensor.item()" in first.reason or "Tensor.item()" in (first.explanation or ""):
            facts.add("op:item")
        elif first.reason == GAVE_UP:
            facts.add("gave_up")  # the backend failed: the whole function runs eagerly, every call
        elif is_data_dependent_branch(first):
            facts.add("op:data_dependent_branch")  # an `if` on a tensor (review 17, F2): a branch, not a size
        elif _is_data_dependent(first):
            facts.add("op:data_dependent")
        elif "Tensor.backward()" in first.reason or _OPTIMIZER_CALL.search(first.explanation or ""):
            facts.add("op:train_step")  # backward() or the optimizer inside the compiled function (d17_train_step_backward)
        elif python_random_call(first) is not None:
            facts.add("op:python_random")  # a draw of Python's random module (a LayerDrop): d20_layerdrop_random
        location = first.at
        facts.update(*(break_call_facts(b) for b in group))
        at = first.at
        if first.at is not None and (first.at.file, first.at.line) in entered:
            # the user's line in the compiled code ran a library call a table knows (a sync): that line is theirs to change
            location = entered[(first.at.file, first.at.line)]
            at = ", ".join(dict.fromkeys(b.at.short() for b in group if b.at is not None))
        elif first.at is not None and first.at.is_library and first.call is not None and not first.call.is_library:
            # inside torch's own code (torch.compile(opt.step): the optimizer's graph_break(), a wrapper Dynamo
            # skips): no line of the user's breaks it; their call is the line, the library frame is what was seen
            facts.add("in_library")
            location = first.call
        rule = choose("graph_break", frozenset(facts))
        seen = (str(graphs) if "op:print" in facts
                else python_random_call(first) if "op:python_random" in facts
                else f"{what_breaks(first)}: {first.reason}" if "op:train_step" in facts
                and what_breaks(first) != first.reason
                else f"{first.reason}, at {first.at.short()}" if "in_library" in facts
                else f"{first.reason}, at {at}" if "op:xla_sync" in facts
                else first.explanation or "the backend failed" if "gave_up" in facts else first.reason)
        finding = GraphBreakFinding(first.reason, first.explanation, location, first.call, len(group), graphs,
                                    raised=first.raised)
        finding.fix, finding.fix_rule = FixChoice(rule, {"seen": seen}).text, rule.name
        found.append(finding)
    return found


def bridge_without_log(explanation, events: dict) -> DynamoFindings | None:
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
    quiet_bridge_hints(explanation, found)
    tell_bridge_own(explanation, found)
    tell_first_calls(explanation, found)
    _tell_compilations_only(explanation, found)
    return found


def explain_dynamo(dynamo_logs: list[str], explanation, events: dict,
                   warnings: list[InputWarning], *, logs: list[DynamoLog]) -> DynamoFindings | None:
    """The findings for a run with Dynamo logs (``dynamo_logs`` their paths, ``logs`` them read), or None when none
    were given or found."""
    if not dynamo_logs:
        return bridge_without_log(explanation, events)
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


def _shape_setters_alike(recompiles) -> None:
    """An int guard of one frame that set a shape once sets it on every value: a recompilation of the same frame
    for the same guarded int whose XLA graph was a cache hit (or not joined to one) gets the fact ``sets_shape``
    too, so it is not told "pass it as a tensor", which a shape cannot be (Dynamo round 8, dyn_grid_tuple: 0/1
    compiled a new reshape for grid[0], 0/2 for another grid[0] was counted as XLA's cache hit)."""
    setters = {(r.compile_id.split("/")[0], r.subject) for r in recompiles if "sets_shape" in r.facts and r.subject}
    for r in recompiles:
        if "python_int" in r.facts and (r.compile_id.split("/")[0], r.subject) in setters:
            r.facts = r.facts | {"sets_shape"}

