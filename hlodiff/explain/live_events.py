"""The live story's typed events (:class:`LiveEvent`) and what one says about a recompilation (:class:`Told`):
made by :mod:`hlodiff.explain.live` and :mod:`hlodiff.explain.live_dynamo`, worded by :mod:`hlodiff.render.live`."""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.hlo.model import SourceFrame


@dataclass(slots=True)
class Told:
    """What an event says about one recompilation: its root cause and where, the fix, the other causes."""

    kind: str
    summary: str
    location: SourceFrame | None
    fix: str | None
    more: list[tuple[str, str, SourceFrame | None]] = field(default_factory=list)
    """The causes after the root: (kind, summary, first location)."""
    closest: str | None = None
    similarity: float | None = None
    waits: bool = False
    """The fix is not told yet: it rests on what the next steps show (:data:`hlodiff.explain.live_told.NEEDS_THE_END`,
    :data:`hlodiff.explain.live_told.NEEDS_MORE_STEPS`)."""
    rule: str | None = None
    """The fix table's row the fix comes from (:data:`hlodiff.diff.fix_rules.RULES`), when one: the same row at the
    same line says the same thing, whatever facts (steps, values) its words list."""
    label: str | None = None
    """What the line calls the change where the kind's name would mislead (review 21, F5: a Dynamo ``mode`` guard on
    autocast read like train/eval): ``autocast setting``; None: the kind's name."""

    def same_advice(self, other: "Told") -> bool:
        """``other`` says what this says, with other facts at most: the same kind, line and fix row, both with a fix
        (review 15, F4: "traced on steps 1 and 3 only", then "steps 1, 3 and 5 only", each a line of its own)."""
        return (self.rule is not None and self.rule == other.rule and self.fix is not None
                and other.fix is not None and self.waits == other.waits
                and (self.kind, self.location) == (other.kind, other.location))

    def key(self) -> tuple:
        where = (self.location.file, self.location.line) if self.location else None
        return (self.kind, where, self.fix)


@dataclass(slots=True)
class LiveEvent:
    """One thing that became true while the run ran.

    ``kind``: ``compiled`` (a family's first graph), ``expected`` (a recompilation the final report would call
    warm-up, setup or expected: counted, not shouted), ``pending`` (a family compiled again on its second step:
    an optimizer's warm-up if the next steps reuse the graph; the next execution decides, with an ``update`` or a
    ``recompiled``), ``recompiled`` (the first of a story: told in full),
    ``repeat`` (another recompilation of a story already told), ``update`` (a story's words changed now that more
    of the run is known), ``unread`` (a compiled module that could not be read), ``log`` (a ``PT_XLA_DEBUG``
    compilation seen without its HLO), ``follows`` (a recompilation of torch_xla's Dynamo bridge that follows from
    what Dynamo did: counted, as the report at exit tells it by Dynamo's reason), ``graph_break`` (a graph break
    Dynamo's log names: :mod:`hlodiff.explain.live_dynamo`).
    """

    kind: str
    step: int
    graph: str
    family: str
    told: Told | None = None
    story: int | None = None
    """The story's number (0-based, in the order stories were first told)."""
    count: int = 1
    """``repeat``: recompilations of the story so far; ``expected``: expected recompilations so far."""
    of_step: int | None = None
    """``repeat``/``update``: the step of the story's first recompilation."""
    graphs: int = 0
    """Graphs read so far (executions, cache hits included)."""
    expected: bool = False
    """The recompilation is one the final report calls expected (warm-up, setup, one graph per bucket)."""
    eager: int = 0
    """``expected``, for a JAX operation run outside jit (the report's eager ops): how many so far, else 0 (review
    11, F8: one line each came before the recompilation that mattered)."""
    revises_expected: bool = False
    """``recompiled``: this recompilation was told as expected before (an ``expected`` line of the same step): the
    line says it is not, now that more of the run is known (review 15, F4: the two lines read as a contradiction)."""
    warmup: int = 0
    """``follows``, for a graph of torch_xla's Dynamo bridge of the first call (several of them in a run with nothing
    to fix): how many so far, else 0 (review 18, F4: three "compiled again ... dtype" lines for them read as a dtype
    problem); set by :class:`hlodiff.render.live.StepOrder`."""
    late: bool = False
    """Told after a line about a later step (Dynamo's log and torch_xla's graphs are read at different paces): the
    line says so rather than step numbers going backwards (review 18, F4); set by
    :class:`hlodiff.render.live.StepOrder`."""
    fix_told_at: int | None = None
    """``repeat``/``update``: the step of an earlier line of the same story that printed this very fix: the line
    refers to it instead of repeating it (review 22, F7: four ~400-character fixes for one story); set by
    :class:`hlodiff.render.live.StepOrder`. Words only: the JSON keeps the fix."""
    compilations_only: bool = False
    """The capture holds compilations only (a JAX or bare XLA dump): ``step`` is the module's place in its family,
    not a step of the user's loop (review 11, F8)."""

    def to_json(self) -> dict:
        t = self.told
        return {"event": self.kind, "step": self.step, "graph": self.graph, "family": self.family,
                "expected": self.expected, "story": self.story, "count": self.count, "first_step": self.of_step,
                "graphs_so_far": self.graphs, "eager_op": bool(self.eager),
                "first_call_warmup": bool(self.warmup), "told_late": self.late,
                "cause": None if t is None else {
                    "kind": t.kind, "summary": t.summary,
                    "location": t.location.to_json() if t.location else None, "fix": t.fix,
                    "fix_waits_for_next_steps": t.waits, "closest": t.closest,
                    "similarity": None if t.similarity is None else round(t.similarity, 4),
                    "more": [{"kind": k, "summary": s, "location": loc.to_json() if loc else None}
                             for k, s, loc in t.more]}}

