"""The first finding of ``hlodiff cost``: the one thing a user must read before the table of figures.

The table says what every graph costs; a user asks what to change. Six findings name a line to change and what
it costs, each from evidence the run's own files hold (none is a guess from sizes):

* ``donation_unusable``: a parameter was donated but no output could take its buffer (the module header's
  ``buffer_donor`` with no ``input_output_alias`` for it): the user asked for donation and did not get it.
* ``loop_buffer_copy``: a loop-carried buffer copied whole every iteration (:mod:`hlodiff.cost.copies`, paxml#17).
* ``held_across_graphs``: activations (forward -> backward) or gradients (backward -> optimizer) one graph hands the
  next within a step, because something ended a graph in the middle of the step (a sync, or a value read); the
  parameters and optimizer state a step hands the next step are no finding (one graph per step hands them on too),
  nor gradients accumulated from one micro-batch graph to the next (accumulation's own design), the last one's
  graph included when its backward adds into the very tensors it reads (``BoundaryTensor.added_to``: two tasks
  synced apart, each with its own forward).
* ``read_in_step``: a value read inside the step (``loss.item()`` before ``opt.step()``) executes a graph of its
  own every step, and the step's graph often computes that work again (:mod:`hlodiff.cost.reads`).
* ``baked_constant``: a large literal in a JAX program (a NumPy array read through the jitted function's closure,
  :mod:`hlodiff.cost.constants`): compiled into the executable and held beside the device's buffers.
* ``not_donated``: a step computes new values of its inputs (``p - lr * g``) into buffers of their own, so old and
  new are held together (:mod:`hlodiff.cost.donation`); an array of the name and shape another function of the run
  takes as its batch (undonated beside donated state, nothing returned like it) is the caller's data, no finding.

When several are present, :data:`PRECEDENCE` orders them; within a kind the most bytes wins (per step for copies,
held for the rest). Typed facts only: the words are in :mod:`hlodiff.render.cost_headline`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.cost.figures import frame_json
from hlodiff.cost.model import GraphCost, RunCost
from hlodiff.cost.reads import reads_in_step
from hlodiff.cost.roles import BACKWARD, FORWARD, OPTIMIZER
from hlodiff.cost.round_trips import HostReturn, host_return
from hlodiff.hlo.model import SourceFrame

PRECEDENCE = ("donation_unusable", "loop_buffer_copy", "held_across_graphs", "read_in_step", "not_donated",
              "baked_constant")
"""Which finding heads when several are present: a donation asked for and lost is a plain defect with a plain fix;
a copy per iteration costs time every step; held tensors cost memory; a read inside the step costs an execution
(and often the work again) every step; undonated state costs memory the user opted out of saving; a literal baked
into the program costs compile time and memory once per program."""

SAVED_ROLES = {("activation", OPTIMIZER, BACKWARD), ("activation", OPTIMIZER, OPTIMIZER),
               ("activation", BACKWARD, BACKWARD), ("activation", BACKWARD, OPTIMIZER)}
"""Activations from a graph whose phase is later than a forward (:func:`hlodiff.cost.roles.saved_activation`): held
across graphs only when the graph reading them is not the next step's run of the same line (:func:`_held`)."""

HELD_ROLES = {("activation", FORWARD, BACKWARD), ("activation", FORWARD, OPTIMIZER),
              ("gradient", BACKWARD, OPTIMIZER)} | SAVED_ROLES
"""(role, phase of the graph handing it, phase of the graph reading it) of a tensor held across graphs because a
step was cut in two; roles and phases: :mod:`hlodiff.cost.roles`. An activation from a graph whose phase is later
than a forward is one autograd alone keeps for the reading graph's backward (:func:`hlodiff.cost.roles
.saved_activation`: a GAN's generator output made beside the discriminator's update, read by the generator's loss
after a sync)."""

