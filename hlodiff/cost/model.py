"""What a graph costs, as typed records with their ``hlodiff.cost/1`` JSON (the key names are docs/json.md's).

Bytes are always computed from HLO shapes (packed sub-byte types, tuple leaves summed); a figure hlodiff could not
know is ``None``/``null``, never a guess: a loop whose trip count is unknown has bytes per iteration only. What
crosses between graphs (boundaries, the per-step pipeline) is :mod:`hlodiff.cost.crossings`; the units both tell
their figures in (:class:`Tally`, :class:`Unknown`) are :mod:`hlodiff.cost.figures`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.cost.crossings import BOUNDARIES_UNKNOWN, REPEATS_UNKNOWN, Boundary, Pipeline
from hlodiff.cost.figures import Tally, Unknown, frame_json
from hlodiff.cost.torch_xla_memory import TorchXlaMemory
from hlodiff.hlo.model import SourceFrame


@dataclass(frozen=True, slots=True)
class Copy:
    """One ``copy`` (or ``copy-start``) outside fusions: a physical copy of a whole buffer.

    ``loop`` is the innermost ``while`` it runs in (None in the straight-line part of the program); ``trip_count``
    is how many times it runs per execution of the graph (the product over enclosing loops), None when a loop's
    trip count is unknown.
    """

    name: str
    computation: str
    shape: str
    bytes: int
    loop: str | None
    trip_count: int | None
    location: SourceFrame | None = None
    aliasing: bool = False
    """Made by XLA so an output can be written into its aliased input's buffer (:mod:`hlodiff.cost.alias_copies`):
    the in-place update's own cost, not a copy of the program's."""

    @property
    def per_iteration(self) -> bool:
        return self.loop is not None

    @property
    def bytes_per_step(self) -> int | None:
        if self.loop is None:
            return self.bytes
        return None if self.trip_count is None else self.bytes * self.trip_count

    def to_json(self) -> dict:
        return {"shape": self.shape, "bytes": self.bytes, "loop": self.loop, "per_iteration": self.per_iteration,
                "trip_count": self.trip_count, "bytes_per_step": self.bytes_per_step, "name": self.name,
                "computation": self.computation, "location": frame_json(self.location), "aliasing": self.aliasing}


@dataclass(frozen=True, slots=True)
class LoopBufferCopy:
    """A loop-carried buffer updated in place by ``dynamic-update-slice`` and yet copied whole every iteration
    (paxml#17), or shifted whole (``shift``): ``count`` whole copies of ``shape`` per iteration of ``loop``."""

    loop: str
    shape: str
    count: int
    buffer_bytes: int
    trip_count: int | None
    tuple_index: int
    copies: tuple[str, ...]
    location: SourceFrame | None = None
    shift: bool = False
    """The body rewrites the buffer whole from a slice of itself (``concatenate([buf[1:], new])``, a rolling
    window; :data:`hlodiff.cost.buffer_writes.SHIFT_OPCODES`): the shift is among ``copies``, and the fix is a ring
    buffer written in place, not scan outputs."""
    masked: bool = False
    """The body writes one position of the buffer through a mask over all of it (``jnp.where(rows == t, row, buf)``;
    :data:`hlodiff.cost.buffer_writes.MASKED_WRITE_OPCODES`): the fix is an indexed write in place (``buf.at[t].set``)."""
    emitted: bool = False
    """The whole buffer is written into a stacked loop output every iteration (a scan's body returning its carried
    buffer as ys): the fix is to emit only the new row, not the buffer."""
    snapshot: bool = False
    """The body replaces the buffer whole by another carried buffer on a scalar decision (``best = jnp.where(score >
    best_score, buf, best)``; :data:`hlodiff.cost.buffer_writes.SNAPSHOT_OPCODES`): the fix is to carry the best step's
    index and build the snapshot once after the loop."""
    one_hot: bool = False
    """The body writes one position by adding a one-hot product over the whole buffer (``buf + one_hot(t)[:, None] *
    row``; :data:`hlodiff.cost.buffer_writes.ONE_HOT_WRITE_OPCODES`): the fix is an indexed write in place."""
    stale_read: bool = False
    """The body reads the buffer's old value beside writing it in place, by an op the write does not depend on
    (attention over ``cache`` where ``cache.at[t].set(k)`` was meant; :mod:`hlodiff.cost.stale_reads`): XLA keeps both
    versions, and the whole copy is that; the fix is to read the updated buffer, not scan outputs."""
    kept_old: bool = False
    """The body hands the buffer's value from before its in-place write on whole in another element of the carry
    (``prev = buf`` kept beside ``buf.at[i].set(row)``; :func:`hlodiff.cost.stale_reads.kept_in_carry`): both versions
    live, the copy is that; the fix is to carry only what the later use needs of the old value, not scan outputs."""
    reduced: bool = False
    """A stacked loop output (a scan's ys, one value per iteration) whose every use after the loop reduces it over
    the iterations (:mod:`hlodiff.cost.stacked_outputs`): ``buffer_bytes`` is the whole stack, held for a sum; the
    fix is a running sum carried through the loop."""

    @property
    def bytes_per_iteration(self) -> int:
        return self.count * self.buffer_bytes

    @property
    def bytes_per_step(self) -> int | None:
        return None if self.trip_count is None else self.bytes_per_iteration * self.trip_count

    def to_json(self) -> dict:
        return {"loop": self.loop, "shape": self.shape, "bytes_per_iteration": self.bytes_per_iteration,
                "bytes_per_step": self.bytes_per_step, "location": frame_json(self.location), "count": self.count,
                "trip_count": self.trip_count, "tuple_index": self.tuple_index, "copies": list(self.copies),
                "shift": self.shift, "masked": self.masked, "emitted": self.emitted, "snapshot": self.snapshot,
                "one_hot": self.one_hot, "reduced": self.reduced, "stale_read": self.stale_read,
                "kept_old": self.kept_old}


@dataclass(slots=True)
class GraphCost:
    """The cost figures of one graph. ``peak_source`` says whether ``peak_bytes`` is XLA's own figure (``xla``,
    from the dump folder's side files), torch_xla's (``torch_xla``, its Post Compilation Analysis) or hlodiff's
    liveness estimate (``estimate``); ``aliased_source`` the same for ``aliased_bytes`` (``hlo``: the module
    header; ``None`` with an entry in ``unknowns`` when it cannot be known; :mod:`hlodiff.cost.precedence`)."""

    ref: str
    index: int
    name: str
    instructions: int
    parameters: Tally
    outputs: Tally
    aliased_bytes: int | None
    peak_bytes: int
    peak_source: str
    estimated_peak_bytes: int
    copies: list[Copy] = field(default_factory=list)
    loop_buffer_copies: list[LoopBufferCopy] = field(default_factory=list)
    loops: list[dict] = field(default_factory=list)
    compile_seconds: float | None = None
    compiled: bool = True
    loaded: bool = False
    """A program JAX loaded from its persistent compilation cache (XLA dumped it after optimizations only): run,
    not compiled; ``compile_seconds`` is then the load's time."""
    xla_live_peak_bytes: int | None = None
    trigger: SourceFrame | None = None
    output_shapes: list[str] = field(default_factory=list)
    parameter_shapes: list[str] = field(default_factory=list)
    parameters_without_source: list[str] | None = None
    """Shapes of the parameters with no source line, when other parameters have one (else None: no evidence)."""
    output_ops: list[str | None] = field(default_factory=list)
    output_tensors: list[dict] = field(default_factory=list)
    aliased_source: str | None = "hlo"
    torch_xla: TorchXlaMemory | None = None
    """torch_xla's Post Compilation Analysis of this graph's compilation, when its PT_XLA_DEBUG log was read."""
    unknowns: list[Unknown] = field(default_factory=list)
    phase: str | None = None
    """``forward`` | ``backward`` | ``optimizer`` when a live-tensor report tells (:mod:`hlodiff.cost.roles`), or the
    report of another sighting of the same program (a cache hit with no report before it repeats a graph that had
    one)."""
    whole_step: bool = False
    """The graph ran the optimizer's step and the forward (or backward) it updates from: the whole training step,
    told so, not "optimizer" (its latest phase: review 17, F6)."""
    reported: bool = False
    """A live-tensor report came before this graph (what crossed into it is named)."""
    peak_rounding: int = 0
    """How far the rounding of torch_xla's figures can put ``peak_bytes`` off, either way (``torch_xla`` only)."""
    undonated: list = field(default_factory=list)
    """Outputs that are a parameter's new value in a buffer of their own (:mod:`hlodiff.cost.donation`), judged only
    where the module header tells the aliasing (``aliased_source == "hlo"``)."""
    unusable_donations: list = field(default_factory=list)
    data_arguments: list = field(default_factory=list, repr=False)
    """(argument, shape) a donating module takes undonated and returns nothing shaped like: a batch
    (:func:`hlodiff.cost.donation.data_arguments`; not in JSON)."""
    """Donated parameters no output took (:class:`hlodiff.cost.donation.UnusableDonation`)."""
    sync_call: str | None = None
    """How the execution was asked for: ``sync``, ``save``, ``read`` (:func:`hlodiff.cost.headline.sync_call`)."""
    library_read: str = ""
    """A ``read`` made inside a library function (:data:`hlodiff.diff.library_reads.LIBRARY_READS`'s row name, e.g.
    clip_grad_norm_'s non-finite check): no read of the user's (review 20, F3; not in JSON)."""
    called_at: SourceFrame | None = None
    baked_constants: list = field(default_factory=list, repr=False)
    """Large literals with no metadata of their own (:class:`hlodiff.cost.constants.BakedConstant`): arrays a
    jitted function read through its closure (not in JSON; the headline tells the largest)."""
    heavy_ops: dict | None = field(default=None, repr=False)
    """(opcode, shape) -> count of the module's matmuls and convolutions (:mod:`hlodiff.cost.reads`; not in JSON)."""
    stack: tuple = field(default=(), repr=False)
    """The user's frames of the execution's stack, innermost first (:mod:`hlodiff.cost.reads` orders a read and a
    sync by them; not in JSON)."""
    """The user's line that called the jitted function (JAX's cache-miss call site), when a JAX log gives it."""

    @property
    def peak_rounding_bytes(self) -> int | None:
        """``peak_bytes`` is exact within this many bytes either way (0: XLA's own count; None: an estimate)."""
        if self.peak_source == "torch_xla":
            return self.peak_rounding
        return 0 if self.peak_source == "xla" else None

    @property
    def aliased_rounding_bytes(self) -> int | None:
        if self.aliased_source == "torch_xla" and self.torch_xla is not None:
            return self.torch_xla.rounding_bytes
        return 0 if self.aliased_source == "hlo" else None

    def copy_bytes_per_step(self) -> int | None:
        """Bytes all copies move in one execution; None when a loop's trip count is unknown."""
        total = 0
        for c in self.copies:
            per_step = c.bytes_per_step
            if per_step is None:
                return None
            total += per_step
        return total

    def to_json(self) -> dict:
        return {
            "ref": self.ref, "index": self.index, "name": self.name, "instructions": self.instructions,
            "compiled": self.compiled, "loaded_from_cache": self.loaded,
            "parameters": self.parameters.to_json(), "outputs": self.outputs.to_json(),
            "aliased_bytes": self.aliased_bytes, "aliased_source": self.aliased_source,
            "aliased_rounding_bytes": self.aliased_rounding_bytes,
            "peak_bytes": self.peak_bytes, "peak_source": self.peak_source,
            "peak_rounding_bytes": self.peak_rounding_bytes,
            "estimated_peak_bytes": self.estimated_peak_bytes, "xla_live_peak_bytes": self.xla_live_peak_bytes,
            "copies": [c.to_json() for c in self.copies],
            "copy_bytes_per_step": self.copy_bytes_per_step(),
            "loop_buffer_copies": [c.to_json() for c in self.loop_buffer_copies],
            "loops": list(self.loops),
            "compile_seconds": self.compile_seconds,
            "trigger": frame_json(self.trigger),
            "torch_xla": self.torch_xla.to_json() if self.torch_xla is not None else None,
            "phase": self.phase, "whole_step": self.whole_step,
            "unknowns": [u.to_json() for u in self.unknowns],
            "undonated": [u.to_json() for u in self.undonated] if self.aliased_source == "hlo" else None,
            "unusable_donations": [u.to_json() for u in self.unusable_donations],
            "called_at": frame_json(self.called_at),
        }


@dataclass(slots=True)
class FamilyGrowth:
    """Graphs that end at the same user line: how many there were, how many compiled, and their size."""

    label: str
    graphs: int
    compiled: int
    instructions: int
    parameter_bytes: int
    output_bytes: int
    source: str = ""

    def to_json(self) -> dict:
        return {"label": self.label, "source": self.source, "graphs": self.graphs, "compiled": self.compiled,
                "instructions": self.instructions, "parameter_bytes": self.parameter_bytes,
                "output_bytes": self.output_bytes}


@dataclass(slots=True)
class RunCost:
    """Every graph of a run, the boundaries between them, and the run's compile time."""

    graphs: list[GraphCost]
    boundaries: list[Boundary] = field(default_factory=list)
    families: list[FamilyGrowth] = field(default_factory=list)
    compile_seconds: float | None = None
    compile_seconds_source: str | None = None
    load_seconds: float | None = None
    """Seconds spent loading programs from a persistent compilation cache (not in ``compile_seconds``)."""
    boundaries_exact: bool = True
    """False when some report had no ``reads=``: the tensors named are those a printed report identifies, and
    the run's total crossing is not known (``run.boundary_bytes`` is null, ``unknowns`` says why)."""
    boundaries_repeats_only: bool = False
    """Not exact only because the graphs after the run repeated itself have no report (record stops reporting
    then): every report read had ``reads=``, so ``unknowns`` says that, not that reports lack ``reads=``."""
    pipeline: Pipeline = field(default_factory=Pipeline)
    """Per step, bytes held across boundaries by role, per dump; growth between dumps
    (:func:`hlodiff.cost.pipeline.pipeline`, computed with the boundaries; empty when none were drawn)."""
    round_trips: frozenset[str] = frozenset()
    """Refs of read graphs whose value went to the host and came back to the device at the same line, read by a
    later graph (:func:`hlodiff.cost.round_trips.round_trip_reads`)."""
    round_trips_moved: frozenset[str] = frozenset()
    """Those of :attr:`round_trips` whose line only moves the value (``torch.from_numpy(h.detach().cpu().numpy())
    .to(dev)``, read from the user's source): there ``.detach()`` gives the same values. A line that computes on the
    host (returns through scipy) or a source not at hand is not in it."""
    sent_back: frozenset[str] = frozenset()
    """Refs of read graphs after which the step uploads what the host worked out from the value and the step's own
    graph reads it (:func:`hlodiff.cost.round_trips.sent_back_reads`)."""

    @property
    def unknowns(self) -> list[Unknown]:
        if self.boundaries_exact:
            return []
        return [REPEATS_UNKNOWN if self.boundaries_repeats_only else BOUNDARIES_UNKNOWN]

    def to_json(self) -> dict:
        named = sum(b.bytes for b in self.boundaries)
        return {
            "graphs": [g.to_json() for g in self.graphs],
            "boundaries": [b.to_json() for b in self.boundaries],
            "pipeline": self.pipeline.to_json(),
            "unknowns": [u.to_json() for u in self.unknowns],
            "run": {"graphs": len(self.graphs), "compiled": sum(1 for g in self.graphs if g.compiled),
                    "loaded_from_cache": sum(1 for g in self.graphs if g.loaded),
                    "compile_seconds": self.compile_seconds, "compile_seconds_source": self.compile_seconds_source,
                    "load_seconds": self.load_seconds,
                    "boundary_bytes": named if self.boundaries_exact else None,
                    "named_boundary_bytes": named,
                    "families": [f.to_json() for f in self.families]},
        }
