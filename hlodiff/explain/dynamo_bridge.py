"""Graphs torch_xla's Dynamo bridge runs on its own (``torch.compile(backend="openxla")``).

While Dynamo compiles and calls a graph, ``torch_xla/_dynamo/dynamo_bridge.py`` syncs pending tensors, executes the
FX graph once to compile it, and runs the compiled graph on every call. torch_xla's debug log then says "most likely
user code trying to access tensor value before torch_xla.sync" and the stacks it records end inside the bridge,
AOTAutograd and Dynamo (torch_xla keeps only 8 frames): an execution with no sync frame, which for a lazy program
means an early ``.item()``. Here it means nothing of the kind, so such graphs are never a cut step, and no frame of
theirs is ever the user's line.
"""

from __future__ import annotations

import re

from hlodiff.diff.fix_rules import EXPECTED

BRIDGE_PARTS = ("torch_xla/_dynamo/", "torch/_dynamo/", "torch/_functorch/_aot_autograd/",
                "torch/_dynamo/backends/torchxla.py")
"""Files whose presence in a stack says the graph was run by Dynamo's machinery, not by a read in user code."""
BRIDGE_CAUSES = ("dynamo is compiling", "dynamo is executing", "when dynamo processing")
"""torch_xla's own words (PT_XLA_DEBUG) for graphs the bridge compiles and runs."""


def is_bridge_frame(frame) -> bool:
    path = frame.file.replace("\\", "/")
    return any(part in path for part in BRIDGE_PARTS)


def bridge_run(frames, debug_cause: str | None = None) -> bool:
    """The graph was compiled or executed by the Dynamo bridge (its stack passes through it, or torch_xla's
    debug log says so)."""
    if debug_cause and any(words in debug_cause for words in BRIDGE_CAUSES):
        return True
    return any(is_bridge_frame(f) for f in frames or ())


def bridge_compiling(frames) -> bool:
    """The bridge's compile path ran this graph: ``extract_compiled_graph`` syncs pending tensors while it turns a
    new Dynamo graph into XLA graphs (torch_xla: "torch_xla.sync when dynamo processing input graphs"), so the graph
    runs in a step Dynamo compiled in, whether XLA compiled it or found it cached. The bridge's sync of a call's
    inputs (``optimized_mod``) runs on every call and is not this."""
    return any((f.function or "").startswith("extract_") and "torch_xla/_dynamo/" in f.file.replace("\\", "/")
               for f in frames or ())


def bridge_ops(g) -> bool:
    """A dumped graph with no stack and no debug log whose ops name the bridge's file as their source (review F5:
    a dump with XLA_HLO_DEBUG only: the bridge's graphs carry ``source_file=.../torch_xla/_dynamo/...``)."""
    return bridge_module(g.record, g._module)


def bridge_module(record, module) -> bool:
    """:func:`bridge_ops` of a graph's ``record`` and its parsed ``module`` (None when not parsed: not known)."""
    if record.frames or module is None:
        return False
    sources = {m.group(1).replace("\\", "/") for comp in module.computations for ins in comp.instructions
               if (m := _SOURCE_FILE.search(ins.attrs.get("metadata", ""))) is not None}
    # an FX graph the bridge runs dispatches every op through torch's OpOverload (torch/_ops.py); eager user code
    # names the user's file
    return any("torch_xla/_dynamo/" in f for f in sources) or (
        bool(sources) and all(f.endswith("/torch/_ops.py") for f in sources))


_SOURCE_FILE = re.compile(r'source_file="([^"]*)"')


def tell_bridge_own(explanation, found) -> None:
    """Without Dynamo's log, the bridge's graphs far from their closest earlier graph (its forward and backward run
    in turn, its warm-up variants) are counted as its own: their words say so too (``dynamo_bridge_own``), as with
    the log, instead of a Python `if` or "sync at the same points every step" for two programs that were never one
    (Dynamo round 11: d11_inplace_stats_control, d11_device_preproc_control). A row already expected stays."""
    from hlodiff.explain.dynamo_types import tell_with_fact  # families imports this module: no cycle at load

    own = set(found.bridge_recompilations)
    for x in explanation.recompilations:
        if x.graph.ref in own and x.causes and x.causes[0].fix_rule not in EXPECTED:
            tell_with_fact(x, "bridge_graph", {})


RESUME_PREFIX = "torch_dynamo_resume_in_"
"""Dynamo's name for the function it makes of the code after a graph break (``torch_dynamo_resume_in_forward_at_11``):
a frame of its own, compiled to graphs of its own."""


def resume_frame(g) -> str:
    """The Dynamo resume functions the graph's ops were traced in (``torch_dynamo_resume_in_forward_at_11``), from
    the stacks its HLO proto lends (a cache hit: those of the graph it reuses); "" for the code before the first
    break, or when no stack says. Review 10 F5: the graphs before and after a `print()` break are two programs,
    each compiled once, not one program "alternating" or "recompiled" 12 % alike."""
    module = getattr(g, "_module", None)
    if module is None:
        first = getattr(g, "_facts", None)
        module = getattr(first, "_module", None)
    stacks = getattr(module, "full_stacks", None) if module is not None else None
    if not stacks:
        return ""
    names = {f.function for stack in stacks.values() for f in stack
             if f.function and f.function.startswith(RESUME_PREFIX)}
    return ",".join(sorted(names))


_TOLD_AS_CAUSES = ("alternating", "periodic", "recurring", "one-off", "switched", "last only", "compilations", "dump")
"""Pattern names whose words (and the kind after them: "(dtype)", "(inputs at t.py:9)") read as a cause to look for."""


def bridge_own_patterns(explanation) -> None:
    """Review 11, F7: a family of the bridge's graphs whose every recompilation is told as the bridge's own or as
    following Dynamo's expected recompilation (an expected row), each variant compiled once, was worded
    "alternating: ... switches between 2 graphs (A,B,A,B) (inputs at t.py:18)" or "periodic ... (dtype)" in a clean
    report: words a user greps as causes. Its line says what it is instead; the pattern's facts (its name, for the
    exit status and ``--json``'s ``pattern``) stay."""
    from hlodiff.explain.pattern_words import sequence_text

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