FRAMEWORK_PREFIXES = (("jit_", "jax"), ("pjit_", "jax"), ("xmap_", "jax"), ("SyncTensorsGraph", "torch_xla"),
                      ("IrToHlo", "torch_xla"))
"""Module-name prefixes -> the framework that traced the module (JAX names a module after the jitted function,
torch_xla after its sync)."""


def framework_of(module_name: str) -> str | None:
    return next((fw for prefix, fw in FRAMEWORK_PREFIXES if module_name.startswith(prefix)), None)


NEGLIGIBLE_SHARE = 0.05
"""``not_donated`` below this share of the bytes the step's graph reads (its parameters) is told as negligible
(review 19, F8: a 128 B weight beside an 8 KiB batch led ``cost`` as if it mattered): still the finding when it is
the only one, its words say the saving is negligible at this size and its fix is optional. The committed findings
of this kind hold half or more of what their step reads."""

UNDONATED_FRAMEWORKS = frozenset(("jax",))
"""Where a step's undonated replacement is a finding: JAX donates only what ``donate_argnums`` names, so a step
returning new state holds old and new unless the user donates. torch_xla donates by itself every tensor updated in
place (the optimizers' way); an output it did not alias is a new tensor the user's code still holds (``err`` of
``err = (pred - y) ** 2`` kept in a variable, computed from the batch's ``y``), no replaced state."""

ACCUMULATION = ("gradient", BACKWARD, BACKWARD)
"""Gradients one backward graph hands the next: accumulation with a sync per micro-batch (pytorch/xla#1367), the
sync bounding each graph by design. In such a run the last micro-batch's graph, which also steps the optimizer
(its phase is the latest), reads the accumulated gradients too: that hop is the same design, no finding."""

SYNC_FUNCTIONS = {("torch_xla.py", "sync"): "sync", ("xla_model.py", "mark_step"): "sync",
                  ("xla_model.py", "optimizer_step"): "sync", ("torch_xla.py", "step"): "sync",
                  ("xla_model.py", "save"): "save", ("dynamo_bridge.py", "optimized_mod"): "compiled"}
"""torch_xla's own frames on an execution's stack that say how the graph was asked for: (file name, function) ->
``sync`` / ``save`` (the user ended it), ``compiled`` (torch.compile's bridge ran a compiled graph). An execution
whose stack has none of them was forced by a read (``.item()``, ``.cpu()``, ``print(t)``, ``if t > 0``), which
runs in C++ and leaves only the caller's frames."""


