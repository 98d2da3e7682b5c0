"""Where ranks diverge: each rank's graph sequence lined up with the reference's, and the graph most ranks ran at
each position taken as the majority.

A graph is known across ranks by its canonical fingerprint. Each rank's sequence is aligned with the reference
sequence (:mod:`hlodiff.explain.alignment`); a rank that ran another graph, an extra graph, no graph, or stopped
early diverges there, and majority and rank graph are compared with the usual differ, so a divergence has the same
causes, user lines and fixes as a recompilation. :mod:`hlodiff.explain.ranks` turns the divergences into a job's
explanation (the reference rank, the fixes written for ranks, the notes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.diff import diff_canonical
from hlodiff.diff.model import Cause
from hlodiff.explain.alignment import align
from hlodiff.explain.cause_graph import CauseGraph, Evidence, causes_json
from hlodiff.explain.families import family_key
from hlodiff.explain.inventory import GraphSummary
from hlodiff.graph import Normalization, canonicalize

KINDS = ("different", "extra", "missing", "stopped")
"""What a rank did at a step where the majority did something else, in the order divergences at one step are told."""

MAX_CANDIDATES = 8
"""An extra graph is diffed against at most this many distinct reference graphs of its family to find its closest."""


@dataclass(slots=True)
class Divergence:
    """Ranks that, at one step, ran a graph the majority did not (or none at all)."""

    step: int
    kind: str
    ranks: list[int]
    majority_ranks: list[int]
    majority: GraphSummary | None
    graph: GraphSummary | None
    rank_refs: list[tuple[int, str]]
    family: str
    summary: str
    causes: list[Cause] = field(default_factory=list)
    similarity: float | None = None
    links: CauseGraph = field(default_factory=CauseGraph)
    """What follows from what among ``causes`` (see :mod:`hlodiff.explain.cause_graph`)."""
    no_collective: bool = False
    """Both ranks ran a graph of their own at this step, neither holds a collective and neither was compiled again
    (set by :mod:`hlodiff.explain.ranks`): no rank waits for the other's extra work, so it is told, not failed."""

    def to_json(self) -> dict:
        return {
            "step": self.step,
            "kind": self.kind,
            "ranks": self.ranks,
            "majority_ranks": self.majority_ranks,
            "majority_ref": self.majority.ref if self.majority else None,
            "ref": self.graph.ref if self.graph else None,
            "rank_refs": [{"rank": r, "ref": ref} for r, ref in self.rank_refs],
            "family": self.family,
            "summary": self.summary,
            "similarity": round(self.similarity, 4) if self.similarity is not None else None,
            "causes": causes_json(self.causes, self.links),
            "no_collective": self.no_collective,
        }


