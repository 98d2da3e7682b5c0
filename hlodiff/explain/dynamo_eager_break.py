"""The step graphs of a function Dynamo made no graph of: a graph break it could not resume from (one inside a
loop gives the whole frame up) leaves the compiled function running uncompiled on every call, and torch_xla traces
its ops into the step's own graph, with whatever its Python chose on that call. Dynamo round 20,
d20_layerdrop_random: ``random.random()`` in a LayerDrop loop broke the graph, no FX graph ever reached XLA, and the
step's graph changed with each pattern of dropped blocks, told "a value computed in the graph on some steps is device
data ... sync at the same points every step" below the right headline. Like the recompile limit's eager graphs
(:mod:`hlodiff.explain.dynamo_past_limit`), such a graph is told by the break, not as a change of the user's step."""

from __future__ import annotations

from hlodiff.explain.dynamo_types import DynamoFindings
from hlodiff.explain.dynamo_recompile_fixes import tell_with_fact


def made_no_graph(explanation, found: DynamoFindings) -> bool:
    """Dynamo broke a graph (not raised) and made no graph at all: the dump holds graphs, but no FX graph reached
    XLA, the bridge compiled nothing, and Dynamo recompiled nothing. A function Dynamo gave up as a whole (WON'T
    CONVERT: its backend failed) is told by its own row, which names what its eager code bakes (dyn_tolist_split: a
    slice per list of lengths)."""
    return bool(_breaks(found)) and bool(explanation.graphs) and not (
        found.fx_compilations or found.bridge_compilations or found.recompiles)


def eager_break_graphs(explanation, found: DynamoFindings) -> list[str]:
    """Refs of every XLA recompilation when Dynamo made no graph (:func:`made_no_graph`); else none. Each such
    break's count of graphs per call becomes 0: the function runs uncompiled, in no graph of Dynamo's."""
    if not made_no_graph(explanation, found):
        return []
    for b in _breaks(found):
        b.graphs = 0
    return [r.graph.ref for r in explanation.recompilations]


def tell_eager_break(explanation, found: DynamoFindings) -> None:
    """Each such graph's causes get the row ``dynamo_eager_break``: it names the break, its line and function."""
    refs = set(found.eager_break_graphs)
    if not refs:
        return
    b = _breaks(found)[0]
    args = {"at": b.location.short(), "seen": b.reason,
            "function": f"`{b.location.function}`" if b.location.function else "the compiled function"}
    for x in explanation.recompilations:
        if x.graph.ref not in refs:
            continue
        tell_with_fact(x, "eager_break", args)


def _breaks(found: DynamoFindings) -> list:
    """The breaks Dynamo took (not raised, not a whole function given up) at a line of the user's."""
    return [b for b in found.graph_breaks if not b.raised and b.location is not None and b.fix_rule != "dynamo_gave_up"]
