"""Graph boundaries in a torch_xla run: tensors one graph outputs and a later graph takes as parameters.

pytorch/xla#6347: with forward and backward synced separately, the forward's activations are outputs of one graph
and parameters of the next, and stay alive in between. The live-tensor reports (one per sync, threshold 0, as
``hlodiff record`` and the fixtures capture them) give identities:

* graph *n* outputs one value per tensor with pending IR in the report printed before it, in tensor-id order,
  so each output has a tensor id (reports are matched to executions, and checked by output shapes, by
  :mod:`hlodiff.dumps.report_alignment`);
* in a later report *m* a tensor that graph *n* computed is listed under the same id as device data (its IR is
  one ``xla::device_data()`` node). torch_xla lists computed data only once some op has read it since it was
  computed (reading it gives it an IR value), so the listed ones are those the coming graph can take;
* graph *m* has an entry parameter of the tensor's shape.

When the report ``hlodiff record`` took before graph *m* carries ``reads=`` (torch_xla's own list of the computed
tensors whose device data graph *m* reads, :mod:`hlodiff.capture.reads`), that list decides, exactly, and a tensor
crosses into every graph that reads it. Otherwise a tensor id is counted as crossing when all hold. A tensor read
by an earlier graph stays listed afterwards, so each tensor crosses once, into the first later graph that takes
it. When a report lists more candidates of one shape than graph *m* has parameters of that shape, the most
recently computed are taken first (a backward graph reads what its own forward just produced); candidates
computed by one graph that still cannot be told apart are not claimed, and a warning says so (shape alone is not
identity). Checked against torch_xla's own record of the device data each graph read
(``fixtures/torch_xla/pipeline/*/truth.json``; ``tests/test_record_boundaries.py`` for ``reads=``): every tensor
named crosses where it is said to; without ``reads=``, accumulated gradients (listed like the same-shaped
parameters) are not named.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING

from hlodiff.cost.crossings import Boundary, BoundaryTensor
from hlodiff.cost.model import GraphCost
from hlodiff.cost.roles import BACKWARD, FORWARD, OPTIMIZER, graph_phase, role_of, saved_activation, tensor_phase
from hlodiff.dumps.graph_record import TRACED_KINDS, GraphRecord
from hlodiff.dumps.report_alignment import GraphOutputs, shape_key
from hlodiff.dumps.tensors_report import LiveTensor, SyncReport
from hlodiff.errors import InputWarning, ReportNote
from hlodiff.hlo.model import user_frame
from hlodiff.hlo.shapes import byte_size_of, without_layout_text

if TYPE_CHECKING:
    from hlodiff.dumps.cost_evidence import CostRun


def find_boundaries(records: list[GraphRecord], graphs: list[GraphCost], evidence: "CostRun",
                    warnings: list[InputWarning]) -> tuple[list[Boundary], bool, bool]:
    """The boundaries, whether they are exact: every graph had a report with ``reads=`` before it (else the
    tensors named are those a printed report identifies, and what else crossed is not known), and whether only the
    graphs after the run repeated itself had none (every report read had ``reads=``: what crossed into those is not
    counted, and they repeat the steps counted). ``evidence``: the
    run's live-tensor reports, aligned when asked (:meth:`hlodiff.dumps.cost_evidence.CostRun.align_reports`)."""
    report_paths = list(evidence.report_files)
    reports = _aligned(records, graphs, evidence, warnings)
    if not reports:
        return [], True, False
    exact = True
    reads_everywhere = True  # every report had reads= and every compiled graph a report
    producer: dict[int, int] = {}  # tensor id -> position of the last graph that computed it
    made_by: dict[int, LiveTensor] = {}  # tensor id -> the tensor as the producing graph's report showed it
    parameters: set[int] = set()  # ids an nn.Parameter held when record reported (params=)
    weights_read: dict[int, set[int]] = {}  # graph position -> parameter ids it read (reads= within params=)
    params_seen: list[tuple[int, set[int]]] = []  # (position, params=) of each report that has one
    named: dict[int, set[int]] = {}  # graph position -> ids its report lists (reads= reports only): held by a name
    claimed: set[int] = set()  # tensor ids that already crossed into some graph
    boundaries: list[Boundary] = []
    phases: dict[int, str | None] = {}  # graph position -> forward / backward / optimizer (reported graphs)
    unreported: list[str] = []  # graphs that compiled with no report before them (record's policy misses some)
    repeats = 0  # cache hits with no report: the run was steady and record stopped reporting
    any_reads = False
    source_of_run = None
    for position, (record, graph) in enumerate(zip(records, graphs)):
        if record.source != source_of_run:  # each dump is its own run: tensor ids start again
            source_of_run = record.source
            producer, made_by, claimed = {}, {}, set()
        report = reports.get((record.source, record.index))
        if report is None:
            exact = False
            if graph.compiled:
                unreported.append(record.ref)
                reads_everywhere = False
            else:
                repeats += 1
            continue
        graph.reported = True
        reads = report.reads()
        any_reads = any_reads or reads is not None
        exact = exact and reads is not None
        reads_everywhere = reads_everywhere and reads is not None
        if reads is None and report.get("reads") is not None:
            warnings.append(InputWarning(
                f"the live-tensor report before {record.ref} has a reads= that is not a list of tensor ids; ignored "
                "(boundaries from the report's tensors instead)",
                path=report_paths[0] if len(report_paths) == 1 else None, line=report.line or None))
        if reads is not None:
            named[position] = {t.id for t in report.tensors}
            crossing = _read(reads, producer, made_by, claimed, position)
        else:
            crossing = _crossing(report, record, graph, producer, made_by, claimed, position, warnings)
        outputs = report.pending()
        added = added_into(crossing, outputs, named[position]) if reads is not None else set()
        by_source: dict[int, list[BoundaryTensor]] = defaultdict(list)
        for source, tensor in crossing:
            by_source[source].append(replace(tensor, added_to=True) if tensor.id in added else tensor)
        for source in sorted(by_source):
            tensors = sorted(by_source[source], key=lambda t: t.id)
            boundaries.append(Boundary(graphs[source].ref, graph.ref, tensors, source_phase=source,
                                       target_phase=position))  # positions for now: phases once all are known
        if len(outputs) == graph.outputs.count:
            graph.output_tensors = [{"output": i, "id": t.id, "shape": without_layout_text(t.shape_text)}
                                    for i, t in enumerate(outputs)]
        # every tensor with pending IR is an output (torch_xla computes them all), and so is a clone of device data
        # (clones=, which the report lists like data); when they do not add up to the graph's outputs some output
        # is not named, but those named are still exact
        clones = _ids(report.get("clones")) if reads is not None else set()
        parameters.update(_ids(report.get("params")))
        if report.get("params") is not None:
            params_seen.append((position, _ids(report.get("params"))))
            if reads is not None:
                weights_read[position] = set(reads) & _ids(report.get("params"))
        for tensor in (*outputs, *(t for t in report.tensors if t.id in clones)):
            producer[tensor.id] = position
            made_by[tensor.id] = tensor
        made = [*outputs, *(t for t in report.tensors if t.id in clones)]
        phases[position] = graph.phase = graph_phase(made)
        graph.whole_step = graph.phase == OPTIMIZER and len({tensor_phase(t) for t in made} - {None}) > 1
    if unreported and any_reads:
        shown = ", ".join(unreported[:4]) + (" ..." if len(unreported) > 4 else "")
        warnings.append(InputWarning(
            f"{len(unreported)} compiled graph(s) have no live-tensor report before them ({shown}): tensors crossing "
            "into or out of them are not named (a note, not a fault: hlodiff record reports at syncs until the run "
            "repeats itself, and a graph run by an early read such as .item() has no sync before it; "
            "HLODIFF_LIVE_TENSORS in docs/commands.md)",
            path=report_paths[0] if len(report_paths) == 1 else None))
    if repeats and any_reads:
        warnings.append(ReportNote(
            f"{repeats} graph(s) ran after the run repeated itself and have no live-tensor report: what crossed "
            "into them is not named (record stops reporting once the run repeats, and their steps repeat the steps "
            "named; HLODIFF_LIVE_TENSORS in docs/commands.md)",
            path=report_paths[0] if len(report_paths) == 1 else None))
    keys = [(r.source, r.cache_key()) for r in records]
    return _with_roles(boundaries, graphs, phases, made_by, keys, parameters,
                       frozen_graphs(weights_read, params_seen), named), exact, \
        not exact and reads_everywhere and repeats > 0