class Aligner:
    """Aligns every rank's sequence with the reference and takes the majority at each position."""

    def __init__(self, sequences: dict[int, list[GraphSummary]], reference: int, options: Normalization):
        self.sequences = sequences
        self.reference = reference
        self.ref = sequences[reference]
        self.options = options
        self._canonical: dict[str, object] = {}
        # rank -> reference position -> the rank's graph there (None: nothing aligned)
        self.at: dict[int, list[GraphSummary | None]] = {}
        # rank -> reference position -> graphs the rank ran before that position that match nothing
        self.extra: dict[int, dict[int, list[GraphSummary]]] = {}
        ref_keys = [g.fingerprint for g in self.ref]
        for rank, graphs in sequences.items():
            at: list[GraphSummary | None] = [None] * len(self.ref)
            extra: dict[int, list[GraphSummary]] = {}
            position = 0  # the reference position the next rank graph would face
            for i, j in align(ref_keys, [g.fingerprint for g in graphs]):
                if i is not None:
                    position = i + 1
                    if j is not None:
                        at[i] = graphs[j]
                else:
                    extra.setdefault(position, []).append(graphs[j])
            self.at[rank], self.extra[rank] = at, extra

    def divergences(self) -> tuple[list[Divergence], dict[int, int]]:
        stopped = self._stopped()
        found: list[Divergence] = []
        for step in range(len(self.ref) + 1):
            found.extend(self._extras(step, stopped))
            if step < len(self.ref):
                found.extend(self._at(step, stopped))
        for rank, step in sorted(stopped.items()):
            majority = self.ref[step]
            found.append(Divergence(step, "stopped", [rank], self._majority_ranks(step, stopped), majority, None,
                                    [], family_key(majority)[1],
                                    f"rank {rank} {_ran(majority)} no graph from here on while the majority "
                                    f"{_ran(majority)} "
                                    f"{len(self.ref) - step} more: it stopped early"))
        found.sort(key=lambda d: (d.step, KINDS.index(d.kind), d.ranks))
        return found, stopped

    def _stopped(self) -> dict[int, int]:
        """Ranks whose sequence ends before the reference's: from which step on they have nothing."""
        out = {}
        for rank, at in self.at.items():
            last = max((i for i, g in enumerate(at) if g is not None), default=-1)
            tail_extras = any(step > last for step in self.extra[rank])
            if last < len(at) - 1 and not tail_extras:
                out[rank] = last + 1
        return out

    def _live(self, step: int, stopped: dict[int, int]) -> list[int]:
        return [r for r in sorted(self.at) if r not in stopped or step < stopped[r]]

    def _majority_ranks(self, step: int, stopped: dict[int, int]) -> list[int]:
        ref_key = self.ref[step].fingerprint
        return [r for r in self._live(step, stopped) if (g := self.at[r][step]) is not None and g.fingerprint == ref_key]

    def _at(self, step: int, stopped: dict[int, int]) -> list[Divergence]:
        ranks = self._live(step, stopped)
        by_key: dict[str | None, list[int]] = {}
        for r in ranks:
            g = self.at[r][step]
            by_key.setdefault(g.fingerprint if g is not None else None, []).append(r)
        ref_key = self.ref[step].fingerprint
        majority_key = max(by_key, key=lambda k: (len(by_key[k]), k == ref_key, -min(by_key[k])))
        if majority_key is None:  # most ranks have nothing here: the reference rank's graph is the extra one
            majority_key = ref_key
        majority_ranks = by_key[majority_key]
        majority = self.at[majority_ranks[0]][step]
        out = []
        for key, group in sorted(by_key.items(), key=lambda kv: kv[1]):
            if key == majority_key:
                continue
            if key is None:
                out.append(Divergence(step, "missing", group, majority_ranks, majority, None, [],
                                      family_key(majority)[1],
                                      f"{ranks_text(group)} {_ran(majority)} no graph here where the majority "
                                      f"{_ran(majority)} {majority.ref}"))
                continue
            graph = self.at[group[0]][step]
            out.append(self._explained(step, "different", group, majority_ranks, majority, graph))
        return out

    def _extras(self, step: int, stopped: dict[int, int]) -> list[Divergence]:
        by_key: dict[str, list[int]] = {}
        first: dict[str, GraphSummary] = {}
        for r in sorted(self.extra):
            for g in self.extra[r].get(step, []):
                if r not in by_key.setdefault(g.fingerprint, []):
                    by_key[g.fingerprint].append(r)
                first.setdefault(g.fingerprint, g)
        out = []
        live = self._live(min(step, len(self.ref) - 1), stopped) if self.ref else sorted(self.at)
        for key, group in sorted(by_key.items(), key=lambda kv: (kv[1], kv[0])):
            graph = self._graph_of(group[0], step, key)
            others = [r for r in live if r not in group]
            if len(group) > len(others):  # most ranks ran it: the others are missing it
                out.append(Divergence(step, "missing", others, group, graph, None, [], family_key(graph)[1],
                                      f"{ranks_text(others)} did not {_run(graph)} {graph.ref}, which the majority "
                                      f"{_ran(graph)} here"))
                continue
            counterpart = self._closest(graph, step)
            out.append(self._explained(step, "extra", group, others, counterpart, graph))
        return out

    def _graph_of(self, rank: int, step: int, key: str) -> GraphSummary:
        return next(g for g in self.extra[rank][step] if g.fingerprint == key)

    def _closest(self, graph: GraphSummary, step: int) -> GraphSummary | None:
        """The majority graph to compare an extra graph with: the most alike of the reference's graphs of the same
        family nearest before (then after) the step."""
        label = family_key(graph)[1]
        same = [g for g in self.ref[:step][::-1] + self.ref[step:] if family_key(g)[1] == label]
        candidates = list({g.fingerprint: g for g in same[:MAX_CANDIDATES]}.values())
        if not candidates:
            return None
        scored = [(diff_canonical(self._cm(c), self._cm(graph)).similarity, -i, c) for i, c in enumerate(candidates)]
        return max(scored, key=lambda s: s[:2])[2]

    def _explained(self, step: int, kind: str, ranks: list[int], majority_ranks: list[int],
                   majority: GraphSummary | None, graph: GraphSummary) -> Divergence:
        refs = []
        for r in ranks:
            g = self.at[r][step] if kind == "different" else next(
                (x for x in self.extra[r].get(step, []) if x.fingerprint == graph.fingerprint), None)
            if g is not None:
                refs.append((r, g.ref))
        family = family_key(graph)[1]
        if majority is None:
            return Divergence(step, kind, ranks, majority_ranks, None, graph, refs, family,
                              f"{ranks_text(ranks)} {_ran(graph)} {graph.ref} ({family}), a graph no majority rank "
                              f"{_ran(graph)}",
                              [Cause("ops", f"a graph of {family} that no other rank ran")])
        diff = diff_canonical(self._cm(majority), self._cm(graph))
        if len(self.sequences) == 2:  # no majority with 2 ranks (review F7)
            other = ranks_text(majority_ranks)
            what = (f"{_ran(graph)} another graph than" if kind == "different"
                    else f"{_ran(graph)} an extra graph {other} did not; closest graph of {other}:")
        else:
            what = (f"{_ran(graph)} another graph than" if kind == "different"
                    else f"{_ran(graph)} an extra graph the majority did not; closest majority graph:")
        summary = f"{ranks_text(ranks)} {what} {majority.ref} ({family}), {diff.percent_alike}% alike"
        return Divergence(step, kind, ranks, majority_ranks, majority, graph, refs, family, summary,
                          list(diff.causes), diff.similarity)

    def evidence(self, d: Divergence) -> Evidence:
        if d.majority is None or d.graph is None:
            return Evidence()
        return Evidence(self._cm(d.majority).entry, self._cm(d.graph).entry)

    def _cm(self, graph: GraphSummary):
        """Canonical module of a graph, parsed here (workers do not send modules back): by fingerprint, once."""
        cm = self._canonical.get(graph.fingerprint)
        if cm is None:
            record = graph.record
            if record.packed_text is None and record.path.endswith(".gz"):
                record = self._compiled_record(graph)
            cm = canonicalize(record.module(), self.options)
            self._canonical[graph.fingerprint] = cm
        return cm

    def _compiled_record(self, graph: GraphSummary):
        for graphs in self.sequences.values():
            for g in graphs:
                if g.ref == graph.first_ref:
                    return g.record
        return graph.record


def _ran(graph: GraphSummary) -> str:
    """XLA dumps hold what compiled, save-tensors files what ran: say which we know."""
    return "ran" if graph.record.kind == "save_tensors" else "compiled"


def _run(graph: GraphSummary) -> str:
    return "run" if graph.record.kind == "save_tensors" else "compile"


def ranks_text(ranks: list[int]) -> str:
    """``rank 3`` or ``ranks 1, 2``: the ranks a divergence (or a fix written for ranks) names."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(str(r) for r in ranks)
