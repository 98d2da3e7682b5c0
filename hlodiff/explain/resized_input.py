"""A tensor the step reads replaced by one of another size, its old rows copied in, in the same step.

Round 9 (embed_vocab_grow): new tokens added mid-run, the embedding rebuilt with 56 rows instead of 50 and the old
50 copied in (the ``resize_token_embeddings`` recipe). The step that follows reads both tables: the new one is an
input the earlier graph lacked, and the ops over the table changed shape from 50 to 56 rows. Read alone, an added
input says "a value synced on some steps only"; with the shape change it says what it is: a parameter or buffer
made again at another size. A last batch or a growing cache changes the shape of an input both graphs have (a
shape change, not an added input), and their old size is no longer read, so neither makes this fact.
"""

from __future__ import annotations

import re

from hlodiff.hlo.shapes import without_layout_text

_DIMS = re.compile(r"^(\w+)\[([\d,]*)\]$")


def _resized(old: str, new: str) -> bool:
    """Same element type and rank, one dimension grown, the others kept: f32[50,16] -> f32[56,16] (rows added to a
    table, classes to a head). Review 21 (F2): a LoRA adapter wrapped around a f32[32,32] layer adds its f32[2,32]
    factor, and a broadcast over the layer's shape becomes one over the factor's, f32[32,32] -> f32[2,32]: a
    dimension shrunk to another tensor's, not a table made again larger with its old rows copied in."""
    a, b = _DIMS.match(old), _DIMS.match(new)
    if not (a and b and a.group(1) == b.group(1) and old != new and a.group(2) != ""):
        return False
    left, right = [int(x) for x in a.group(2).split(",")], [int(x) for x in b.group(2).split(",")]
    changed = [(x, y) for x, y in zip(left, right) if x != y]
    return len(left) == len(right) and len(changed) == 1 and changed[0][1] > changed[0][0]


def resized_input(r) -> bool:
    """An input the graph added has the new shape of an instruction whose shape changed in this recompilation,
    and the graph still reads an input of that instruction's old shape (the table being copied from)."""
    cm = getattr(r.graph, "_canonical", None)
    if cm is None:
        return False
    added = {without_layout_text(o.right.shape) for c in r.causes if c.kind == "inputs" for o in c.origins
             if o.left is None and o.right is not None and o.right.opcode == "parameter"}
    if not added:
        return False
    params = {str(i.shape.without_layout()) for i in cm.entry.insts.values() if i.opcode == "parameter"}
    for c in r.causes:
        if c.kind != "shape":
            continue
        for o in c.origins:
            if o.left is None or o.right is None:
                continue
            old, new = without_layout_text(o.left.shape), without_layout_text(o.right.shape)
            if new in added and old in params and _resized(old, new):
                return True
    return False
