"""What explaining a run produces: its graphs, families and recompilations (each with its causes, the live tensors
behind its outputs and its PT_XLA_DEBUG record), the counts its summary opens with, and their JSON (docs/json.md).
Typed results only; the analysis that fills them is :mod:`hlodiff.explain.recompile`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hlodiff.diff import ModuleDiff
from hlodiff.diff.fix_rules import EXPECTED as EXPECTED_RULES
from hlodiff.diff.model import Cause
from hlodiff.dumps.debug_log import CompilationEvent
from hlodiff.dumps.tensors_report import LiveTensor
from hlodiff.explain.cache_loads import loaded_clause
from hlodiff.explain.cause_graph import CauseGraph, causes_json
from hlodiff.explain.families import Family, first_rest
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.modes import ModeSwitch
from hlodiff.explain.headline import headline_of
from hlodiff.explain.patterns import Pattern
from hlodiff.explain.stories import Story
from hlodiff.hlo.model import SourceFrame, user_frame

if TYPE_CHECKING:
    from hlodiff.explain.dynamo_types import DynamoFindings


@dataclass(slots=True)
class TensorNote:
    """The live tensor behind a graph output, from the report captured just before the sync."""

    side: str  # "left" or "right"
    output: int
    tensor: LiveTensor

    def to_json(self) -> dict:
        t = self.tensor
        frame = user_frame(t.frames) or (t.frames[0] if t.frames else None)
        roots = t.roots()
        return {"side": self.side, "output": self.output, "tensor_id": t.id, "shape": t.shape_text,
                "ir_op": roots[-1].op if roots else None, "frame": frame.to_json() if frame else None}


@dataclass(slots=True)
class Recompilation:
    graph: GraphSummary
    closest: GraphSummary | None
    family: Family
    causes: list[Cause]
    diff: ModuleDiff | None
    tensors: list[TensorNote] = field(default_factory=list)
    debug: CompilationEvent | None = None
    mode: ModeSwitch | None = None
    """A train step against an eval step of one helper (the ``mode`` cause leads)."""
    links: CauseGraph = field(default_factory=CauseGraph)
    """What follows from what among ``causes`` (which are in its order, folded consequences left out)."""
    read_at: SourceFrame | None = None
    """Both this graph and the one it is compared with finish a step cut by the same early read, at this line: the
    value read decides what differs (``x[:, :int(lengths.max())]``), so the read is the line of the decision."""

    def first_step_rest(self) -> bool:
        """The rest of the family's first step after an early read cut it: compiled for the first time, no
        recompilation of an earlier graph (:func:`hlodiff.explain.families.first_rest`)."""
        return first_rest(self.family, self.graph.ref)

    def to_json(self) -> dict:
        return {
            "graph": self.graph.ref,
            "index": self.graph.record.index,
            "closest": self.closest.ref if self.closest else None,
            "family": self.family.label,
            "similarity": round(self.diff.similarity, 4) if self.diff else None,
            "hlo_identical": bool(self.diff.equal) if self.diff else False,
            "first_step_rest": self.first_step_rest(),
            "causes": causes_json(self.causes, self.links),
            "live_tensors": [t.to_json() for t in self.tensors],
            "mode": {"to": self.mode.to, "rng_ops": self.mode.rng_ops, "updates": self.mode.updates}
            if self.mode else None,
            "debug": _debug_json(self.debug),
            "ignored": [i.to_json() for i in self.diff.ignored] if self.diff else [],
        }


@dataclass(frozen=True, slots=True)
class RunCounts:
    """The counts the run's summary opens with, typed so that a report restating them (Dynamo's XLA side) need not
    read the sentence: graphs, compilations, programs loaded from a persistent cache, and the recompilations the
    summary states (0 when every one was an eager op outside jit)."""

    graphs: int
    compiled: int
    loaded: int
    recompilations: int

    def head(self) -> str:
        g, c, n = self.graphs, self.compiled, self.recompilations
        return (f"{g} graph{'s' if g != 1 else ''}, {c} compilation{'s' if c != 1 else ''}"
                f"{loaded_clause(self.loaded)}, {n} recompilation{'s' if n != 1 else ''}")


@dataclass(slots=True)
class RunExplanation:
    graphs: list[GraphSummary]
    families: list[Family]
    recompilations: list[Recompilation]
    summary: str
    patterns: list[str]
    hints: list[str] = field(default_factory=list)
    headline: Recompilation | None = None
    """The recompilation whose leading cause the summary names: its kind, line and fix head the report."""
    unread: list[str] = field(default_factory=list)
    """Refs of compiled modules that could not be read (cut off while a killed run wrote them): compilations that
    happened, with nothing to say about them."""
    pattern_facts: list[Pattern] = field(default_factory=list)
    """Per family (same order as ``families``), its pattern as facts; ``patterns`` holds them in words."""
    stories: list[Story] = field(default_factory=list)
    """Recompilations sharing a root, told once each."""
    dynamo: "DynamoFindings | None" = None
    """Dynamo's side of a torch.compile run (issue 31: :mod:`hlodiff.explain.dynamo`); None without its log."""
    loaded: list[str] = field(default_factory=list)
    """Refs of the programs loaded from a persistent compilation cache, not compiled (:mod:`.cache_loads`)."""
    counts: RunCounts | None = None
    """The counts ``summary`` opens with; None for an explanation not made by :func:`explain_records`."""

    @property
    def xla_headline(self) -> Recompilation | None:
        """The headline of the graphs alone; with Dynamo's log, not a recompilation of the bridge's graphs (Dynamo's
        reason tells those, issue 31)."""
        if self.dynamo is None or self.headline is None:
            return self.headline
        told = (set(self.dynamo.bridge_recompilations) | set(self.dynamo.first_call_syncs)
                | set(self.dynamo.follows_expected) | set(self.dynamo.past_limit_graphs)
                | set(self.dynamo.compilations_only) | set(self.dynamo.eager_break_graphs))
        if self.headline.graph.ref not in told:
            return None if _another_program(self.headline) else self._past_retrace(self.headline, told)
        # Dynamo round 7 (dyn_freeze_backbone): the bridge's own graphs (told by Dynamo) or a first call's cut step
        # headed the graphs; an unexpected change of the user's step elsewhere in the run is still the story
        other = self._unexpected_among([r for r in self.recompilations if r.graph.ref not in told])
        return None if other is None else self._past_retrace(other, told)

    def _unexpected_among(self, rest: list[Recompilation], allow: frozenset = frozenset()) -> Recompilation | None:
        """The headline of ``rest`` when it is an unexpected change of one program (or told by a rule of
        ``allow``), else None."""
        other = headline_of(self.families, self.pattern_facts, rest) if rest else None
        if other is None or not other.causes or _another_program(other):
            return None
        if other.causes[0].fix_rule in EXPECTED_RULES and other.causes[0].fix_rule not in allow:
            return None
        pattern = next((p for f, p in zip(self.families, self.pattern_facts) if f is other.family), None)
        return None if pattern is not None and pattern.benign else other

    def _past_retrace(self, head: Recompilation, told: set[str]) -> Recompilation:
        """Without Dynamo's log, a new compilation of one of Dynamo's FX graphs is a retrace whose reason the log
        alone tells: the graphs guess it ("a Python `if`"). An unexpected change the graphs do show (a value baked
        as a constant into the bridge's sync of the call's inputs) heads before it (dynamo/d14_cpu_scalar_control:
        a temperature reaching 1.0 is baked; the second FX compile headed, told as a Python `if`)."""
        fx = set(self.dynamo.fx_compilations)
        if not self.dynamo.no_log or head.graph.ref not in fx:
            return head
        other = self._unexpected_among([r for r in self.recompilations if r.graph.ref not in told | fx])
        if other is None:
            # a change the graphs show but whose step this capture cannot place (told "expected if it ran in the
            # first steps ... capture the execution log") still says more than the FX retrace's guess: it heads,
            # with its own words of what to capture (the same run once rev11d's compilations-only rule came in)
            unplaced = set(self.dynamo.compilations_only)
            other = self._unexpected_among(
                [r for r in self.recompilations if r.graph.ref not in (told - unplaced) | fx],
                allow=frozenset(("dynamo_compilations_only",)))
        return head if other is None else other

    def to_json(self) -> dict:
        from hlodiff.explain.steps import graph_steps

        steps = graph_steps(self.graphs, self.families)
        return {
            "summary": self.summary,
            "headline": _dynamo_headline_json(self.dynamo) or _headline_json(self.xla_headline, self.recompilations),
            "graphs": [_graph_json(g, steps[g.ref]) for g in self.graphs],
            "families": [{"label": f.label, "graphs": [g.ref for g in f.members],
                          "compiled": [g.ref for g in f.compiled],
                          **({"another_function": f.split.to_json()} if f.split is not None else {}),
                          **({"pattern": p.to_json()} if p is not None else {})}
                         for f, p in zip(self.families, _padded(self.pattern_facts, len(self.families)))],
            "patterns": self.patterns,
            "recompilations": [r.to_json() for r in self.recompilations],
            "stories": [s.to_json() for s in self.stories],
            "hints": self.hints,
            "unread": self.unread,
            "loaded_from_cache": self.loaded,
            "dynamo": self.dynamo.to_json() if self.dynamo is not None else None,
        }


