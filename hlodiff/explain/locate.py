"""Walk from a cause's instructions to the user's line, through every captured source that holds stacks.

HLO text keeps one Python frame per instruction (torch_xla) and that frame is often inside torch
(``torch/optim/sgd.py``). The live tensors printed before the sync know the whole stack of the line that wrote
them, so a cause is traced to the outputs its changed values feed (on the right graph, and on the left one for
what was removed) and takes the innermost user frame of those tensors. The library frame stays as secondary.
Before the tensors, the graph's own stacks (stack-frame table, HLO proto) place what the innermost frame cannot:
reordered outputs where their stacks meet, a JAX argument at the line that made it and the call
(:mod:`hlodiff.explain.argument_lines`), and a change traced by autograd at the forward causes' lines.
When no source holds the line, the cause gets a ``hint`` naming the capture that would.
"""

from __future__ import annotations

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.dumps.graph_record import TRACED_KINDS
from hlodiff.diff.fix_stance import FixStance
from hlodiff.diff.model import Cause, ModuleDiff
from hlodiff.dumps.tensors_report import LiveTensor
from hlodiff.explain.argument_lines import ARGUMENT_KINDS, changed_argument, jitted_function, lead_with_the_call
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.model import SourceFrame, user_frame

OUTSIDE_KINDS = frozenset({"aliasing", "compile_options", "weak_type", "static_argument", "cache_key"})
"""Causes outside the computation: no instruction holds their line; the call site does."""


def output_tensors(graph: GraphSummary, reports: dict) -> list[LiveTensor]:
    """The live tensors behind a graph's outputs, in output order; empty when no report fits the graph.

    torch_xla makes one output per live tensor with pending IR, in tensor-id order; a report that does not give
    exactly that many such tensors is not trusted.
    """
    report = reports.get((graph.record.path, graph.record.index)) or reports.get((graph.record.source,
                                                                                   graph.record.index))
    if report is None:
        return []
    pending = list(report.pending())
    if len(pending) != graph.outputs:
        return []
    return pending


def outputs_added_removed(diff: ModuleDiff) -> tuple[list[int], list[int]]:
    """Output positions added on the right and removed on the left."""
    lefts = {a for a, _ in diff.output_mapping}
    rights = {b for _, b in diff.output_mapping}
    added = [j for j in range(diff.stats.get("right_outputs", 0)) if j not in rights]
    removed = [i for i in range(diff.stats.get("left_outputs", 0)) if i not in lefts]
    return added, removed


def locate_from_tensors(causes: list[Cause], diff: ModuleDiff, left: GraphSummary, right: GraphSummary,
                        reports: dict) -> None:
    """Give causes without a user line the user frames of the live tensors their changes feed. An ``outputs``
    cause also gains those of the tensors behind the outputs that appeared or went when it has lines of its own:
    the tensors are what the user kept (a gradient from ``loss.backward()`` has no instruction that names that
    line, even in a proto's full stack), so the run's answer does not depend on which capture gave the lines."""
    right_tensors, left_tensors = output_tensors(right, reports), output_tensors(left, reports)
    locate_autograd(causes, left, right, backward_lines(right_tensors + left_tensors))
    if not right_tensors and not left_tensors:
        return
    added, removed = outputs_added_removed(diff)
    for cause in causes:
        if cause.kind == "partial" or cause.kind in OUTSIDE_KINDS or (cause.locations and cause.kind != "outputs"):
            continue
        if cause.kind == "outputs":
            picks = [(right_tensors, j) for j in added] + [(left_tensors, i) for i in removed]
        else:
            picks = [(right_tensors, j) for j in outputs_fed_by(cause, right, side=1)]
            picks += [(left_tensors, i) for i in outputs_fed_by(cause, left, side=0)]
        frames: list[SourceFrame] = list(cause.locations)
        lines = {(f.file, f.line) for f in frames}
        for tensors, j in picks[:16]:
            if j < len(tensors):
                frame = user_frame(tensors[j].frames)
                if frame is not None and (frame.file, frame.line) not in lines:
                    frames.append(frame)
                    lines.add((frame.file, frame.line))
        cause.locations = sorted(frames, key=lambda f: (f.file, f.line or 0))[:4]


