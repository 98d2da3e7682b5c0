"""What the explanation says of the bridge's XLA recompilations once Dynamo's findings are known: their causes'
fixes follow from the Dynamo recompilation behind them (or are the bridge's own: its backward, the sync of the
call's inputs), the first compiled call's cut step is expected, and a cause with no user line points at the line
Dynamo's log names (the run's hint to capture live-tensor reports, which cannot reach through the bridge, goes).
Without Dynamo's log, the bridge's own graphs are still told as its own (:func:`tell_bridge_own`), and a family of
them is not worded as a pattern whose name reads as a cause (:func:`bridge_own_patterns`). Which graphs are the
bridge's is a fact of :mod:`hlodiff.explain.dynamo_bridge`, which the families read: it imports nothing of the story.

The findings are :mod:`hlodiff.explain.dynamo`'s; the fixes' words are rows of :mod:`hlodiff.diff.fix_rules`.
"""

from __future__ import annotations

from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.explain.dynamo_types import DynamoFindings
from hlodiff.explain.dynamo_recompile_fixes import tell_with_fact
from hlodiff.explain.pattern_words import sequence_text
from hlodiff.explain.rng_seed import seed_update_only


BRIDGE_HINT = ("the graph's frames end in torch.compile's XLA bridge; Dynamo's log names your line (above)")
"""For a cause of the bridge's XLA graphs with no user line: where the line is (a live-tensor report would not
reach it: the bridge's stacks never leave torch)."""


BRIDGE_HINT_NO_LINE = ("the graph's frames end in torch.compile's XLA bridge, and Dynamo's log names no line of "
                       "yours for it either (its hint above says which capture records the call)")
"""The same when the Dynamo recompilation behind the graph has no user line either (a compiled nn.Module: Dynamo
names torch's wrapper): "names your line (above)" would contradict the hint printed above it (review 6, F6b)."""


def _bridge_hint(found: DynamoFindings, ref: str) -> str:
    behind = [r for r in found.recompiles if r.difference_graph == ref]
    if behind and all(r.location is None or r.location.is_library for r in behind):
        return BRIDGE_HINT_NO_LINE
    return BRIDGE_HINT


def quiet_bridge_hints(explanation, found: DynamoFindings) -> None:
    """The bridge's XLA recompilations are told by Dynamo's reason: their causes point there, and the run's hint to
    capture live-tensor reports (which cannot reach lines through the bridge) goes when only they lack a line."""
    told = set(found.bridge_recompilations)
    unknown = [r for r in explanation.recompilations if any(not c.locations for c in r.causes)]
    for r in explanation.recompilations:
        if r.graph.ref in told:
            for cause in r.causes:
                if not cause.locations:
                    cause.hint = _bridge_hint(found, r.graph.ref)
    if unknown and all(r.graph.ref in told for r in unknown):
        explanation.hints[:] = [h for h in explanation.hints if "--tensors-report" not in h
                                and not h.startswith("source lines unknown")]


def tell_first_calls(explanation, found: DynamoFindings) -> None:
    """The first compiled call's cut step is counted as expected (``first_call_syncs``): its causes' words say so.
    A row of their own that is already expected (tensors made before the loop) says more and stays; any other
    ("a value is kept on some steps only") sent users looking for a metric that is not there."""
    first_calls = set(found.first_call_syncs)
    for x in explanation.recompilations:
        if x.graph.ref in first_calls:
            first_call_words(x)


def first_call_words(x) -> None:
    """One recompilation that is the first compiled call's cut step: its causes get ``dynamo_first_call_sync``
    unless their row is already an expected one."""
    if x.causes and x.causes[0].fix_rule not in EXPECTED:
        rule = choose(x.causes[0].kind, frozenset({"dynamo", "first_call_sync", f"is:{x.causes[0].kind}"}))
        for cause in x.causes:
            cause.fix, cause.fix_rule = FixChoice(rule, {}).text, rule.name


