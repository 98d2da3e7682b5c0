"""What follows from what among one recompilation's causes: a cause graph, computed once, in one place.

The differ reports every origin it finds, and a change in one place drags others with it: an input whose shape
changed drags its users' broadcasts and converts, a function JAX saw for the first time drags every op its new
closed-over values changed, a step cut short by an early read drags the outputs it no longer computes, and the
tracer lays out the same values with another transpose along with almost any change. A user reads the first line
and acts on it, so the root leads and what follows from it is said under it ("with it: ..."); a layout-only
consequence (a transpose or copy that only comes with another change) is folded into its root.

The relations are knowledge, so they are a table (:data:`hlodiff.explain.cause_rules.RULES`), one row per relation,
each with the evidence it needs, read from typed facts (kinds, origins' opcodes, the recompiled graph's operand
edges), never from prose; this module links a recompilation's causes with them and puts them in report order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hlodiff.diff.model import Cause
from hlodiff.explain.cause_facts import Evidence, layout_only, swaps_path  # noqa: F401 (API: swaps_path)
from hlodiff.explain.cause_rules import RULES, Rule


@dataclass(frozen=True, slots=True)
class Follows:
    """An edge of the graph: the cause follows from ``root`` (an index into :attr:`CauseGraph.nodes`) by ``rule``
    (a name in :data:`RULES`)."""

    root: int
    rule: str


@dataclass(frozen=True, slots=True)
class Folded:
    """A layout-only consequence told within its root, not as a cause of its own."""

    cause: Cause
    rule: str


@dataclass(frozen=True, slots=True)
class CauseNode:
    cause: Cause
    follows: tuple[Follows, ...] = ()
    folded: tuple[Folded, ...] = ()

    @property
    def is_root(self) -> bool:
        return not self.follows


@dataclass(frozen=True, slots=True)
class CauseGraph:
    """A recompilation's causes in report order: each root (the one with most evidence first), then what follows
    from it; folded consequences hang on their root."""

    nodes: tuple[CauseNode, ...] = ()

    @property
    def causes(self) -> list[Cause]:
        return [n.cause for n in self.nodes]

    @property
    def root(self) -> CauseNode | None:
        return self.nodes[0] if self.nodes else None

    def holds(self, causes: list[Cause]) -> bool:
        """The graph's shown causes are exactly ``causes``, in this order (nothing changed the list since)."""
        return len(causes) == len(self.nodes) and all(n.cause is c for n, c in zip(self.nodes, causes))

    def consequences(self, index: int) -> list[int]:
        """Indices of the shown causes that follow directly from node ``index``."""
        return [i for i, n in enumerate(self.nodes) if any(f.root == index for f in n.follows)]


# -- building it -------------------------------------------------------------------------------------------------


def link(causes: list[Cause], evidence: Evidence = Evidence()) -> CauseGraph:
    """The cause graph of one recompilation's causes (in the order the analysis found them)."""
    parent: dict[int, tuple[int, Rule]] = {}
    if any(c.kind == "cache_key" and c.reason == "pytree" for c in causes):
        evidence = replace(evidence, arguments_restructured=True)
    for i, cause in enumerate(causes):
        found = _first_root(i, cause, causes, evidence, parent)
        if found is not None:
            parent[i] = found
    order = _report_order(causes, parent)
    position = {old: new for new, old in enumerate(i for i in order if not _folded(i, parent))}
    nodes: list[CauseNode] = []
    for i in order:
        if _folded(i, parent):
            continue
        folded = tuple(Folded(causes[j], rule.name) for j, (p, rule) in sorted(parent.items())
                       if p == i and rule.fold)
        follows = (Follows(position[_shown_root(i, parent)], parent[i][1].name),) if i in parent else ()
        nodes.append(CauseNode(causes[i], follows, folded))
    return CauseGraph(tuple(nodes))


def _first_root(i: int, cause: Cause, causes: list[Cause], evidence: Evidence,
                parent: dict[int, tuple[int, Rule]]) -> tuple[int, Rule] | None:
    for rule in RULES:
        if cause.kind not in rule.consequence:
            continue
        for kind in rule.roots:
            for j, root in enumerate(causes):
                # a transpose/copy that only lays out values explains nothing: nothing follows from it
                if j == i or root.kind != kind or layout_only(root) or _descends(j, i, parent):
                    continue
                if rule.holds(cause, root, evidence):
                    return j, rule
    return None


def _descends(j: int, i: int, parent: dict[int, tuple[int, Rule]]) -> bool:
    """``j`` already follows (directly or not) from ``i``: linking i under j would make a cycle."""
    seen = set()
    while j in parent and j not in seen:
        seen.add(j)
        j = parent[j][0]
        if j == i:
            return True
    return False


def _folded(i: int, parent: dict[int, tuple[int, Rule]]) -> bool:
    return i in parent and parent[i][1].fold


def _shown_root(i: int, parent: dict[int, tuple[int, Rule]]) -> int:
    """The nearest ancestor that is itself shown (not folded)."""
    j = parent[i][0]
    while _folded(j, parent):
        j = parent[j][0]
    return j


def _report_order(causes: list[Cause], parent: dict[int, tuple[int, Rule]]) -> list[int]:
    """Roots by evidence (most causes following from them first, then as found), each followed by its own."""
    children: dict[int, list[int]] = {}
    for i, (p, _) in sorted(parent.items()):
        children.setdefault(p, []).append(i)

    def weight(i: int) -> int:
        return sum(1 + weight(k) for k in children.get(i, ()))

    roots = [i for i in range(len(causes)) if i not in parent]
    roots.sort(key=lambda i: (-weight(i), i))
    order: list[int] = []

    def walk(i: int) -> None:
        order.append(i)
        for k in children.get(i, ()):
            walk(k)

    for i in roots:
        walk(i)
    return order


def causes_json(causes: list[Cause], graph: CauseGraph) -> list[dict]:
    """Each cause with ``follows_from`` (indices into this list, and the rule that links them) and ``folded`` (the
    layout-only consequences told within it); see docs/json-causes.md. Causes the graph does not hold in this order
    (a list changed after linking) are written as roots."""
    nodes = graph.nodes if graph.holds(causes) else None
    if nodes is None:
        return [{**c.to_json(), "follows_from": [], "folded": []} for c in causes]
    return [{**n.cause.to_json(),
             "follows_from": [{"cause": f.root, "kind": nodes[f.root].cause.kind, "rule": f.rule} for f in n.follows],
             "folded": [{"kind": x.cause.kind, "summary": x.cause.summary, "rule": x.rule} for x in n.folded]}
            for n in nodes]
