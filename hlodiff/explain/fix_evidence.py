"""How one recompilation's graph changed, beyond its causes' kinds, read for the fix rules: whether it only adds
(the earlier graph contained in it), whether its new ops read its new inputs, whether the added inputs repeat ones
it keeps (a Python loop over a list) or are state it returns, whether inputs and outputs are a state updated in
place or updates removed, whether a family's graphs or scalar inputs grow step by step, and whether the change
lies in a library's first step.

Pure readers of the explanation's recompilations; :mod:`hlodiff.explain.fix_context` puts what they find into a
:class:`~hlodiff.diff.fixes.FixContext`. The op that made a value is :mod:`hlodiff.explain.producing_ops`, the
values a family went through :mod:`hlodiff.explain.family_values`, what a static argument sets
:mod:`hlodiff.explain.static_argument`, the graphs after early reads :mod:`hlodiff.explain.after_reads`.
"""

from __future__ import annotations

from hlodiff.hlo.installed import package_path
from hlodiff.explain.cause_facts import repeats_kept_inputs
from hlodiff.hlo.shapes import PRINTED_DIMS, without_layout_text


def library_only_refs(cause) -> list | None:
    """The changed instructions of ``cause`` that carry frames, when every frame of each is library code; None as
    soon as one has a frame of the user's (then the change is no library's own)."""
    refs = []
    for change in cause.origins:
        for ref in (change.left, change.right):
            if ref is None or not ref.frames:
                continue
            if not all(f.is_library for f in ref.frames):
                return None
            refs.append(ref)
    return refs


def library_step(cause, ctx) -> str:
    """The library file whose first step this change is (``torch/optim/adamw.py``), when only the family's first
    graph differs (warm-up only) and every changed instruction's frames are library code."""
    if not (ctx.first_recompilation and ctx.pattern == "warm-up only"):
        return ""
    refs = library_only_refs(cause)
    files = [ref.frames[0].file for ref in refs or ()]
    if not files:
        return ""
    top = max(set(files), key=files.count)
    return package_path(top)


def ops_use_new_inputs(r) -> bool:
    """Every operation an ``ops`` cause adds reads (within a few steps) a parameter an ``inputs`` cause added: the
    new ops come with the new argument (``if "mask" in batch: x = x * batch["mask"]``), not on their own. The same
    read the other way: the ops the recompiled graph lost read the parameters it lost (a loss term traced only when
    its labels are in the batch, seen from a step without them)."""
    return _ops_read_params(r, added=True) or _ops_read_params(r, added=False)


def only_added(r) -> bool:
    """Every change of the recompilation adds (an input, an instruction, an output) and none removes: the earlier
    graph is contained in this one. A value synced early on some steps is the other way round: the ops that
    computed it are gone where it arrives as an input (review 2, F3: SGD's grads created on step 0, then added into)."""
    changes = [(c.left, c.right) for cause in r.causes for c in cause.origins]
    changes += [pair for cause in r.causes for pair in cause.instructions]
    return bool(changes) and all(right is not None for _, right in changes) and any(
        left is None for left, _ in changes)


def _ops_read_params(r, added: bool) -> bool:
    graph = r.graph if added else r.closest
    cm = getattr(graph, "_canonical", None) if graph is not None else None
    if cm is None:
        return False
    def side(o):
        return (o.right if o.left is None else None) if added else (o.left if o.right is None else None)
    new_params = {(x.computation, x.name) for c in r.causes if c.kind == "inputs" for o in c.origins
                  if (x := side(o)) is not None and x.opcode == "parameter"}
    ops = [x for c in r.causes if c.kind == "ops" for o in c.origins if (x := side(o)) is not None]
    if not new_params or not ops:
        return False
    reached: set[tuple[str, str]] = set()
    for comp_name, name in new_params:
        comp = cm.computations.get(comp_name)
        if comp is None:
            continue
        frontier, seen = [name], {name}
        for _ in range(8):
            frontier = [u for n in frontier for u in comp.users(n) if u not in seen]
            seen.update(frontier)
        reached |= {(comp_name, n) for n in seen}
    feeding = [a for a in ops if (a.computation, a.name) in reached]
    return bool(feeding) and len(feeding) * 2 >= len(ops)