def _padded(items: list, n: int) -> list:
    return list(items[:n]) + [None] * (n - len(items))


def _dynamo_headline_json(dynamo) -> dict | None:
    """issue 31: with Dynamo's log, the headline is its failed guard (or graph break) at the user's line."""
    head = dynamo.headline if dynamo is not None else None
    if head is None:
        return None
    return {"graph": getattr(head, "difference_graph", None), "kind": head.kind,
            "location": head.location.to_json() if head.location else None, "fix": head.fix,
            "guard": getattr(getattr(head, "guard", None), "guard", None),
            "compile_id": getattr(head, "compile_id", None)}


def _headline_json(r: Recompilation | None, recompilations=()) -> dict | None:
    if r is None or not r.causes:
        return None
    cause = r.causes[0]
    where = cause.locations[0] if cause.locations else None
    from hlodiff.explain.headline_also import also_causes, also_roots

    also = [{"kind": c.kind, "summary": c.summary, "fix": c.fix,
             "location": c.locations[0].to_json() if c.locations else None}
            for c in also_causes(r) + also_roots(r, recompilations)]
    return {"graph": r.graph.ref, "kind": cause.kind, "location": where.to_json() if where else None,
            "fix": cause.fix, "also": also}


def _graph_json(g: GraphSummary, step: int) -> dict:
    return {"index": g.record.index, "ref": g.ref, "name": g.name, "graph_hash": g.record.graph_hash,
            "fingerprint": g.fingerprint, "compiled": g.compiled, "instructions": g.instructions,
            "cache_key": g.cache_key, "trigger": g.trigger.to_json() if g.trigger else None,
            "step": step, "cache_hit_of": None if g.compiled else g.first_ref,
            "parameters": {"count": g.parameters, "bytes": g.parameter_bytes},
            "outputs": {"count": g.outputs, "bytes": g.output_bytes}}


def _debug_json(event: CompilationEvent | None) -> dict | None:
    if event is None:
        return None
    return {"cause": event.cause, "graph_hash": event.graph_hash,
            "frames": [f.to_json() for f in event.frames]}


def _another_program(r: Recompilation) -> bool:
    """A graph that shares almost nothing with its closest earlier graph of the same name (``dynamo_xla.UNRELATED``):
    under a torch.compile run told by Dynamo's log, two eager graphs called SyncTensorsGraph (the bridge's first
    sync of the call's inputs, a read after the sync) are two programs, each compiled once, not one that changed;
    review 9 F5 (c1 by hand): such a pair, 3% alike, headed with "a value is kept on some steps only" under Dynamo's
    right story."""
    from hlodiff.explain.dynamo_xla import UNRELATED

    return r.diff is not None and r.diff.similarity < UNRELATED
