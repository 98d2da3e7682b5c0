"""The eager graphs of a function Dynamo stopped compiling (its recompile limit hit): past the limit, later calls
of that frame run without Dynamo, and torch_xla traces their ops into the step's own graph, as any eager code.
Such a graph is no change of the step's own (Dynamo round 11, d11_mixup_lambda: told "a value is kept on some steps
only" and "expected warm-up" for the step that now holds the whole loss): it follows from the limit, which follows
from the guard that failed on every call."""

from __future__ import annotations

from hlodiff.explain.dynamo_types import DynamoFindings
from hlodiff.explain.dynamo_recompile_fixes import tell_with_fact


def past_limit_graphs(explanation, found: DynamoFindings) -> list[str]:
    """Refs of XLA recompilations outside the bridge, after the bridge's last graph, whose ops come from the lines
    of a frame that hit its recompile limit (the lines its guards name): that frame's code, run eagerly. Code of
    the frame is in the bridge's graphs while Dynamo compiles it, so before the limit it is not in an eager one."""
    if not found.limit_hits:
        return []
    limited = {cid.split("/")[0] for cid, _ in found.limit_hits}
    lines = {(r.guard.source.file.rsplit("/", 1)[-1], r.guard.source.line) for r in found.recompiles
             if r.compile_id.split("/")[0] in limited and r.guard.source is not None}
    if not lines:
        return []
    bridge = set(found.bridge_compilations)
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    last_bridge = max((at[ref] for ref in bridge if ref in at), default=-1)
    out = []
    for r in explanation.recompilations:
        if r.graph.ref in bridge or any(g.ref in bridge for g in r.family.members):
            continue
        if at.get(r.graph.ref, -1) < last_bridge:
            continue
        seen = {(loc.file.rsplit("/", 1)[-1], loc.line) for c in r.causes for loc in c.locations}
        if seen & lines:
            out.append(r.graph.ref)
    return out


def tell_past_limit(explanation, found: DynamoFindings) -> None:
    """Each such graph's causes get the row ``dynamo_past_limit``: it names the limit and the guard."""
    refs = set(found.past_limit_graphs)
    if not refs:
        return
    cid, limit = found.limit_hits[0]
    frame = cid.split("/")[0]
    last = [r for r in found.recompiles if r.compile_id.split("/")[0] == frame]
    guard = last[-1].guard.guard if last else "?"
    args = {"cid": cid, "limit": limit, "guard": guard}
    for x in explanation.recompilations:
        if x.graph.ref not in refs:
            continue
        tell_with_fact(x, "past_limit", args)
