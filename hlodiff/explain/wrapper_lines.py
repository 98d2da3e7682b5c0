"""A changed constant whose only frames are an operator's Python wrapper borrows the user line of the op that uses it.

torch_xla records one frame per instruction. For ``(1 - pt) ** gamma`` the baked exponent and its ``power`` name
only ``torch/_tensor.py`` (``Tensor.__pow__``'s wrapper, which dispatches the op), while the next op of the same
expression, the ``negate``, names the user's line (round 19, r19_tx_focal_gamma_pow). That wrapper is no place the
user can change: the line that consumes the value is where the operator was written. Only wrapper frames are
bridged this way; a constant made deep in a library (an optimizer, a layer) keeps its library frame and hint.
"""

from __future__ import annotations

from hlodiff.diff.model import Cause
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.model import SourceFrame, user_frame

OPERATOR_WRAPPERS = ("/torch/_tensor.py",)
"""Files whose frames are a Python operator's dispatch (``Tensor.__pow__``, ``__rsub__``, ``__rdiv__``): the
operator's own line is the caller's, which torch_xla's one frame does not keep."""

_MAX_STEPS = 64


def locate_through_wrappers(causes: list[Cause], graph: GraphSummary, closest: GraphSummary) -> None:
    """Give a ``constant`` cause with no user line, whose library frames are all operator wrappers, the user
    lines of the nearest instructions downstream of its changed values that name one (right graph first, the
    left one for what was removed)."""
    for cause in causes:
        if cause.kind != "constant" or cause.locations or not cause.library_locations:
            continue
        if not all(_is_wrapper(f) for f in cause.library_locations):
            continue
        for side, g in ((1, graph), (0, closest)):
            found = _consumer_lines(cause, g, side)
            if found:
                cause.locations = found
                break


def _is_wrapper(frame: SourceFrame) -> bool:
    return any(frame.file.replace("\\", "/").endswith(w) for w in OPERATOR_WRAPPERS)


def _consumer_lines(cause: Cause, graph: GraphSummary, side: int) -> list[SourceFrame]:
    """Walk users from the cause's instructions through instructions whose frames are wrappers (or absent), and
    stop at each one with a user frame: those frames, nearest first. A user reached through any other library
    frame is not borrowed (the value went into library code first)."""
    cm = graph._canonical if graph is not None else None
    if cm is None:
        return []
    cc = cm.entry
    queue = [p[side] for p in cause.instructions if p[side] is not None and p[side] in cc.insts]
    seen, found, steps = set(queue), [], 0
    while queue and steps < _MAX_STEPS and len(found) < 4:
        name = queue.pop(0)
        steps += 1
        for user in cc.users(name):
            if user in seen:
                continue
            seen.add(user)
            frames = cm.frames(cc.insts[user])
            mine = user_frame(frames)
            if mine is not None:
                if mine not in found:
                    found.append(mine)
            elif not frames or all(_is_wrapper(f) for f in frames):
                queue.append(user)
    return found
