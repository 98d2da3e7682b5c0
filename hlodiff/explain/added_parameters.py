"""New trained tensors of shapes no earlier step had: parameters added to the model mid-run (model surgery).

Review 21 (F2, P1): at step 3 a LoRA adapter is wrapped around a layer (two new parameters f32[2,32] and f32[32,2]),
the base layer frozen and the optimizer rebuilt. The recompiled graph reads two new inputs, writes their updates
back (outputs of their shapes), and trains them (a new ``dot`` for their gradient); the frozen layer's updates
leave the graph. Neither shape is the shape of a tensor the earlier graph read: new parameters, not an existing one
made again (a resized embedding keeps its element type and rank and grows one dimension,
:mod:`hlodiff.explain.resized_input`), not a layer unfrozen (its weights were inputs already), not a pruning
reparametrization (``weight_orig`` and ``weight_mask`` have the weight's own shape). A value synced on some steps
only is read, not written back, and nothing trains it.
"""

from __future__ import annotations

from hlodiff.hlo.shapes import without_layout_text


def parameters_added(r) -> bool:
    """Every non-scalar input the recompiled graph adds, made at a user line, comes back as an output of its shape
    (updated in place) and has a shape none of the compared graph's inputs has, and the new tensors are trained (``trains``: :func:`hlodiff.explain.fix_evidence.trains_new_tensors`, given by the caller's context)."""
    from hlodiff.explain.fix_evidence import dims_key, output_shapes

    if r.diff is None or r.diff.equal or r.closest is None:
        return False
    before = getattr(r.closest, "_canonical", None)
    if before is None:
        return False
    new_inputs = [o.right for c in r.causes if c.kind == "inputs" for o in c.origins
                  if o.left is None and o.right is not None and o.right.opcode == "parameter"
                  and not without_layout_text(o.right.shape).endswith("[]")]
    if not new_inputs or any(not o.frames or all(f.is_library for f in o.frames) for o in new_inputs):
        return False
    held = {dims_key(str(p.shape)) for p in before.module.entry.parameters()}
    after = getattr(r.graph, "_canonical", None)
    if after is None:
        return False
    # every output of the graph: the differ may pair a frozen layer's update (f32[32,32]) with an adapter's
    # (f32[2,32]) as one output whose shape changed rather than one removed and one added
    outs = output_shapes(r.graph, range(len(after.entry.outputs())))
    for shape in (without_layout_text(i.shape) for i in new_inputs):
        if dims_key(shape) in held or shape not in outs:
            return False
        outs.remove(shape)
    return True
