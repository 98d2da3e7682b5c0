"""Review 12 F7: a JAX argument whose dtype changed between two calls of one function because the function's own
earlier call returned it in the new dtype (bf16 parameters updated with an f32 learning rate come back f32, and the
loop feeds them back): the place to cast is the line of the function that makes that output, not the call.

Read from the earlier graph alone: an output of its entry with the changed argument's dimensions and new element
type, while the argument it took had the old one.
"""

from __future__ import annotations

from hlodiff.hlo.model import user_frame
from hlodiff.hlo.shapes import without_layout_text


def promoted_output_line(r) -> str:
    """``file.py:14`` where the earlier compilation of ``r``'s function made an output in the dtype the changed
    argument now has (the argument it took had the old one); empty when no such output, or no user line."""
    earlier = r.closest
    cm = getattr(earlier, "_canonical", None) if earlier is not None else None
    if cm is None:
        return ""
    entry = cm.entry
    for cause in r.causes:
        if cause.kind != "dtype":
            continue
        for change in cause.origins:
            left, right = change.left, change.right
            if left is None or right is None or left.opcode != "parameter" or right.opcode != "parameter":
                continue
            old, new = without_layout_text(left.shape), without_layout_text(right.shape)
            if old == new or old.split("[", 1)[1:] != new.split("[", 1)[1:]:
                continue
            for name in entry.outputs():
                inst = entry.insts.get(name)
                if inst is None or without_layout_text(str(inst.shape)) != new:
                    continue
                frame = user_frame(cm.frames(inst))
                if frame is not None and frame.line:
                    return f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}"
    return ""