def added_into(crossing: list[tuple[int, BoundaryTensor]], outputs: list[LiveTensor], listed: set[int]) -> set[int]:
    """Ids of the tensors crossing into a graph (from ``reads=``) that its backward added into: the graph reads the
    tensor, its own report no longer lists it (no name of the program holds it: autograd replaced the ``.grad``
    that held it with ``old + new``), and a tensor the graph's backward made (:func:`hlodiff.cost.roles
    .tensor_phase`) has its shape. A gradient handed to an optimizer step alone is still listed, held by its
    ``.grad`` (crossings round 8, ``x8c_task_resync_control``: two tasks synced apart, task B's backward adding into
    task A's gradients)."""
    made = {without_layout_text(t.shape_text) for t in outputs if tensor_phase(t) == BACKWARD}
    return {t.id for _, t in crossing if t.id not in listed and t.shape in made}


def frozen_graphs(weights_read: dict[int, set[int]], params_seen: list[tuple[int, set[int]]]) -> set[int]:
    """Positions of graphs whose weights are never trained: each parameter id they read is still a parameter's id
    at every later report (an optimizer's update gives a weight a new id), and some later report exists while some
    other weight does change (a training run). Without ``params=`` (a report printed by hand) nothing is known."""
    trained = any(a - b for (_, a), (_, b) in zip(params_seen, params_seen[1:]))
    frozen = set()
    for position, ids in weights_read.items():
        later = [p for q, p in params_seen if q > position]
        if trained and ids and later and all(ids <= p for p in later):
            frozen.add(position)
    return frozen


