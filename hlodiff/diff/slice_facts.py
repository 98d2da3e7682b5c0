"""A prefix slice ``x[:n]`` of a tensor that keeps its size: the length is the only thing that changed.

Round 24 (r24_tx_class_incremental): a 12-way head's logits cut to the classes seen so far, ``logits[:, :n_seen]``
with n_seen 4, 8, 12 per task. The slice's operand is ``[8,12]`` on both sides and the slice starts at 0: the
program already holds every value at full size, so the fix is to keep it and mask past n, not to pad anything to a
fixed length (nothing is short) or bucket n. A slice whose operand changed size too (a batch trimmed to its own
longest row, a cache that grew) is not this: there the size comes from elsewhere."""

from __future__ import annotations

import re

from hlodiff.diff.model import Cause

_RANGE = re.compile(r"\[(-?\d+):(-?\d+)(?::\d+)?\]")


def prefix_of_fixed(cause: Cause) -> int | None:
    """The full size on the axis whose prefix length changed, when every resized slice of the cause cuts a prefix
    (start 0 on both sides) of an operand of one size on both sides, shorter than it on at least one side, and no
    input of the cause changed size (an input that did, ``logits[:, :x.shape[1]]`` with x a batch of another length,
    sets n: the eleventh stop's read; keeping all and masking would not spare x's recompile)."""
    if any(_input_resized(c) for c in cause.origins):
        return None
    full = None
    for c in cause.origins:
        pair, of = c.details.get("attribute:slice"), c.details.get("slice_of")
        if pair is None or c.left is None or c.right is None:
            continue
        if of is None or of[0] != of[1]:
            return None
        dims = [int(d) for d in of[0].split(",") if d]
        left, right = (_RANGE.findall(t) for t in pair)
        if len(left) != len(right) or len(left) != len(dims):
            return None
        for axis, ((a0, a1), (b0, b1)) in enumerate(zip(left, right)):
            if int(a1) - int(a0) == int(b1) - int(b0):
                continue
            if int(a0) != 0 or int(b0) != 0 or min(int(a1), int(b1)) >= dims[axis]:
                return None
            full = dims[axis]
    return full


def _input_resized(change) -> bool:
    """A parameter of the program on both sides whose shape changed."""
    return (change.left is not None and change.right is not None and change.left.opcode == "parameter"
            and change.right.opcode == "parameter" and change.left.shape.split("{")[0] != change.right.shape.split("{")[0])
