"""Autocast's casts: converts between floating types that library code made (``xla__cast`` in
``torch/nn/modules/linear.py``), present on one side of a dtype change only.

Why: when mixed precision is switched on for some steps only, the changed instruction the diff leads with is often an
incidental scalar (the bf16 init value of a reduction in the backward pass) whose only frame is whatever user line
was running when torch_xla recorded it (``opt.step()``). Read alone, that looks like the user created a tensor with
its own dtype. The converts that came with it say what happened: library code recast the values it touched, so the
user's line is where that library code was called (the forward under ``torch.autocast``), and the fix is about
autocast. A user's own ``zeros_like(..., dtype=)`` leaves converts made at user lines, so it is not matched here.
"""

from __future__ import annotations

from hlodiff.diff.model import Cause, Change
from hlodiff.diff.summaries import callers, locations

_FLOAT = ("f64[", "f32[", "bf16[", "f16[", "f8")


def library_casts(changes: list[Change]) -> list[Change]:
    """The one-sided converts to a floating type whose innermost frame is library code."""
    found = []
    for change in changes:
        if change.side == "changed":
            continue
        side = change.right or change.left
        if side.opcode == "convert" and side.shape.startswith(_FLOAT) and side.frames and side.frames[0].is_library:
            found.append(change)
    return found


def lead_with_casts(cause: Cause, extras: list[Change]) -> None:
    """A dtype cause that came with library-made casts: record how many, and lead with the user lines that called
    the casting library code (kept ahead of the origin's own lines, which stay listed after them)."""
    casts = library_casts(extras)
    if not casts:
        return
    cause.library_casts = len(casts)
    stacks = [(s.frames) for c in casts for s in (c.right or c.left,)]
    user, _ = locations(stacks)
    if not user:
        return
    cause.locations = (user + [f for f in cause.locations if f not in user])[:8]
    for frame, outer in callers(stacks).items():
        cause.callers.setdefault(frame, outer)


_MATMULS = ("dot", "convolution")


def matmul_precision(cause: Cause, left, right) -> None:
    """Name the matmuls' element type on each side when it changed with a dtype cause (review 6, p14: the change was
    shown on a scalar constant, ``f32[] -> bf16[]``, where what a user looks for is the Linear layers' dots computing
    in bf16). ``left``/``right``: the two computations; nothing is added when the matmuls kept their type."""
    def types(comp) -> list[str]:
        return [str(inst.shape).split("[", 1)[0] for inst in comp.insts.values() if inst.opcode in _MATMULS]

    before, after = types(left), types(right)
    if not before or not after or set(before) == set(after):
        return
    word = lambda ts: "/".join(sorted(set(ts)))  # noqa: E731
    cause.summary += f"; the matmuls (dot) compute in {word(after)} on the right, {word(before)} on the left"