def _infer_phases(boundaries: list[Boundary], graphs: list[GraphCost], phases: dict[int, str | None],
                  keys: list) -> None:
    """Phases for the graphs no report tells, by one rule for both kinds: graphs traced without source lines
    (``record --lines auto`` turns them off once the run looks steady) and graphs with no report before them
    (record stops reporting once the run repeats itself). A graph is the program of its cache key, so it takes the
    phase a sighting of that program was told (:func:`_same_program`); a graph that reads what a backward computed
    and is no backward itself is the optimizer's step; one whose outputs a backward reads is a forward; and what
    the boundaries tell of a program reaches its other sightings the same way. ``phases`` keeps reported graphs
    only (the roles of the tensors crossing read it); every graph's ``phase`` is set."""
    every = [phases.get(position) for position in range(len(graphs))]
    _same_program(every, keys)
    into: dict[int, set[int]] = defaultdict(set)  # graph position -> positions it reads from
    out_of: dict[int, set[int]] = defaultdict(set)
    for b in boundaries:  # (positions still stand in the phase fields here)
        into[b.target_phase].add(b.source_phase)
        out_of[b.source_phase].add(b.target_phase)
    for position in phases:  # only a reported graph has boundaries
        if every[position] is not None:
            continue
        sources = {every[p] for p in into[position]}
        targets = {every[p] for p in out_of[position]}
        if BACKWARD in sources:
            every[position] = OPTIMIZER
        elif BACKWARD in targets:
            every[position] = FORWARD
    _same_program(every, keys)
    whole = {keys[p] for p, g in enumerate(graphs) if g.whole_step and keys[p][1] is not None}
    for position, graph in enumerate(graphs):
        graph.phase = every[position]
        graph.whole_step = graph.phase == OPTIMIZER and (graph.whole_step or keys[position] in whole)
        if position in phases:
            phases[position] = every[position]


def _same_program(phases: list[str | None], keys: list) -> None:
    """Each graph with no phase takes the first phase told of its program (the same cache key in the same dump: a
    cache hit runs the program it repeats); a graph with no cache key is a program of its own."""
    told: dict = {}
    for position, phase in enumerate(phases):
        if phase is not None and keys[position][1] is not None:
            told.setdefault(keys[position], phase)
    for position, phase in enumerate(phases):
        if phase is None and keys[position][1] is not None:
            phases[position] = told.get(keys[position])


def _ids(value: str | None) -> set[int]:
    if not value:
        return set()
    words = value.split(",")
    return {int(w) for w in words if w.isdigit()}