def bridge_consequences(explanation, found: DynamoFindings) -> None:
    """The fixes of the bridge's XLA recompilations, once Dynamo's log says what Dynamo did (review F5: a dtype
    cast, a metric and gradient accumulation were told for graphs the bridge made). A graph the bridge compiled
    for a Dynamo recompilation follows from it; one it compiled for Dynamo's first graph (its backward, the sync
    of the call's inputs) is the bridge's own. Sizes Dynamo traced once and XLA compiles per size keep their own
    finding (``xla_sizes``): there the XLA graphs are the story."""
    told = set(found.bridge_recompilations) - set(found.xla_size_graphs)
    if not told:
        return
    owner = {ref: cid for cid, refs in found.xla_graphs.items() for ref in refs}
    by_id = {r.compile_id: r for r in found.recompiles}
    unexpected = any(not r.expected for r in found.recompiles)
    position = {g.ref: i for i, g in enumerate(explanation.graphs)}
    joined = {d.difference_graph: d for d in found.recompiles if d.difference_graph}
    first_recompiled = min((position[d] for d in joined if d in position), default=0)
    for r in explanation.recompilations:
        if r.graph.ref not in told:
            continue
        same = joined.get(r.graph.ref)
        if same is not None and r.causes and r.causes[0].kind == same.kind:
            # the joined graph tells the guard's own change (a new size seen from both sides): its story, in the
            # Dynamo finding's words (review 14, F3: "an index tensor made on the host ... changes length" under
            # "forward is called with new sizes": one cause, two fixes)
            if same.fix and not same.expected:
                r.causes[0].fix, r.causes[0].fix_rule = same.fix, same.fix_rule
            continue
        dyn = by_id.get(owner.get(r.graph.ref))
        # before the graph XLA compiled for its own recompile, or, owner unknown, before the first graph XLA
        # compiled for any Dynamo recompile: a graph of the first compile
        first_compile = position.get(r.graph.ref, 0) < (
            position.get(dyn.difference_graph, len(position)) if dyn is not None else first_recompiled)
        if first_compile:
            dyn = None  # before the graph XLA compiled for it: the first compile's (a TORCH_LOGS log omits 0/0)
        facts = {"dynamo", "bridge_graph"}
        if dyn is not None:
            facts |= {"follows_dynamo"} | ({"dynamo_expected"} if dyn.expected else set())
        elif unexpected and not first_compile:
            # a graph of the first compile (its backward, the input sync) is the bridge's own whatever a later
            # recompile was: review 22, F5 (tc2 told them "recompiled ... act on Dynamo's recompilation above",
            # tc1 "expected" for the same graphs, only because tc1's recompile was expected)
            facts.add("dynamo_unexpected")
        elif found.xla_sizes:
            facts.add("sizes_per_call")  # review 9 F6 (c2): the input sync at each new size, beside xla_per_size
        args = {"cid": dyn.compile_id if dyn else "?", "guard": dyn.guard.guard if dyn else "?"}
        for cause in r.causes:
            # review 10 F1: the call's input, drawn on the device, one seed update longer than last call's
            seed = {"rng_seed_update"} if seed_update_only(r, cause) else set()
            rule = choose(cause.kind, frozenset(facts | seed | {f"is:{cause.kind}"}))
            cause.fix, cause.fix_rule = FixChoice(rule, args).text, rule.name


def tell_bridge_own(explanation, found) -> None:
    """Without Dynamo's log, the bridge's graphs far from their closest earlier graph (its forward and backward run
    in turn, its warm-up variants) are counted as its own: their words say so too (``dynamo_bridge_own``), as with
    the log, instead of a Python `if` or "sync at the same points every step" for two programs that were never one
    (Dynamo round 11: d11_inplace_stats_control, d11_device_preproc_control). A row already expected stays."""
    own = set(found.bridge_recompilations)
    for x in explanation.recompilations:
        if x.graph.ref in own and x.causes and x.causes[0].fix_rule not in EXPECTED:
            tell_with_fact(x, "bridge_graph", {})


_TOLD_AS_CAUSES = ("alternating", "periodic", "recurring", "one-off", "switched", "last only", "compilations", "dump")
"""Pattern names whose words (and the kind after them: "(dtype)", "(inputs at t.py:9)") read as a cause to look for."""


def bridge_own_patterns(explanation) -> None:
    """Review 11, F7: a family of the bridge's graphs whose every recompilation is told as the bridge's own or as
    following Dynamo's expected recompilation (an expected row), each variant compiled once, was worded
    "alternating: ... switches between 2 graphs (A,B,A,B) (inputs at t.py:18)" or "periodic ... (dtype)" in a clean
    report: words a user greps as causes. Its line says what it is instead; the pattern's facts (its name, for the
    exit status and ``--json``'s ``pattern``) stay."""
    found = explanation.dynamo
    facts = getattr(explanation, "pattern_facts", None) or []
    if found is None or len(facts) != len(explanation.families):
        return
    bridge, told = set(found.bridge_compilations), set(found.bridge_recompilations)
    of_family: dict[int, list] = {}
    for r in explanation.recompilations:
        of_family.setdefault(id(r.family), []).append(r)
    unsequenced = set(found.compilations_only)
    for i, (family, p) in enumerate(zip(explanation.families, facts)):
        own = of_family.get(id(family), [])
        expected_here = unsequenced | set(found.follows_expected) | set(found.first_call_syncs)
        if p.name in _TOLD_AS_CAUSES and any(r.graph.ref in unsequenced for r in own) and all(
                r.graph.ref in expected_here for r in own):
            # review 11 F1: compilations only, steps unknown; the kind after the letters read as a cause
            explanation.patterns[i] = (f"{len(family.compiled)} compilations of {p.family} "
                                       f"({sequence_text(p.letters)}): on which steps is not known without "
                                       f"torch_xla's execution log; expected if in the first steps")
            continue
        if p.name not in _TOLD_AS_CAUSES or not own or not all(g.ref in bridge for g in family.compiled):
            continue
        if not all(r.graph.ref in told and r.causes and r.causes[0].fix_rule in EXPECTED for r in own):
            continue
        variants = len(set(p.letters)) or p.variants
        if len(family.compiled) != variants:  # a graph compiled twice is more than the bridge's own
            continue
        explanation.patterns[i] = (f"the bridge's own: {p.family} runs {variants} graphs of its own (Dynamo's "
                                   f"forward and backward, the sync of the call's inputs; {sequence_text(p.letters)}), "
                                   f"each compiled once")