@dataclass(slots=True)
class CostHeadline:
    """The first finding. ``graph``: the ref it is about (for ``held_across_graphs``, the graph whose end made the
    crossing); ``bytes``: held (memory) or per step (copies); ``location``: the user's line to change."""

    kind: str
    graph: str
    bytes: int
    location: SourceFrame | None
    count: int = 1
    """Tensors held, arrays not donated, copies per iteration."""
    role: str | None = None
    """``held_across_graphs``: ``activation`` or ``gradient``."""
    cut: str | None = None
    """``held_across_graphs``: ``sync`` (an explicit sync ended the graph), ``save``, ``read`` (a value read forced
    it), None (not known)."""
    mismatch: str | None = None
    """``donation_unusable``: ``dtype`` | ``shape`` | None (:class:`hlodiff.cost.donation.UnusableDonation`)."""
    shapes: list[str] = field(default_factory=list)
    """The arrays concerned (donated / copied / held / not donated), largest first, at most 4."""
    closest: str | None = None
    """``donation_unusable``: the output that differs from the donated array in ``mismatch`` only."""
    loop: str | None = None
    """``loop_buffer_copy``: the while loop whose body copies the buffer."""
    module: str | None = None
    """The graph's module name (``jit_train_step``, ``SyncTensorsGraph.95``)."""
    framework: str | None = None
    """``jax`` | ``torch_xla`` | None, from the module's name (:data:`FRAMEWORK_PREFIXES`): the fix differs."""
    times: int = 1
    """How often the finding's program (the same crossing, the same read) ran in the run."""
    recomputed: bool | None = None
    """``read_in_step``: the step's graph computes the read graph's matmuls again (:mod:`hlodiff.cost.reads`)."""
    arguments: list[str] = field(default_factory=list)
    """``not_donated``: the Python arguments (JAX's names) whose new values went to buffers of their own, in order;
    empty unless every such parameter is named."""
    then_at: SourceFrame | None = None
    """``read_in_step``: the sync that ends the step after the read."""
    shift: bool = False
    """``loop_buffer_copy``: the body shifts the buffer whole (a rolling window by ``concatenate``)."""
    masked: bool = False
    """``loop_buffer_copy``: the body writes one position through a mask over the whole buffer (``jnp.where``)."""
    emitted: bool = False
    """``loop_buffer_copy``: the body writes the whole buffer into a stacked output (a scan's ys) every iteration."""
    snapshot: bool = False
    """``loop_buffer_copy``: the body replaces a snapshot of the buffer whole on a scalar decision (best so far)."""
    one_hot: bool = False
    """``loop_buffer_copy``: the body writes one position by adding a one-hot product over the whole buffer."""
    reduced: bool = False
    """``loop_buffer_copy``: a stacked loop output (ys) only reduced after the loop: ``bytes`` is the whole stack."""
    stale_read: bool = False
    """``loop_buffer_copy``: the body reads the buffer's old value beside its in-place write (the copy keeps both)."""
    kept_old: bool = False
    """``loop_buffer_copy``: the body carries the buffer's old value whole in a second element beside its write."""
    unchanged: int = 0
    """``not_donated``: how many of the arrays are inputs handed back unchanged (copied, not computed)."""
    mask: bool = False
    """``read_in_step``: the early graph computes a boolean mask whose count sets a size (``x[mask]``): no value
    of the user's is read (:attr:`hlodiff.cost.reads.ReadInStep.mask`)."""
    gradient_sources: int = 0
    """``held_across_graphs`` of gradients: how many backward graphs hand gradients to the graph that reads them;
    two or more: each micro-batch's gradients are kept apart (a list of clones), not accumulated in ``p.grad``."""
    condition: bool = False
    """``read_in_step``: the value read is a boolean condition (:attr:`hlodiff.cost.reads.ReadInStep.condition`)."""
    followed_by: int = 1
    """``read_in_step``: how many different programs followed the read (:attr:`hlodiff.cost.reads.ReadInStep
    .followed_by`); two or more: the value decided what was traced next."""
    host_return: HostReturn | None = None
    """``read_in_step``: how the value read came back to the device (:mod:`hlodiff.cost.round_trips`): at the same
    line, read by a later graph (state carried through the host; ``MOVED`` when the line only moves the value, else
    the host may compute something there), or worked out on the host and sent back for the step itself. Its JSON
    is the flags ``round_trip``, ``moved_only`` and ``sent_back``."""
    step_bytes: int = 0
    """``not_donated``: the bytes the step's graph reads (its parameters), the measure of :attr:`negligible`."""
    negligible: bool = False
    """``not_donated``: ``bytes`` is under :data:`NEGLIGIBLE_SHARE` of ``step_bytes``: donating saves nothing
    that matters at this size."""
    library_read: str = ""
    """``read_in_step``: the library function that made the read (:attr:`hlodiff.cost.reads.ReadInStep
    .library_read`), "" for the user's own read."""
    reads: int = 1
    """``read_in_step``: values read early in each of those steps, a graph each (:attr:`hlodiff.cost.reads
    .ReadInStep.reads`)."""
    reads_at_one_line: bool = True
    """``read_in_step``: all of them at ``location`` (else the last one)."""

    def to_json(self) -> dict:
        return {"kind": self.kind, "graph": self.graph, "module": self.module, "framework": self.framework,
                "bytes": self.bytes, "location": frame_json(self.location), "count": self.count, "role": self.role,
                "cut": self.cut, "mismatch": self.mismatch, "closest": self.closest, "loop": self.loop,
                "shapes": list(self.shapes), "times": self.times, "recomputed": self.recomputed,
                "then_at": frame_json(self.then_at), "unchanged": self.unchanged,
                "shift": self.shift, "masked": self.masked, "emitted": self.emitted, "snapshot": self.snapshot,
                "one_hot": self.one_hot, "reduced": self.reduced, "stale_read": self.stale_read,
                "kept_old": self.kept_old, "arguments": list(self.arguments), "mask": self.mask,
                "followed_by": self.followed_by, "condition": self.condition,
                "round_trip": self.host_return in (HostReturn.ROUND_TRIP, HostReturn.MOVED),
                "moved_only": self.host_return is HostReturn.MOVED,
                "sent_back": self.host_return is HostReturn.SENT_BACK, "gradient_sources": self.gradient_sources,
                "step_bytes": self.step_bytes,
                "negligible": self.negligible, "library_read": self.library_read or None, "reads": self.reads,
                "reads_at_one_line": self.reads_at_one_line}