def _with_roles(boundaries: list[Boundary], graphs: list[GraphCost], phases: dict[int, str | None],
                made_by: dict[int, LiveTensor], keys: list, parameters: set[int] = frozenset(),
                frozen: set[int] = frozenset(), named: dict[int, set[int]] | None = None) -> list[Boundary]:
    """Phases of both ends and each tensor's role (:mod:`hlodiff.cost.roles`) and the user's line that made it.
    ``named``: per reading graph with ``reads=``, the ids its report lists (a tensor read but not listed is held by
    autograd alone)."""
    named = named or {}
    _infer_phases(boundaries, graphs, phases, keys)
    read_by_model: set[int] = set()
    for b in boundaries:
        if phases.get(b.target_phase) in (FORWARD, BACKWARD):
            read_by_model.update(t.id for t in b.tensors)
    out = []
    for b in boundaries:
        made_in, read_in = phases.get(b.source_phase), phases.get(b.target_phase)
        tensors = []
        for t in b.tensors:
            origin = made_by.get(t.id)
            saved = (b.target_phase in named and origin is not None
                     and saved_activation(made_in, read_in, tensor_phase(origin), t.id in named[b.target_phase]))
            role = (role_of(made_in, read_in, t.id in read_by_model, t.id in parameters, b.source_phase in frozen,
                            saved) if made_in and read_in else None)
            line = user_frame(origin.frames) if origin is not None and origin.frames else None
            tensors.append(replace(t, role=role, user_line=line))
        out.append(Boundary(b.source, b.target, tensors, source_phase=made_in, target_phase=read_in))
    return out


def _aligned(records: list[GraphRecord], graphs: list[GraphCost], source: "CostRun",
             warnings: list[InputWarning]) -> dict[tuple[str, int], SyncReport]:
    """The report printed before each torch_xla execution, matched and checked by the readers' aligner (reports
    with or without ``## SYNC`` headers); only matches whose tensors map onto the outputs one to one are used, and
    the reports ``hlodiff record`` took (their header numbers the execution and carries ``reads=``): a clone of
    device data is an output the report lists as data, so their shapes need not map one to one."""
    dumps: dict[str, list[GraphOutputs]] = {}
    for record, graph in zip(records, graphs):
        if record.kind in TRACED_KINDS:
            shapes = tuple(shape_key(s) for s in graph.output_shapes)
            dumps.setdefault(record.source, []).append(GraphOutputs((record.source, record.index), shapes))
    if not dumps:
        return {}
    alignments = source.align_reports(list(dumps.items()), None, warnings)
    return {key: a.report for key, a in alignments.items()
            if (a.certain and a.outputs == tuple(range(len(a.outputs))))
            or (a.how == "sync header" and a.report.reads() is not None)}


def _is_device_data(tensor: LiveTensor) -> bool:
    return tensor.is_device_data


def _crossing(report: SyncReport, record: GraphRecord, graph: GraphCost, producer: dict[int, int],
              made_by: dict[int, LiveTensor], claimed: set[int], position: int,
              warnings: list[InputWarning]) -> list[tuple[int, BoundaryTensor]]:
    """From a report without ``reads=``: listed tensors by id and parameter shape, then those autograd holds."""
    candidates: dict[str, list[LiveTensor]] = defaultdict(list)
    for tensor in report.tensors:
        if tensor.id in producer and producer[tensor.id] < position and tensor.id not in claimed \
                and _is_device_data(tensor):
            candidates[without_layout_text(tensor.shape_text)].append(tensor)
    slots = _parameter_slots(graph)
    out = []
    for shape, tensors in sorted(candidates.items()):
        chosen, left_over = _assign(tensors, slots.get(shape, 0), producer)
        if left_over:
            ids = ", ".join(str(t.id) for t in left_over)
            warnings.append(InputWarning(
                f"{record.ref} takes more computed {shape} tensors than are told apart: {len(left_over)} live ones "
                f"from one earlier graph could be them (ids {ids}); not counted as a boundary",
                path=record.path, line=record.start_line))
        for tensor in chosen:
            claimed.add(tensor.id)
            out.append((producer[tensor.id], _boundary_tensor(tensor, shape, made_by, "listed")))
    out.extend(_inferred(report, graph, producer, made_by, claimed, position))
    return out


