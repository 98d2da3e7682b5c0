"""Whether a recompilation is one parameter's in-place update leaving the step while its gradient is still computed:
the optimizer holds a tensor the model no longer uses (a weight tied or replaced after the optimizer was built), so
that tensor gets no gradient and torch.optim skips it, while the weight now used in its place gets both gradients.

Dynamo round 27 (d27_tie_late: `net.head.weight = net.emb.weight` at step 2) lost one f32[50,16] output, the SGD
update of the head's old weight, with nothing but elementwise work computing it. A weight frozen
(requires_grad_(False)) or a layer skipped loses its gradient's dot too (``updates_removed``, outputs_frozen), and an
EMA or a metric is no parameter's update: neither is this.
"""

from __future__ import annotations

from hlodiff.hlo.shapes import without_layout_text

GRADIENT_WORK = frozenset({"dot", "convolution", "reduce", "reduce-window", "select-and-scatter", "custom-call"})
"""Opcodes a gradient is computed with: a removed update whose only work is elementwise kept its gradient."""


def update_dropped(r) -> bool:
    """One output removed, none added, shaped like a non-scalar parameter of the earlier graph, and every
    instruction removed with it elementwise (the update ``p - lr * g``, not the gradient's dot or reduce)."""
    from hlodiff.explain.locate import outputs_added_removed

    if r.diff is None or r.diff.equal or r.closest is None or getattr(r.closest, "_canonical", None) is None:
        return False
    added_out, removed_out = outputs_added_removed(r.diff)
    if added_out or len(removed_out) != 1:
        return False
    cm = r.closest._canonical
    outputs = cm.entry.outputs()
    if removed_out[0] >= len(outputs):
        return False
    shape = without_layout_text(str(cm.entry.insts[outputs[removed_out[0]]].shape))
    params = {without_layout_text(str(p.shape)) for p in cm.module.entry.parameters()}
    if shape.endswith("[]") or shape not in params:
        return False
    removed = [ch.left for ch in r.diff.changes if ch.left is not None and ch.right is None]
    return bool(removed) and not any(i.opcode in GRADIENT_WORK for i in removed)
