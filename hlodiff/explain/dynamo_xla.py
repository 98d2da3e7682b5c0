"""The XLA side of a torch.compile run where Dynamo's log says nothing or is missing: XLA compiling each concrete
size of a graph Dynamo traced once with a symbolic size (``dynamic=True``, ``mark_dynamic``), the call each bridge
graph ran at (for ``--warmup``), and the bridge's own graphs told apart from a changed program when no Dynamo log
was captured. Joined to Dynamo's findings by :mod:`hlodiff.explain.dynamo`."""

from __future__ import annotations

import re

from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.explain.dynamo import DynamoFindings, DynamoRecompile, choose_fix, findings, quiet_bridge_hints
from hlodiff.explain.dynamo_bridge import bridge_run


def call_positions(explanation) -> dict[str, int]:
    """XLA graph ref -> its position in its family: the bridge runs a compiled function's graph once per call, so
    the position is the call it ran at, or later when a family holds more than one graph per call (never earlier:
    --warmup then excuses less, never more). The run's step numbers do not serve: the bridge's executions have no
    sync of their own."""
    return {g.ref: i for family in explanation.families for i, g in enumerate(family.members)}


def xla_sizes(found: DynamoFindings, traced: list[DynamoCompile], xla_recompiles) -> list:
    """The bridge's XLA recompilations whose leading cause is a new input size and that no Dynamo recompilation
    explains (none paired with them, and Dynamo recompiled nothing for a size): Dynamo traced a symbolic size once,
    torch_xla compiles every concrete one. The bridge's own warm-up variants differ in ops and inputs, not sizes."""
    if any(r.kind == "shape" for r in found.recompiles) or not traced:
        return []
    grown = [x for x in xla_recompiles if sized(x, found)]
    if not grown:
        return []
    first = traced[0]
    sizes = []
    for x in grown:
        lead = x.causes[0]
        summary = lead.summary or ""
        change = summary.split(": ", 1)[-1].split(" (", 1)[0] if ": " in summary else summary
        sizes.append(re.sub(r"\{[^{}]*\}", "", change))  # the layouts say nothing here
    seen = ", ".join(dict.fromkeys(sizes))
    user = next((loc for x in grown for loc in x.causes[0].locations if not loc.is_library), None)
    location = first.call or user or first.definition
    r = DynamoRecompile(first.compile_id, first.function, "shape",
                        GuardFailure(None, "no guard failed: Dynamo's graph has a symbolic size, XLA compiled a new "
                                           "concrete one"), location,
                        facts=frozenset({"dynamo", "xla_per_size"}), seen=seen,
                        located="call" if first.call else None if user else "definition" if location else None)
    r.xla, r.difference, r.difference_graph, r.difference_kind = "compiled", grown[0].causes[0].summary, \
        grown[0].graph.ref, "shape"
    choose_fix(r)
    return [r]


def sized(x, found: DynamoFindings) -> bool:
    """An XLA recompilation of the bridge led by a new input size and paired with no Dynamo recompilation."""
    paired = {r.difference_graph for r in found.recompiles if r.difference_graph}
    return x.graph.ref not in paired and bool(x.causes) and x.causes[0].kind == "shape" and _on_input(x.causes[0])


def _on_input(cause) -> bool:
    """The cause's first origin is a parameter of the graph (an input's size), not an op inside it."""
    first = cause.origins[0] if cause.origins else None
    left = getattr(first, "left", None) or getattr(first, "right", None)
    return getattr(left, "opcode", None) == "parameter"


SAME_PROGRAM = 0.5
"""A recompilation at least this alike its closest earlier graph is that program changed; a forward and its
backward share far less (6-20 % on the Dynamo fixtures and scenarios; 62-94 % for a new size, input or branch)."""


def _mostly_alike(r) -> bool:
    diff = getattr(r, "diff", None)
    return diff is not None and diff.similarity >= SAME_PROGRAM


def bridge_without_log(explanation, events: dict) -> DynamoFindings | None:
    """A torch.compile run captured without Dynamo's log (an XLA dump alone, or TORCH_LOGS that printed nothing):
    the bridge's graphs still differ from one another in ops, inputs and outputs (a compiled function's forward and
    its backward run in turn, the bridge's warm-up variants), which the graphs alone would tell as a Python `if`.
    Those, far from their closest earlier graph (another program), are the bridge's own; a graph mostly alike an
    earlier one is that program changed (a new size, dtype, input or branch: a Dynamo retrace or a dynamic size,
    which only Dynamo's log tells apart) and stays XLA's story; the sentence says the log is missing. None for a run with no bridge graph."""
    cause_of = {h: e.cause for h, e in events.items()}
    if not any(g.compiled and bridge_run(g.record.frames, cause_of.get(g.record.graph_hash))
               for g in explanation.graphs):
        return None
    found = findings(DynamoLog("", "none"), [], explanation, events)
    changed = {r.graph.ref for r in explanation.recompilations if r.causes and _mostly_alike(r)}
    found.bridge_recompilations = [ref for ref in found.bridge_recompilations if ref not in changed]
    found.no_log = True
    quiet_bridge_hints(explanation, found)
    return found