def _read(reads: frozenset[int], producer: dict[int, int], made_by: dict[int, LiveTensor], claimed: set[int],
          position: int) -> list[tuple[int, BoundaryTensor]]:
    """torch_xla's own record of the computed tensors the graph reads (``reads=`` from ``hlodiff record``): each
    one an earlier graph computed crosses, into every graph that reads it (ids name one computed value each)."""
    out = []
    for tensor_id in sorted(reads):
        source = producer.get(tensor_id)
        if source is not None and source < position:
            claimed.add(tensor_id)
            tensor = made_by[tensor_id]
            out.append((source, _boundary_tensor(tensor, without_layout_text(tensor.shape_text), made_by, "read")))
    return out


def _boundary_tensor(tensor: LiveTensor, shape: str, made_by: dict[int, LiveTensor], evidence: str):
    origin = made_by.get(tensor.id, tensor)
    root = origin.roots()[0] if origin.roots() else None
    return BoundaryTensor(tensor.id, shape, byte_size_of(tensor.shape_text), root.op if root is not None else None,
                          root.location if root is not None else None, evidence)


def _inferred(report: SyncReport, graph: GraphCost, producer: dict[int, int], made_by: dict[int, LiveTensor],
              claimed: set[int], position: int) -> list[tuple[int, BoundaryTensor]]:
    """Tensors only autograd holds (saved activations, nn.Linear's transposed weight) are never listed in a
    report, and a graph that reads them first, the backward, gives their parameters no source line. Such a
    parameter, of a shape that exactly the unlisted outputs of one earlier graph have (the most recent one that
    has any), is taken to be them; listed tensors of that shape are assumed to fill parameters first, and scalars
    are never inferred. Checked against torch_xla's own record on the fixtures: no tensor inferred wrongly."""
    if graph.parameters_without_source is None:
        return []
    free: dict[str, int] = defaultdict(int)
    for shape in graph.parameters_without_source:
        free[shape] += 1
    listed = {t.id for t in report.tensors}
    for tensor in report.tensors:
        if _is_device_data(tensor):
            free[without_layout_text(tensor.shape_text)] -= 1
    groups: dict[str, dict[int, list[LiveTensor]]] = defaultdict(lambda: defaultdict(list))
    for tensor_id, source in producer.items():
        if tensor_id in listed or tensor_id in claimed or source >= position:
            continue
        tensor = made_by[tensor_id]
        shape = without_layout_text(tensor.shape_text)
        if not shape.endswith("[]"):  # scalars (losses, step counts, seeds) are too alike to infer
            groups[shape][source].append(tensor)
    out = []
    for shape in sorted(groups):
        if free[shape] <= 0:
            continue
        source = max(groups[shape])
        group = sorted(groups[shape][source], key=lambda t: t.id)
        if len(group) > free[shape]:
            continue
        for tensor in group:
            claimed.add(tensor.id)
            out.append((source, _boundary_tensor(tensor, shape, made_by, "inferred")))
    return out


def _assign(tensors: list[LiveTensor], free: int, producer: dict[int, int]):
    """Fill ``free`` parameter slots with candidates, those computed most recently first (a backward graph reads
    what its own forward just produced; older listed tensors are more often ones an earlier graph read). A group of
    candidates from one graph that does not fit in the slots left cannot be told apart: it is returned as left
    over, and nothing older is claimed."""
    groups: dict[int, list[LiveTensor]] = defaultdict(list)
    for tensor in tensors:
        groups[producer[tensor.id]].append(tensor)
    chosen: list[LiveTensor] = []
    for source in sorted(groups, reverse=True):
        if free <= 0:
            break
        group = groups[source]
        if len(group) > free:
            return chosen, group
        chosen.extend(group)
        free -= len(group)
    return chosen, []


def _parameter_slots(graph: GraphCost) -> dict[str, int]:
    """Entry parameters by shape (layout ignored: torch_xla hands computed data back in its default layout).
    Their source metadata is not a test of where the data came from: torch_xla gives a parameter the line of an
    op that read it."""
    counts: dict[str, int] = defaultdict(int)
    for shape in graph.parameter_shapes:
        counts[shape] += 1
    return counts
