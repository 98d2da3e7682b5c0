"""One input handed over in two formats: an integer tensor on some steps, a float tensor of another rank on others.

Round 24 (r24_tx_mixup_soft_hard): a collate that mixes about half the batches hands the model soft targets, a
float32 ``[8, 10]`` mixture of one-hot rows, and the other half hard int64 ``[8]`` class indices. The graph gains
one input and loses the other at the line that moves the batch in, with the same rows (the batch) and nothing else
of size changed: the same data in another format, not a block of the model traced on some steps only (whose
parameters come and go with it: a head picked by an ``if``, ``rev7_two_heads``) nor a key present on some batches
(an input added with nothing removed: ``review3_collate_key``). The fix is the data's: one format every step."""

from __future__ import annotations

import re

from hlodiff.diff.model import Cause, InstructionRef

_SHAPE = re.compile(r"^([a-z]+)(\d*)\[([^\]]*)\]")


def _format(ref: InstructionRef) -> tuple[str, tuple[str, ...]] | None:
    """(element family, dims) of a non-scalar parameter: ``("int", ("8",))`` for ``s64[8]``."""
    m = _SHAPE.match(ref.shape)
    if m is None or ref.opcode != "parameter":
        return None
    dims = tuple(d.strip() for d in m.group(3).split(",") if d.strip())
    if not dims:
        return None  # a scalar: a Python number moved in, not the batch's data
    kind = m.group(1)
    family = "int" if kind in ("s", "u") else "float" if kind in ("f", "bf") else kind
    return family, dims


def dot_shapes(graph) -> frozenset[str]:
    """Shapes (no layout) of the dots in a graph's entry computation (its canonical module, when it has one)."""
    cm = getattr(graph, "_canonical", None)
    if cm is None:
        return frozenset()
    return frozenset(str(i.shape.without_layout()) for i in cm.entry.insts.values() if i.opcode == "dot")


def format_switch(cause: Cause, class_shapes: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The two shapes (``s64[8]``, ``f32[8,10]``) when the cause's only non-scalar inputs that changed are one
    gone and one come, an integer and a float tensor of different ranks with the same first dimension, and the
    float one has the shape of a dot the graph computes (``class_shapes``: the logits over the classes its last
    axis counts); else None. Without that class axis, an int input and a float one of one batch are as likely
    token ids and dense features handed in instead (the eleventh stop's read)."""
    if cause.kind != "inputs":
        return None
    gone = [f for c in cause.origins if c.right is None and c.left is not None
            for f in [(_format(c.left), c.left.shape)] if f[0] is not None]
    came = [f for c in cause.origins if c.left is None and c.right is not None
            for f in [(_format(c.right), c.right.shape)] if f[0] is not None]
    if len(gone) != 1 or len(came) != 1:
        return None
    (a, a_shape), (b, b_shape) = gone[0], came[0]
    if {a[0], b[0]} != {"int", "float"} or len(a[1]) == len(b[1]) or a[1][0] != b[1][0]:
        return None
    soft = (a_shape if a[0] == "float" else b_shape).split("{", 1)[0]
    if soft not in class_shapes:
        return None
    return a_shape.split("{", 1)[0], b_shape.split("{", 1)[0]