def locate_autograd(causes: list[Cause], left: GraphSummary, right: GraphSummary,
                    backward: frozenset[tuple[str, int]] = frozenset()) -> None:
    """A change traced by autograd (a ``*_backward`` formula with no user frame: the gradient of a slice at a
    Python int index carries that index too) is made where the forward op it differentiates is: it takes the user
    lines of the forward causes of the same recompilation, not the gradient tensors' ``loss.backward()`` line. With
    no forward cause located, the live tensors still give that line. Such a cause follows the forward causes: it
    moves after them, and its fix says so. ``backward``: the (file name, line) of the live tensors' frames and IR
    nodes traced in a ``*_backward`` function (HLO text keeps no function name)."""
    traced = [c for c in causes if not c.locations and c.kind not in OUTSIDE_KINDS and c.kind != "partial"
              and _traced_by_autograd(c, left, right, backward)]
    if not traced:
        return
    leads = [c for c in causes if c.locations and c.kind not in OUTSIDE_KINDS and c.kind != "partial"]
    if not leads:  # no forward cause located: the gradient's own frames (the live tensors) stand
        return
    forward = [f for c in leads for f in c.locations]
    for cause in traced:
        cause.locations = list(dict.fromkeys(forward))[:4]
        cause.write_fix(f"follows from the {leads[0].kind} change above: its gradient carries the same value",
                        FixStance.FOLLOWS)  # written here, not by a row of the table
        cause.fix_is_final = True
    # a gradient's change follows its forward op's: it goes after the causes it follows
    causes[:] = [c for c in causes if not any(c is t for t in traced)] + traced


def backward_lines(tensors: list[LiveTensor]) -> frozenset[tuple[str, int]]:
    """(file name, line) of the frames and IR nodes the live tensors say were traced in a ``*_backward``
    formula."""
    frames = [f for t in tensors for f in (*t.frames, *(n.location for n in t.ir if n.location is not None))]
    return frozenset((f.file.rsplit("/", 1)[-1], f.line) for f in frames
                     if f.line is not None and f.function and f.function.endswith("_backward"))


def _traced_by_autograd(cause: Cause, left: GraphSummary, right: GraphSummary,
                        backward: frozenset[tuple[str, int]]) -> bool:
    """Whether every instruction of the cause that has a stack was traced inside an autograd formula."""
    seen = False
    for side, graph in ((1, right), (0, left)):
        cm = graph._canonical
        if cm is None:
            continue
        for pair in cause.instructions[:16]:
            inst = cm.entry.insts.get(pair[side]) if pair[side] is not None else None
            frames = cm.frames(inst) if inst is not None else []
            if not frames:
                continue
            if user_frame(frames) is not None or not any(_is_autograd(f, backward) for f in frames):
                return False
            seen = True
    return seen


def _is_autograd(frame: SourceFrame, backward: frozenset[tuple[str, int]]) -> bool:
    if frame.function:
        return frame.function.endswith("_backward") or "/torch/autograd/" in frame.file
    return (frame.file.rsplit("/", 1)[-1], frame.line) in backward


def outputs_fed_by(cause: Cause, graph: GraphSummary, *, side: int) -> list[int]:
    """Output positions of ``graph`` that depend on the cause's instructions of that side (0 left, 1 right):
    the values on the changed path, inputs included."""
    cm = graph._canonical
    if cm is None:
        return []
    cc = cm.entry
    targets = {pair[side] for pair in cause.instructions if pair[side] is not None and pair[side] in cc.insts}
    if not targets:
        return []
    reached: list[int] = []
    for j, out in enumerate(cc.outputs()):
        stack, seen = [out], set()
        while stack:
            node = stack.pop()
            if node in targets:
                reached.append(j)
                break
            if node in seen:
                continue
            seen.add(node)
            stack.extend(cc.operands.get(node, ()))
    return reached