def sync_call(frames) -> str | None:
    """How an execution was asked for (:data:`SYNC_FUNCTIONS`), ``read`` when its stack has only the user's frames,
    None when there is no stack."""
    if not frames:
        return None
    for f in frames:
        key = ((f.file or "").rsplit("/", 1)[-1], f.function)
        if key in SYNC_FUNCTIONS:
            return SYNC_FUNCTIONS[key]
    return "read"


def cost_headline(run: RunCost) -> CostHeadline | None:
    """The first finding of the run, or None when nothing costly crosses or is copied."""
    found = {kind: best for kind, best in ((k, _FINDERS[k](run)) for k in PRECEDENCE) if best is not None}
    head = next((found[k] for k in PRECEDENCE if k in found), None)
    if head is not None:
        graph = next((g for g in run.graphs if g.ref == head.graph), None)
        head.framework = framework_of(graph.name) if graph is not None else None
        head.module = graph.name if graph is not None else None
    return head


def _compiled(run: RunCost) -> list[GraphCost]:
    return [g for g in run.graphs if g.compiled]


def _where(g: GraphCost) -> SourceFrame | None:
    """The user's line that ran a graph: JAX's call site, else the sync that ran it."""
    return g.called_at or g.trigger


def _unusable(run: RunCost) -> CostHeadline | None:
    best = None
    for g in _compiled(run):
        if not g.unusable_donations:
            continue
        total = sum(u.bytes for u in g.unusable_donations)
        if best is None or total > best.bytes:
            first = max(g.unusable_donations, key=lambda u: u.bytes)
            best = CostHeadline("donation_unusable", g.ref, total, _where(g), len(g.unusable_donations),
                                mismatch=first.mismatch, closest=first.closest,
                                shapes=[u.shape for u in sorted(g.unusable_donations, key=lambda u: -u.bytes)])
    return best


def _loop_copies(run: RunCost) -> CostHeadline | None:
    best = None
    for g in _compiled(run):
        for c in g.loop_buffer_copies:
            per_step = c.bytes_per_step if c.bytes_per_step is not None else c.bytes_per_iteration
            if best is None or per_step > best.bytes:
                best = CostHeadline("loop_buffer_copy", g.ref, per_step, c.location, c.count, shapes=[c.shape],
                                    loop=c.loop, shift=c.shift, masked=c.masked, emitted=c.emitted,
                                    snapshot=c.snapshot, one_hot=c.one_hot, reduced=c.reduced,
                                    stale_read=c.stale_read, kept_old=c.kept_old)
    return best


