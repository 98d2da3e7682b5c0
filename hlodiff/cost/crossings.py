"""What crosses from one graph to a later one, as typed records with their ``hlodiff.cost/1`` JSON: the tensors
of each boundary (:class:`BoundaryTensor`, :class:`Boundary`) and the bytes each training step holds across its
boundaries, by role (:class:`PipelineStep`, :class:`PipelineRun`, :class:`Pipeline`).

Drawn by :mod:`hlodiff.cost.boundaries` and :mod:`hlodiff.cost.pipeline`; :class:`hlodiff.cost.model.RunCost`
holds them beside the graphs' own costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.cost.figures import Tally, Unknown, frame_json
from hlodiff.cost.roles import BACKWARD, FORWARD, OPTIMIZER
from hlodiff.hlo.model import SourceFrame


@dataclass(frozen=True, slots=True)
class BoundaryTensor:
    """A tensor one graph outputs and a later graph takes as a parameter, known by its torch_xla tensor id."""

    id: int
    shape: str
    bytes: int
    ir_op: str | None = None
    """What computed it, from the report before the producing graph (``aten::relu``)."""
    location: SourceFrame | None = None
    evidence: str = "listed"
    """``read``: torch_xla's own record says the later graph reads it (``reads=`` in a report ``hlodiff record``
    took); ``listed``: the later report lists the tensor id as device data; ``inferred``: a tensor only autograd
    holds, matched to a parameter without a source line (see :mod:`hlodiff.cost.boundaries`)."""
    role: str | None = None
    """``activation`` | ``gradient`` | ``parameter`` | ``optimizer_state`` | ``other`` (:mod:`hlodiff.cost.roles`);
    None when the phase of the graph that made it or reads it is not known."""
    user_line: SourceFrame | None = None
    """The user's line that created it: the innermost frame outside installed code of the tensor's ``Frames:``."""
    added_to: bool = False
    """The reading graph's backward adds a new value into device data of this tensor's shape (autograd's ``old +
    new`` of a ``.grad`` already set: :func:`hlodiff.cost.boundaries.added_into`): the gradients of such a hop
    are carried into accumulation, not read by an optimizer step alone."""

    def to_json(self) -> dict:
        return {"shape": self.shape, "bytes": self.bytes, "id": self.id, "role": self.role, "ir_op": self.ir_op,
                "location": frame_json(self.location), "user_line": frame_json(self.user_line),
                "evidence": self.evidence, "added_to": self.added_to}


@dataclass(slots=True)
class Boundary:
    """Tensors crossing from graph ``source`` (refs) to graph ``target``."""

    source: str
    target: str
    tensors: list[BoundaryTensor]

    @property
    def bytes(self) -> int:
        return sum(t.bytes for t in self.tensors)

    source_phase: str | None = None
    target_phase: str | None = None
    """``forward`` | ``backward`` | ``optimizer`` (None: not known), :func:`hlodiff.cost.roles.graph_phase`."""

    def by_role(self) -> dict[str, Tally]:
        return roles_tally(self.tensors)

    def to_json(self) -> dict:
        return {"from": self.source, "to": self.target, "from_phase": self.source_phase,
                "to_phase": self.target_phase, "count": len(self.tensors), "bytes": self.bytes,
                "roles": {role: t.to_json() for role, t in self.by_role().items()},
                "tensors": [t.to_json() for t in self.tensors]}


def roles_tally(tensors) -> dict[str, Tally]:
    """Count and bytes per role (``unknown`` for a tensor without one), in a fixed role order."""
    out: dict[str, list[int]] = {}
    for t in tensors:
        row = out.setdefault(t.role or "unknown", [0, 0])
        row[0] += 1
        row[1] += t.bytes
    order = ("activation", "gradient", "parameter", "optimizer_state", "other", "unknown")
    return {role: Tally(*out[role]) for role in order if role in out}


BOUNDARIES_UNKNOWN = Unknown(
    "boundary_bytes",
    "which device data each graph reads is not in a printed live-tensor report: tensors that look alike by shape "
    "(accumulated gradients beside their parameters) cannot be told apart, so only the tensors it identifies are named",
    "hlodiff record (its reports carry reads=, torch_xla's own list of the device data each graph reads)")

REPEATS_UNKNOWN = Unknown(
    "boundary_bytes",
    "the graphs that ran after the run repeated itself have no live-tensor report, so what crosses into them is not "
    "counted (they repeat the steps counted)",
    "HLODIFF_LIVE_TENSORS=every-sync under hlodiff record (docs/commands.md)")
"""Why the total is not known when every report had ``reads=`` and only the repeated steps have none (review 17,
F6: a record capture was told its reports lack ``reads=``, "given by hlodiff record")."""


@dataclass(slots=True)
class PipelineStep:
    """One training step of a dump (:mod:`hlodiff.cost.pipeline` says where steps end and what is counted)."""

    step: int
    graphs: list[str]
    phases: dict[str, int]
    reported: int
    tensors: int = 0
    bytes: int = 0
    crossing_bytes: int = 0
    roles: dict[str, Tally] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.reported == len(self.graphs)

    def to_json(self) -> dict:
        return {"step": self.step, "graphs": len(self.graphs), "first": self.graphs[0], "last": self.graphs[-1],
                "forward_graphs": self.phases.get(FORWARD, 0), "backward_graphs": self.phases.get(BACKWARD, 0),
                "optimizer_graphs": self.phases.get(OPTIMIZER, 0), "reported": self.reported,
                "complete": self.complete, "tensors": self.tensors, "bytes": self.bytes,
                "crossing_bytes": self.crossing_bytes,
                "roles": {role: t.to_json() for role, t in self.roles.items()}}


@dataclass(slots=True)
class PipelineRun:
    source: str
    steps: list[PipelineStep]

    def last_complete(self) -> PipelineStep | None:
        done = [s for s in self.steps if s.complete]
        return done[-1] if done else None

    def to_json(self) -> dict:
        return {"source": self.source, "steps": [s.to_json() for s in self.steps]}


@dataclass(slots=True)
class Pipeline:
    """The pipeline story of what ``hlodiff cost`` was given, computed by :func:`hlodiff.cost.pipeline.pipeline`:
    each dump's steps, growth between the dumps, and a split run beside its single-graph alternative (``cost
    --json``'s ``pipeline``, the terminal's per-step lines)."""

    runs: list[PipelineRun] = field(default_factory=list)
    growth: list[dict] = field(default_factory=list)
    single_graph: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"runs": [r.to_json() for r in self.runs], "growth": self.growth, "single_graph": self.single_graph}