def inputs_repeat(r) -> bool:
    """The inputs one graph has and the other lacks are more of the same: none is a scalar and each has the shape
    (layout aside) of an input both graphs keep. A Python loop over a list whose length changes traces the same
    computation once more per item (micro-batches of an accumulation group, the short group at an epoch's end),
    unlike a block skipped, a head whose labels are absent or a state created (gradients accumulated, optimizer
    moments): those inputs are weights or state, which the graph also returns, updated."""
    for added in (True, False):
        graph, other = (r.graph, r.closest) if added else (r.closest, r.graph)
        cm = getattr(graph, "_canonical", None) if graph is not None else None
        if cm is None or other is None:
            continue
        changed = [x for c in r.causes if c.kind == "inputs" for o in c.origins
                   if (x := (o.right if o.left is None else None) if added else (o.left if o.right is None else None))
                   is not None and x.opcode == "parameter"]
        if not changed:
            continue
        if repeats_kept_inputs(cm.entry, changed):
            return True
    return False


def state_returned(r) -> bool:
    """Every input the recompiled graph gained comes back as one of its outputs of that shape (layout aside): state
    the step threads from call to call (a momentum that was None on the first call, returned updated), not an
    argument the caller makes fresh each call (a mask passed on some batches only, never returned)."""
    cm = getattr(r.graph, "_canonical", None)
    gained = [without_layout_text(o.right.shape) for c in r.causes if c.kind == "inputs" for o in c.origins
              if o.left is None and o.right is not None and o.right.opcode == "parameter"]
    if cm is None or not gained:
        return False
    outputs = [str(cm.entry.insts[n].shape.without_layout()) for n in cm.entry.outputs() if n in cm.entry.insts]
    for shape in gained:
        if shape not in outputs:
            return False
        outputs.remove(shape)
    return True


def _scalar_shape(shape: str) -> bool:
    return shape.endswith("[]") or "[" not in shape


def slices_rearranged(r) -> bool:
    """Every slice whose bounds look changed takes bounds that the other graph also slices out of an operand of
    the same shape (``tgt[:, 0]``, ``tgt[:, 2]`` in both graphs, paired otherwise because the ops around them
    changed): no bound changed, the slices were only matched across a different arrangement."""
    pairs = [(o.left, o.right) for c in r.causes if c.kind == "attribute" for o in c.origins
             if o.left is not None and o.right is not None and "attribute:slice" in o.kinds]
    if not pairs or r.closest is None:
        return False
    left_cm, right_cm = getattr(r.closest, "_canonical", None), getattr(r.graph, "_canonical", None)
    if left_cm is None or right_cm is None:
        return False
    left_all, right_all = _slice_keys(left_cm), _slice_keys(right_cm)
    for left, right in pairs:
        lk, rk = _slice_key(left_cm, left), _slice_key(right_cm, right)
        if lk is None or rk is None or lk not in right_all or rk not in left_all:
            return False
    return True


def _slice_key(cm, ref) -> tuple[str, str] | None:
    comp = cm.computations.get(ref.computation)
    inst = comp.insts.get(ref.name) if comp is not None else None
    if inst is None or not inst.operands or inst.operands[0] not in comp.insts:
        return None
    return str(comp.insts[inst.operands[0]].shape.without_layout()), inst.attrs.get("slice", "")


def _slice_keys(cm) -> set[tuple[str, str]]:
    return {(str(comp.insts[i.operands[0]].shape.without_layout()), i.attrs.get("slice", ""))
            for comp in cm.computations.values() for i in comp.instructions()
            if i.opcode == "slice" and i.operands and i.operands[0] in comp.insts}


def graph_grows(members: list, compiled: list) -> tuple[int, ...]:
    """Instruction counts of the compiled graphs when every whole graph of the family compiled (no cache hit), at
    least three, each larger than the one before: the traced history grows with the step (a state carried from
    step to step keeps its autograd graph). Empty otherwise."""
    if len(compiled) < 3 or len(members) != len(compiled):
        return ()
    counts = tuple(g.instructions for g in compiled)
    return counts if all(b > a for a, b in zip(counts, counts[1:])) else ()


def reads_pile_up(members: list, compiled: list) -> bool:
    """A growing family (:func:`graph_grows` over all its graphs, ``members``) whose graphs, all but the last, ran early for a read (``.item()``,
    print): nothing marked the step between the reads, so each read executed every step still pending since the
    last mark (the optimizer's updates never materialised) and its graph holds more steps than the one before
    (pytorch/xla#2783; round 31, r31_tx_loader_switch: a plain DataLoader after MpDeviceLoader, which had marked
    the step per batch). A carried history read each step after a sync has whole graphs between its reads."""
    from hlodiff.explain.families import is_partial

    return bool(graph_grows(members, compiled)) and all(is_partial(g) for g in compiled[:-1])