def hint_for(cause: Cause, graph: GraphSummary, *, has_reports: bool) -> str | None:
    """Which capture would hold the user's line of a cause that has none."""
    if cause.locations:
        return None
    record = graph.record
    from hlodiff.hlo.producer import producer_from_name

    producer = producer_from_name(graph.name or record.module_name or "")
    jax = producer == "jax"
    if not has_source_metadata(graph) and jax:
        return ("JAX wrote no source line into this module: an operation JAX ran itself, outside your jitted "
                "functions (jnp.asarray, a device_put's staging); JAX records no caller for it")
    if not has_source_metadata(graph):
        if record.kind in TRACED_KINDS and has_op_metadata(graph):
            return ("source lines were off whenever this graph ran (`hlodiff record --lines auto` records them "
                    "while a run warms up or compiles, and takes a graph's lines from its next occurrence): rerun "
                    "with `hlodiff record --lines always -- ...`")
        if record.kind in TRACED_KINDS:
            return ("the HLO has no source metadata: rerun with XLA_HLO_DEBUG=1 XLA_IR_DEBUG=1 "
                    "(`hlodiff record -- python train.py` sets them and captures live-tensor reports)")
        if producer == "torch_xla":
            return "the HLO has no source metadata: rerun with XLA_HLO_DEBUG=1 XLA_IR_DEBUG=1"
        return "the HLO has no source metadata: rerun with XLA_HLO_DEBUG=1 (torch_xla) or a JAX that dumps stack frames"
    if cause.kind == "compile_options":
        return ("compiler options are set where the function is jitted (jax.jit(..., compiler_options=...)), in "
                "XLA_FLAGS or the environment: no capture records that line")
    if cause.kind in OUTSIDE_KINDS and record.kind not in TRACED_KINDS and jax:  # a torch_xla dump folder is not JAX
        return "rerun with JAX_EXPLAIN_CACHE_MISSES=1 (`hlodiff record` keeps its log): JAX names the call site"
    if record.kind in TRACED_KINDS and not has_reports:
        return ("the HLO names only library frames here: print torch_xla._XLAC._xla_tensors_report(0, str(device)) "
                "before each sync (or use `hlodiff record`), whose stacks reach your line")
    if jax:
        return ("JAX keeps no stack of yours for these instructions: they are inside a library function (the "
                "call site, when another cause names it, is your line)")
    if record.proto_path:
        return ("no captured stack reaches your code, the HLO proto's included: these instructions are made inside "
                "torch/torch_xla with no Python caller of yours")
    return ("no captured stack reaches your code: dump the HLO proto (XLA_FLAGS=--xla_dump_to=DIR "
            "--xla_dump_hlo_as_proto with XLA_HLO_DEBUG=1), whose stack_frame_index keeps full stacks")


def has_op_metadata(graph: GraphSummary) -> bool:
    """torch_xla wrote ``op_type`` metadata (``XLA_HLO_DEBUG`` was set) although it recorded no frames."""
    cm = graph._canonical
    return cm is not None and any("op_type=" in meta for _, inst in cm.module.instructions()
                                  if (meta := inst.attrs.get("metadata")))


def has_source_metadata(graph: GraphSummary) -> bool:
    cm = graph._canonical
    if cm is None:
        return False
    return any("source_file=" in meta or "stack_frame_id=" in meta
               for _, inst in cm.module.instructions() if (meta := inst.attrs.get("metadata")))


def locate_from_stacks(causes: list[Cause], graph: GraphSummary, sources: SourceLines) -> None:
    """Lines from the stacks the graph itself keeps (stack-frame table, HLO proto): reordered outputs where their
    stacks meet; a JAX argument whose type or shape changed at the call that passed it (see
    :func:`lead_with_the_call`). Live tensors, when a report fits, add theirs afterwards
    (:func:`locate_from_tensors`); JAX's log, when given, names the call site (:mod:`hlodiff.explain.jax_causes`)."""
    locate_reordered(causes, graph)
    if graph.record.kind in TRACED_KINDS:
        return
    function = jitted_function(graph)
    for cause in causes:
        if cause.kind in ARGUMENT_KINDS:
            argument = changed_argument(cause, graph)
            if argument is not None:
                lead_with_the_call(cause, None, argument, function, sources=sources)


def locate_reordered(causes: list[Cause], graph: GraphSummary) -> None:
    """Give a ``reordered`` cause without a user line the stacks of its moved outputs' defining instructions (the
    stack-frame table, or the HLO proto's full stacks): where those stacks meet is the line that ran the work in
    another order."""
    for cause in causes:
        if cause.kind != "reordered" or cause.locations:
            continue
        names = [right for _, right in cause.instructions if right is not None]
        stacks = instruction_stacks(graph, names)
        others: list[list[SourceFrame]] = []
        if len(stacks) == 1 and graph._canonical is not None:
            # one output said to move (the others shifted around it): its stack meets theirs where they ran
            others = instruction_stacks(graph, [n for n in graph._canonical.entry.outputs() if n not in names])
        cause.locations = meeting_frames(stacks, others)[:4]


def instruction_stacks(graph: GraphSummary, names: list[str]) -> list[list[SourceFrame]]:
    """The Python stacks (innermost first) of the entry instructions ``names`` of ``graph``. An instruction with no
    user frame of its own (a reshape or copy torch_xla adds before an output) takes the first stack with one among
    its operands, nearest first."""
    cm = graph._canonical
    if cm is None:
        return []
    cc = cm.entry
    stacks = []
    for name in names:
        stack = _nearest_stack(cm, cc, name)
        if stack:
            stacks.append(stack)
    return stacks


