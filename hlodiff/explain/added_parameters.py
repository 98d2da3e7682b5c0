"""New trained tensors of shapes no earlier step had: parameters added to the model mid-run (model surgery).

Review 21 (F2, P1): at step 3 a LoRA adapter is wrapped around a layer (two new parameters f32[2,32] and f32[32,2]),
the base layer frozen and the optimizer rebuilt. The recompiled graph reads two new inputs, writes their updates
back (outputs of their shapes), and trains them (a new ``dot`` for their gradient); the frozen layer's updates
leave the graph. Neither shape is the shape of a tensor the earlier graph read: new parameters, not an existing one
made again (a resized embedding keeps its element type and rank and grows one dimension,
:mod:`hlodiff.explain.resized_input`), not a layer unfrozen (its weights were inputs already), not a pruning
reparametrization (``weight_orig`` and ``weight_mask`` have the weight's own shape). A value synced on some steps
only is read, not written back, and nothing trains it.

A contrastive queue begun at step 3 (thirteenth stop's last read, lr50_tx_queue_begun_late) adds an input of a new
shape, written back (rewritten with cat), and a new dot (the negatives q @ queue.T): every fact above, but the dot
feeds the loss, not the queue. A parameter's update is computed from its gradient, so the output written back for a
new input must be reached from an added dot or convolution (the new weight gradient); the queue's is not.
"""

from __future__ import annotations

from hlodiff.hlo.shapes import without_layout_text


def parameters_added(r) -> bool:
    """:func:`tensors_added`, and an added weight gradient (a ``dot`` or ``convolution``) computes what is written
    back for them (``trains``: :func:`hlodiff.explain.fix_evidence.trains_new_tensors`, given by the caller's
    context, holds for any added dot)."""
    shapes = _added_shapes(r)
    return shapes is not None and _gradient_written_back(r, r.graph._canonical, shapes)


def state_added(r) -> bool:
    """:func:`tensors_added` with no added gradient computing what is written back for them: a state begun at
    this step and kept (a contrastive queue, a memory bank), read by the step, never trained."""
    shapes = _added_shapes(r)
    return shapes is not None and not _gradient_written_back(r, r.graph._canonical, shapes)


def tensors_added(r) -> bool:
    """Every non-scalar input the recompiled graph adds, made at a user line, comes back as an output of its shape
    (updated in place) and has a shape none of the compared graph's inputs has."""
    return _added_shapes(r) is not None


def _added_shapes(r) -> set[str] | None:
    """The new inputs' shapes when :func:`tensors_added` holds, else None."""
    from hlodiff.explain.fix_evidence import dims_key, output_shapes

    if r.diff is None or r.diff.equal or r.closest is None:
        return None
    before = getattr(r.closest, "_canonical", None)
    if before is None:
        return None
    new_inputs = [o.right for c in r.causes if c.kind == "inputs" for o in c.origins
                  if o.left is None and o.right is not None and o.right.opcode == "parameter"
                  and not without_layout_text(o.right.shape).endswith("[]")]
    if not new_inputs or any(not o.frames or all(f.is_library for f in o.frames) for o in new_inputs):
        return None
    held = {dims_key(str(p.shape)) for p in before.module.entry.parameters()}
    after = getattr(r.graph, "_canonical", None)
    if after is None:
        return None
    # every output of the graph: the differ may pair a frozen layer's update (f32[32,32]) with an adapter's
    # (f32[2,32]) as one output whose shape changed rather than one removed and one added
    outs = output_shapes(r.graph, range(len(after.entry.outputs())))
    for shape in (without_layout_text(i.shape) for i in new_inputs):
        if dims_key(shape) in held or shape not in outs:
            return None
        outs.remove(shape)
    return {without_layout_text(i.shape) for i in new_inputs}


def _gradient_written_back(r, after, shapes: set[str]) -> bool:
    """An output of a new input's shape (its update, written back) is computed from an added ``dot`` or
    ``convolution``: a new weight gradient feeds it, as an optimizer step on a new parameter does."""
    entry = after.entry
    grads = {ch.right.name for ch in r.diff.changes if ch.left is None and ch.right is not None
             and ch.right.opcode in ("dot", "convolution")}
    if not grads:
        return False
    written = [o for o in entry.outputs() if o in entry.insts
               and without_layout_text(str(entry.insts[o].shape)) in shapes]
    seen, todo = set(), list(written)
    while todo:
        name = todo.pop()
        if name in grads:
            return True
        for operand in entry.operands.get(name, ()):
            if operand not in seen:
                seen.add(operand)
                todo.append(operand)
    return False