def family_reads_pile_up(family) -> bool:
    """:func:`reads_pile_up` over all of a family's graphs, the cut ones included (the family's whole graphs
    alone are none or one here: every graph but the last is a read)."""
    return reads_pile_up(list(family.members), list(family.compiled))


def scalars_grow(compiled: list) -> bool:
    """The compiled graphs of a growing family (:func:`graph_grows`) take the same non-scalar inputs and one or
    more scalar inputs more each time: a Python list of device scalars (losses, metrics) combined in the step
    (``sum(history)``) holds one more item each step. A carried autograd history adds the earlier steps' saved
    tensors instead (an RNN's hidden state, a feature centre: non-scalar), so it never reads so."""
    shapes = []
    for g in compiled:
        cm = getattr(g, "_canonical", None)
        if cm is None:
            return False
        params = [without_layout_text(str(p.shape)) for p in cm.module.entry.parameters()]
        shapes.append((sorted(x for x in params if not x.endswith("[]")), sum(x.endswith("[]") for x in params)))
    return len(shapes) >= 3 and all(a[0] == b[0] and b[1] > a[1] for a, b in zip(shapes, shapes[1:]))


def joins_grow(recompilation) -> bool:
    """Some change of the recompilation is a ``concatenate`` joining another number of operands (torch.stack or
    torch.cat of a Python list, :mod:`hlodiff.diff.origin_facts`' ``join_grows``), whichever cause heads it: the
    inputs a list of tensors adds each step come with the join that reads them (crossings round 5,
    x5c_grad_list_unreset: a gradient history never reset heads with its added f32[64,16] input)."""
    return any("operand_count" in ch.kinds and ch.left is not None and ch.left.opcode == "concatenate"
               for c in recompilation.causes for ch in c.origins)


def output_shapes(graph, positions) -> list[str]:
    cm = getattr(graph, "_canonical", None)
    if cm is None:
        return []
    outputs = cm.entry.outputs()
    return [without_layout_text(str(cm.entry.insts[outputs[j]].shape)) for j in positions if j < len(outputs)]


def updated_in_place(r) -> bool:
    """Every non-scalar input added comes back as an added output of its shape, and user lines made the inputs
    (not an optimizer's or autograd's state): tensors read and rewritten on these steps only (an EMA)."""
    from hlodiff.explain.locate import outputs_added_removed

    if r.diff is None or r.diff.equal:
        return False
    added_out, removed_out = outputs_added_removed(r.diff)
    new_inputs = [o.right for c in r.causes if c.kind == "inputs" for o in c.origins
                  if o.left is None and o.right is not None and o.right.opcode == "parameter"
                  and not without_layout_text(o.right.shape).endswith("[]")]
    if not added_out or removed_out:
        return False
    if not new_inputs:  # tensors the other graph already held: its outputs, rewritten here, are all weight-shaped
        cm = getattr(r.graph, "_canonical", None)
        params = {dims_key(str(p.shape)) for p in cm.module.entry.parameters()} if cm is not None else set()
        outs = output_shapes(r.graph, added_out)
        return len(outs) >= 2 and all(dims_key(o) in params and not o.endswith("[]") for o in outs) and any(
            not f.is_library for c in r.causes if c.kind == "outputs" for f in c.locations)
    if any(not o.frames or all(f.is_library for f in o.frames) for o in new_inputs):
        return False
    outs = output_shapes(r.graph, added_out)
    for shape in (without_layout_text(i.shape) for i in new_inputs):
        if shape not in outs:
            return False
        outs.remove(shape)
    return True


def trains_new_tensors(r) -> bool:
    """The tensors this graph adds are trained, not merely updated: a gradient op is added
    (:func:`gradient_op_added`: layers unfrozen) or the new inputs feed work the other graph had too
    (:func:`new_inputs_feed_step`: a pruning reparametrization's weight_orig * weight_mask read by the kept matmul).
    An EMA of the weights started after a warm-up (last read of the twelfth stop, lr_ema_after_warmup) adds inputs
    that only its own multiplies and adds read, back into its own outputs: neither. Two kinds of evidence, kept as
    two facts (``gradient_added``, ``feeds_step``) so a rule can ask for one; the rows that take either ask this."""
    return gradient_op_added(r) or new_inputs_feed_step(r)


def gradient_op_added(r) -> bool:
    """The graph adds a ``dot`` or a ``convolution``: the new tensors' weight gradient when layers are unfrozen or
    parameters added. It says nothing of what the op reads: a forward in eval over new layers, or a queue read for
    negatives (lr50_tx_queue_begun_late), adds one too."""
    if r.diff is None or r.diff.equal:
        return False
    return any(ch.right.opcode in ("dot", "convolution") for ch in r.diff.changes
               if ch.left is None and ch.right is not None)