def _nearest_stack(cm, cc, name: str, limit: int = 64) -> list[SourceFrame]:
    queue, seen = [name], {name}
    for node in queue[:limit]:
        inst = cc.insts.get(node)
        if inst is None:
            continue
        frames = cm.frames(inst)
        if user_frame(frames) is not None:
            return frames
        for op in cc.operands.get(node, ()):
            if op not in seen:
                seen.add(op)
                queue.append(op)
    return []


def meeting_frames(stacks: list[list[SourceFrame]], others: list[list[SourceFrame]] = ()) -> list[SourceFrame]:
    """Where the stacks of values made in another order meet, then where each was made: the innermost user frame
    they all share, when it calls *different* functions for them (the line that runs the callbacks or iterates a
    dict of modules, which decides their order; not a ``main()`` both merely run under) first, then each stack's
    innermost user frame. A single stack meets ``others`` (the stacks of the values around it) the same way.
    Empty when no stack reaches user code."""
    user_stacks = [mine for s in stacks if (mine := [f for f in s if not f.is_library])]
    if not user_stacks:
        return []
    found: list[SourceFrame] = []
    if len(user_stacks) > 1:
        shared = _dispatch_frame(user_stacks)
    else:
        around = [mine for s in others if (mine := [f for f in s if not f.is_library])]
        shared = next((d for s in around if (d := _dispatch_frame([user_stacks[0], s])) is not None), None)
    if shared is not None:
        found.append(shared)
    for frame in sorted({s[0] for s in user_stacks}, key=lambda f: (f.file, f.line or 0)):
        if frame not in found:
            found.append(frame)
    return found


def _dispatch_frame(user_stacks: list[list[SourceFrame]]) -> SourceFrame | None:
    """The innermost frame all stacks (innermost first) share, if the frames just inside it call different
    functions: one line dispatching to several callables."""
    depth = 0
    for outer in zip(*(reversed(s) for s in user_stacks)):  # outermost first
        if len(set(outer)) != 1:
            break
        depth += 1
    if depth == 0:
        return None
    inner = {s[len(s) - depth - 1].function if len(s) > depth else None for s in user_stacks}
    return user_stacks[0][len(user_stacks[0]) - depth] if len(inner) > 1 else None


def locate_carried(causes: list[Cause], graph: GraphSummary, members: list[GraphSummary],
                   earlier: list[GraphSummary]) -> None:
    """An input that changed shape is, in a loop, usually what the step before handed back: when every
    output of the family's previous graph with the new input's shape was made at one user line, that line leads the
    cause's locations (review 2, F11: a queue grown by ``torch.cat`` at :24 was placed at its reader, :18). The
    readers stay listed after it."""
    cm = graph._canonical
    at = next((i for i, g in enumerate(members) if g is graph), 0)
    if cm is None or at == 0:
        return
    prev = members[at - 1]
    twin = prev if getattr(prev, "_canonical", None) is not None else next(
        (g for g in reversed(earlier) if g.cache_key == prev.cache_key and getattr(g, "_canonical", None)), None)
    if twin is None:
        return
    pc = twin._canonical.entry
    outs = pc.outputs()
    for cause in causes:
        if cause.kind != "shape":  # a size handed on; an added input (a scalar, a view) has too many look-alikes
            continue
        params = [r for _, r in cause.instructions if r is not None and r in cm.entry.insts
                  and cm.entry.insts[r].opcode == "parameter"]
        for name in params[:1]:
            shape = str(cm.entry.insts[name].shape).split("{", 1)[0]
            if any(p != name and str(cm.entry.insts[p].shape).split("{", 1)[0] == shape
                   for p in cm.entry.parameters()):
                # another input has that shape (review 4, F4: a short batch f32[2,8] beside a Linear(8, 2)
                # weight): the previous step's output of that shape is that input's new value, not this one's
                continue
            same = [o for o in outs if str(pc.insts[o].shape).split("{", 1)[0] == shape]
            frames = [user_frame(s) for s in instruction_stacks(twin, same)] if same else []
            lines = {(f.file, f.line) for f in frames if f is not None}
            if len(lines) != 1 or None in frames or len(frames) != len(same):
                continue  # outputs of that shape made at several lines (or by library code only): no one maker
            frame = frames[0]
            if frame is not None:
                cause.locations = [frame] + [f for f in cause.locations
                                             if (f.file, f.line) != (frame.file, frame.line)][:3]
