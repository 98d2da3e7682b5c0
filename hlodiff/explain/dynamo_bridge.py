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
    return _bridge_sources({m.group(1).replace("\\", "/") for comp in module.computations
                            for ins in comp.instructions
                            if (m := _SOURCE_FILE.search(ins.attrs.get("metadata", ""))) is not None})


def bridge_text(record, text: str) -> bool:
    """:func:`bridge_module` from the graph's HLO text, unparsed (live reads each compiled graph's facts without
    keeping its module): the ``source_file`` of every op's metadata."""
    if record.frames:
        return False
    return _bridge_sources({f.replace("\\", "/") for f in _SOURCE_FILE.findall(text)})


def _bridge_sources(sources: set[str]) -> bool:
    # an FX graph the bridge runs dispatches every op through torch's OpOverload (torch/_ops.py); eager user code
    # names the user's file
    return any("torch_xla/_dynamo/" in f for f in sources) or (
        bool(sources) and all(f.endswith("/torch/_ops.py") for f in sources))


_SOURCE_FILE = re.compile(r'source_file="([^"]*)"')


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