def _held(run: RunCost) -> CostHeadline | None:
    by_ref = {g.ref: g for g in run.graphs}
    accumulating = _accumulating(run)
    added_hops = _added_hops(run, by_ref)
    best = None
    for b in run.boundaries:
        again = _runs_again(run.graphs, b.source, b.target)
        added = _hop(by_ref, b) in added_hops
        tensors = [t for t in b.tensors if (t.role, b.source_phase, b.target_phase) in HELD_ROLES
                   and not (t.role == ACCUMULATION[0] and (_dump(b.source) in accumulating or added))
                   and not (again and (t.role, b.source_phase, b.target_phase) in SAVED_ROLES)]
        if not tensors or _crosses_a_step(run.graphs, b.source, b.target):
            continue
        total = sum(t.bytes for t in tensors)
        if best is not None and total <= best.bytes:
            continue
        source = by_ref.get(b.source)
        times = sum(1 for o in run.boundaries if by_ref.get(o.source) is not None and source is not None
                    and by_ref[o.source].name == source.name and _dump(o.source) == _dump(b.source)
                    and any((t.role, o.source_phase, o.target_phase) in HELD_ROLES for t in o.tensors))
        role = max({t.role for t in tensors}, key=lambda r: sum(t.bytes for t in tensors if t.role == r))
        apart = len({o.source for o in run.boundaries if o.target == b.target and o.source_phase == BACKWARD
                     and any(t.role == "gradient" for t in o.tensors)}) if role == "gradient" else 0
        best = CostHeadline("held_across_graphs", b.source, total, source.trigger if source else None,
                            len(tensors), role=role, cut=source.sync_call if source else None, times=times,
                            shapes=[t.shape for t in sorted(tensors, key=lambda t: -t.bytes)],
                            gradient_sources=apart)
    return best


def _hop(by_ref: dict[str, GraphCost], b) -> tuple:
    """The programs at both ends of a boundary (module names within a dump): later steps run the same hop."""
    source, target = by_ref.get(b.source), by_ref.get(b.target)
    return (_dump(b.source), source.name if source else b.source, target.name if target else b.target)


def _added_hops(run: RunCost, by_ref: dict[str, GraphCost]) -> set[tuple]:
    """Hops whose reading graph's backward adds into the gradients it reads (``BoundaryTensor.added_to``, seen on
    some run of the hop: record drops source lines once a run is steady, so later runs may not tell): those
    gradients are accumulated there, by design, as micro-batches' are (two tasks synced apart, each backwarded)."""
    return {_hop(by_ref, b) for b in run.boundaries
            if any(t.added_to and t.role == ACCUMULATION[0] for t in b.tensors)}


def _accumulating(run: RunCost) -> set[str]:
    """The dumps whose backward graphs hand the next backward gradients of the model: tensors of a shape some
    gradient the optimizer reads has too (``p.grad`` accumulated micro-batch after micro-batch). What else one
    backward graph hands the next (its slice of the batch, ``x.chunk(4)`` computed in the first micro-batch's
    graph, read as a gradient by the phases) is no accumulation, so gradients kept apart per micro-batch (a list
    of clones the optimizer averages) stay a finding (crossings round 5, ``x5c_grad_list_accum``)."""
    consumed = {t.shape for b in run.boundaries for t in b.tensors
                if (t.role, b.source_phase, b.target_phase) == ("gradient", BACKWARD, OPTIMIZER)}
    return {_dump(b.source) for b in run.boundaries
            if any((t.role, b.source_phase, b.target_phase) == ACCUMULATION and t.shape in consumed
                   for t in b.tensors)}


def _crosses_a_step(graphs: list[GraphCost], source: str, target: str) -> bool:
    """Between the graph handing the tensors on and the one reading them, a graph ran from the line that ran the
    source or the graph right before it: the sequence of the step began again, so what crosses is carried from one
    step to the next (a loss scale halved on a spike, review 10's tx_item_mid, F3), not held inside a step cut in
    two. A step of three graphs (syncs at :10, :20, :30) handing :10's activations to :30 is still one step."""
    refs = [g.ref for g in graphs]
    if source not in refs or target not in refs:
        return False
    i, j = refs.index(source), refs.index(target)
    lines = {_line(graphs[k]) for k in (i - 1, i) if k >= 0 and _dump(graphs[k].ref) == _dump(source)} - {None}
    return any(_line(g) in lines for g in graphs[i + 1:j] if _dump(g.ref) == _dump(source))


