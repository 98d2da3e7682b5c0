"""Which code made a cause's origins, read from their frames: the user's own line, a library's (torch.nn.Module
copying a state dict in, an optimizer creating its state on its first step, a layer recast under autocast), and the
package-relative name of a library file.

Apart from :mod:`hlodiff.diff.origin_facts` (what changed in the origin instructions: opcodes, shapes, values,
types) because it asks who wrote the change rather than what it is; the fix rules read both through
:mod:`hlodiff.diff.fix_facts`.
"""

from __future__ import annotations

from hlodiff.diff.model import Cause, Change
from hlodiff.hlo.installed import package_path


MODULE_BASE = "torch/nn/modules/module.py"
"""torch.nn.Module's own file: its code traces no op of a layer (forward is the layer's file); what it traces is a
copy into the module's tensors (load_state_dict's ``param.copy_``, ``_apply`` for ``.to()`` / ``.half()``)."""


def module_state_copy(cause: Cause) -> bool:
    """Round 8 (spmd_load_state_mid): no line of the user's is on the cause and every library frame on it is
    torch.nn.Module's own code: the change was traced where the module copies tensors into its parameters
    (``model.load_state_dict(best)`` restoring host tensors mid-run), not in a layer's forward."""
    return (not cause.locations and bool(cause.library_locations)
            and all(package_path(w.file) == MODULE_BASE for w in cause.library_locations))


def library_made(change: Change) -> bool:
    """Both sides' innermost frames are library code (torch's Module.to, nn.functional): no user line made it."""
    frames = [s.frames[0] for s in (change.left, change.right) if s is not None and s.frames]
    return bool(frames) and all(f.is_library for f in frames)


def creation_sides(cause: Cause) -> str | None:
    """Where each side created the changed value, when a user line did (``f32 at t.py:10, bf16 at t.py:12``).

    The first changed non-input with frames decides: a user frame there means the user's code built the value with
    that dtype; a library frame (nn.functional under autocast) means an op was recast. None when no user line."""
    if cause.kind != "dtype":
        return None
    for change in cause.origins:
        if change.left is None or change.right is None or change.left.opcode == "parameter":
            continue
        sides = [(s.shape.split("[", 1)[0], s.frames[0]) for s in (change.left, change.right) if s.frames]
        if not sides:
            continue
        if any(f.is_library for _, f in sides):
            return None
        if len(sides) == 2 and sides[0][1] != sides[1][1]:
            return ", ".join(f"{t} at {f.short()}" for t, f in sides)
        return f"at {sides[0][1].short()}"
    return None


def user_made_inputs(cause: Cause) -> str:
    """User lines that made the added inputs (``t.py:11``), empty when library code (an optimizer) made them."""
    lines = []
    for change in cause.origins:
        if change.left is None and change.right is not None and change.right.frames:
            mine = [f for f in change.right.frames if not f.is_library]
            if len(mine) != len(change.right.frames) or not mine:
                return ""
            lines.append(mine[0].short())
    return ", ".join(dict.fromkeys(lines))


STATE_MAKERS = (
    ("torch/optim/", "an optimizer's state (Adam's exp_avg, exp_avg_sq, step) is created by its first step()"),
)
"""Library folders whose code creates state on its first call that every later call reads as inputs: an added
input made there is that library's warm-up even when the stack reaches the user's call below it (a live-tensor
report's stack: ``adam.py:447`` called from ``train.py:29 opt.step()``), review 5 F1. Other library code called
from a user line (``F.pad`` in a user's collate) made the user's own value, so it must name a folder here."""


def _state_maker(file: str) -> bool:
    path = file.replace("\\", "/")
    return any(folder in path for folder, _ in STATE_MAKERS)


def library_made_inputs(cause: Cause) -> str:
    """The library file that made every added input (``torch/optim/adam.py``: optimizer state), empty when any
    added input has a user frame or none has frames. A user frame below the library's (its caller: ``opt.step()``)
    is allowed when the innermost frame is in a :data:`STATE_MAKERS` folder."""
    files = []
    for change in cause.origins:
        if change.left is None and change.right is not None:
            frames = change.right.frames
            if not frames or not frames[0].is_library:
                return ""
            if not all(f.is_library for f in frames) and not _state_maker(frames[0].file):
                return ""
            files.append(frames[0].file)
    # the most frequent file; a tie goes to the first seen (a set's order changes with PYTHONHASHSEED)
    return package_path(max(dict.fromkeys(files), key=files.count)) if files else ""