def new_inputs_feed_step(r) -> bool:
    """An input the graph adds reaches, through ops it adds, an instruction both graphs have (not the root): the new
    tensors feed the step's own work (prune's weight_orig and weight_mask into the kept forward matmul), not only
    their own update (an EMA's inputs, read by its multiplies and adds, back into its outputs)."""
    if r.diff is None or r.diff.equal:
        return False
    cm = getattr(r.graph, "_canonical", None)
    if cm is None:
        return False
    added = {ch.right.name for ch in r.diff.changes if ch.left is None and ch.right is not None}
    entry = cm.entry
    new_inputs = [o.right.name for c in r.causes if c.kind == "inputs" for o in c.origins
                  if o.left is None and o.right is not None and o.right.opcode == "parameter"]
    seen, todo = set(), [n for n in new_inputs if n in entry.insts]
    while todo:
        name = todo.pop()
        for user in entry.users(name):
            if user == entry.root or user in seen:
                continue
            if user not in added:
                return True  # a new input reaches work both graphs have: it feeds the step itself
            seen.add(user)
            todo.append(user)
    return False


def updates_removed(r) -> bool:
    """Only outputs went (none added), two or more, at least half of them shaped like a non-scalar parameter of the
    earlier graph (the rest are the backward's intermediates): the gradients and updated weights of parameters that
    stopped training."""
    from hlodiff.explain.locate import outputs_added_removed

    if r.diff is None or r.diff.equal or r.closest is None or getattr(r.closest, "_canonical", None) is None:
        return False
    added_out, removed_out = outputs_added_removed(r.diff)
    if added_out or len(removed_out) < 2:
        return False
    cm = r.closest._canonical
    params = {dims_key(str(p.shape)) for p in cm.module.entry.parameters()
              if not without_layout_text(str(p.shape)).endswith("[]")}
    like = [s for s in output_shapes(r.closest, removed_out) if dims_key(s) in params]
    return len(like) >= 2 and 2 * len(like) >= len(removed_out)


def donors_updated(r) -> bool:
    """Review 21, F4: torch_xla stopped donating some parameters' buffers (donation lost, none gained) and each of
    them is shaped like an output that went with the updates (:func:`updates_removed`): the step no longer
    overwrites those tensors because it no longer updates them (frozen). The donation follows from the freeze;
    "update the same tensors in place every step" would undo it."""
    from hlodiff.explain.locate import outputs_added_removed

    if not updates_removed(r):
        return False
    return _donation_matches(r, lost=True, outputs=output_shapes(r.closest, outputs_added_removed(r.diff)[1]))


def donors_trained(r) -> bool:
    """The mirror of :func:`donors_updated` (ulmfit_unfreeze): donation only gained, by parameters each shaped like
    an output the graph added, and the graph trains them (:func:`trains_new_tensors`: a new weight gradient), so
    they are unfrozen, not an EMA updated in place from this step."""
    from hlodiff.explain.locate import outputs_added_removed

    if r.diff is None or r.diff.equal or not trains_new_tensors(r):
        return False
    return _donation_matches(r, lost=False, outputs=output_shapes(r.graph, outputs_added_removed(r.diff)[0]))


def _donation_matches(r, lost: bool, outputs: list[str]) -> bool:
    """Every aliasing cause only lost (``lost``) or only gained donation, and each parameter it names (left side
    when lost, right side when gained) is shaped like one of ``outputs``, one output per parameter."""
    aliasing = [c for c in r.causes if c.kind == "aliasing"]
    if not aliasing or any(c.removed != lost or c.added == lost for c in aliasing):
        return False
    graph = r.closest if lost else r.graph
    cm = getattr(graph, "_canonical", None)
    names = [a if lost else b for c in aliasing for a, b in c.instructions]
    if cm is None or not names:
        return False
    outs = [dims_key(s) for s in outputs]
    for name in names:
        inst = cm.entry.insts.get(name) if name is not None else None
        key = dims_key(without_layout_text(str(inst.shape))) if inst is not None else None
        if key not in outs:
            return False
        outs.remove(key)
    return True


def dims_key(shape: str) -> tuple:
    """Element type and sorted dimensions: a gradient kept transposed (``f32[8,16]`` of an ``f32[16,8]`` weight)
    matches its parameter."""
    m = PRINTED_DIMS.search(shape)
    return (shape.split("[", 1)[0], tuple(sorted(m.group(1).split(","))) if m else ())