def _runs_again(graphs: list[GraphCost], source: str, target: str) -> bool:
    """The graph reading the tensors runs from the line that ran the source or the graph right before it: the
    step's sequence began again, so what a whole step's graph hands it (the previous step's output, a queue grown
    by ``torch.cat``) is carried from step to step, though no name held it at the sync (crossings round 6)."""
    refs = [g.ref for g in graphs]
    if source not in refs or target not in refs:
        return False
    i, j = refs.index(source), refs.index(target)
    lines = {_line(graphs[k]) for k in (i - 1, i) if k >= 0 and _dump(graphs[k].ref) == _dump(source)} - {None}
    return _line(graphs[j]) in lines


def _line(g: GraphCost):
    t = g.trigger
    return (t.file, t.line) if t is not None and t.line is not None else None


def _read_in_step(run: RunCost) -> CostHeadline | None:
    found = reads_in_step(run.graphs)
    if not found:
        return None
    r = found[0]
    read = next(g for g in run.graphs if g.ref == r.read)
    return CostHeadline("read_in_step", r.read, read.outputs.bytes, r.location, read.outputs.count, cut="read",
                        times=r.times, recomputed=r.recomputed, then_at=r.sync_at, mask=r.mask,
                        followed_by=r.followed_by, condition=r.condition, library_read=r.library_read, reads=r.reads,
                        reads_at_one_line=r.reads_at_one_line,
                        host_return=host_return(r.read, run.round_trips, run.round_trips_moved, run.sent_back))


def _dump(ref: str) -> str:
    return ref.rsplit("#", 1)[0]


def _undonated(run: RunCost) -> CostHeadline | None:
    batches = {a for g in _compiled(run) if framework_of(g.name) in UNDONATED_FRAMEWORKS for a in g.data_arguments}
    best = None
    for g in _compiled(run):
        if not g.undonated or framework_of(g.name) not in UNDONATED_FRAMEWORKS:
            continue
        held = [u for u in g.undonated if (u.argument, u.shape) not in batches]
        if not held:
            continue
        total = sum(u.bytes for u in held)
        if best is None or total > best.bytes:
            located = next((u.location for u in held if u.location is not None), None)
            names = [u.argument for u in sorted(held, key=lambda u: u.parameter)]
            step = g.parameters.bytes or 0
            best = CostHeadline("not_donated", g.ref, total, _where(g) or located, len(held),
                                shapes=[u.shape for u in sorted(held, key=lambda u: -u.bytes)],
                                unchanged=sum(1 for u in held if u.unchanged),
                                arguments=list(dict.fromkeys(names)) if all(names) else [],
                                step_bytes=step, negligible=bool(step) and total < NEGLIGIBLE_SHARE * step)
    return best


def _baked(run: RunCost) -> CostHeadline | None:
    """The largest literal baked into a JAX program (:mod:`hlodiff.cost.constants`); ``count``: how many programs
    of the run carry one of that shape, ``times`` how many of them were compiled."""
    graphs = [g for g in _compiled(run) if g.baked_constants and framework_of(g.name) == "jax"]
    if not graphs:
        return None
    g = max(graphs, key=lambda g: g.baked_constants[0].bytes)
    c = g.baked_constants[0]
    carrying = sum(1 for h in graphs if any(b.shape == c.shape for b in h.baked_constants))
    return CostHeadline("baked_constant", g.ref, c.bytes, c.location, carrying, shapes=[c.shape])


_FINDERS = {"donation_unusable": _unusable, "loop_buffer_copy": _loop_copies, "held_across_graphs": _held,
            "read_in_step": _read_in_step, "not_donated": _undonated, "baked_constant": _baked}
