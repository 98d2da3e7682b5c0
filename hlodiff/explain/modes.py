"""Train and eval steps of one helper: recognised as such, not as "a Python `if`" or "a value kept on some steps".

A helper that runs both (``run_step(batch, train=...)`` calling ``model.train(train)``) syncs at one line, so both
graphs are one family and the second one looks like a recompilation. In eval mode dropout draws no random bits and,
under ``no_grad``, there is no backward: the eval graph is the training graph without its ``rng-bit-generator`` and
without the outputs that hand back updated parameters and gradients. That is a root of its own (kind ``mode``): it
explains the removed inputs, outputs and ops, and each graph compiles once.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.diff.model import Cause
from hlodiff.diff.fixes import FixContext, set_fix
from hlodiff.explain.families import is_partial
from hlodiff.explain.locate import outputs_added_removed
from hlodiff.explain.producer import producer
from hlodiff.hlo.model import SourceFrame

RNG_OPS = frozenset({"rng-bit-generator", "rng", "rng-get-and-update-state"})
BACKWARD_OPS = frozenset({"dot", "convolution"})
"""A backward computes the weights' gradients with matmuls or convolutions of its own; elementwise work alone on the
larger side (an EMA's ``mul_``/``add_`` of the weights) is an update on some steps, not a training step."""


@dataclass(frozen=True, slots=True)
class ModeSwitch:
    """``to`` is ``eval`` (the recompiled graph is the eval step) or ``train``; ``rng_ops`` how many random-bit
    instructions only the training side has; ``updates`` how many outputs only it has whose shape is one of its
    parameters' (updated weights, gradients, optimizer state)."""

    to: str
    rng_ops: int
    updates: int
    call: SourceFrame | None = None


def mode_switch(r) -> ModeSwitch | None:
    """The recompilation is a train step against an eval step of the same family (or the reverse), by evidence:
    one side has no outputs and no operations of its own, the other has the random bits dropout draws or the
    matmuls of a backward, and outputs shaped like its parameters (the backward and the update). Outputs shaped
    like parameters alone are an EMA or another periodic update, not an eval step."""
    diff, left, right = r.diff, r.closest, r.graph
    if diff is None or diff.equal or left is None or left._canonical is None or right._canonical is None:
        return None
    if producer(right) == "jax":  # JAX's train/eval is a static flag or another function, told by its own rows
        return None
    if is_partial(left) or is_partial(right):  # a graph an early read cut short is part of a step, no eval step:
        return None                            # the rest of the step "gains" the backward (review F1)
    added, removed = outputs_added_removed(diff)
    if added and removed or not (added or removed):
        return None
    to = "eval" if removed else "train"
    train, smaller = (left, right) if to == "eval" else (right, left)
    only_train = [c for c in diff.changes if (c.left if to == "eval" else c.right) is not None
                  and (c.right if to == "eval" else c.left) is None]
    only_smaller = [c for c in diff.changes if (c.right if to == "eval" else c.left) is not None
                    and (c.left if to == "eval" else c.right) is None and (c.right or c.left).opcode != "parameter"]
    if only_smaller or any(c.side == "changed" and "opcode" in c.kinds for c in diff.changes):
        return None
    rng = sum(1 for c in only_train if (c.left or c.right).opcode in RNG_OPS)
    backward = any((c.left or c.right).opcode in BACKWARD_OPS for c in only_train)
    updates = _updates(train, removed if to == "eval" else added)
    if updates < 2 or not (rng or backward):
        return None  # no random bits and no matmul only one side has: no backward, e.g. an EMA updated every 4th step
    if rng == 0 and not _all_removed_are_updates(train, removed if to == "eval" else added):
        return None
    if _updates(smaller, list(range(len(smaller._canonical.entry.outputs())))):
        return None  # the smaller step still updates weights: part of the model skipped or frozen, not an eval step
    return ModeSwitch(to, rng, updates, _call_site(left, right))


def _bare(shape) -> str:
    return str(shape).split("{", 1)[0]


def _updates(graph, positions: list[int]) -> int:
    cc = graph._canonical.entry
    outputs = cc.outputs()
    params = {_bare(p.shape) for p in graph._canonical.module.entry.parameters() if "[]" not in _bare(p.shape)}
    return sum(1 for j in positions if j < len(outputs) and _bare(cc.insts[outputs[j]].shape) in params)


def _all_removed_are_updates(graph, positions: list[int]) -> bool:
    return _updates(graph, positions) == len(positions)


def _call_site(left, right) -> SourceFrame | None:
    """The user's line that called the helper for the recompiled step, where the two steps' stacks part (the
    ``run_step(..., train=False)`` line); None when their stacks do not differ."""
    a = [f for f in (left.record.frames or ()) if not f.is_library]
    b = [f for f in (right.record.frames or ()) if not f.is_library]
    for fa, fb in zip(reversed(a), reversed(b)):  # outermost first
        if (fa.file, fa.line) != (fb.file, fb.line):
            return fb
    return None


def mode_cause(switch: ModeSwitch) -> Cause:
    """The ``mode`` cause: its summary and its fix are final (what was seen decides them, not the kind)."""
    gone = []
    if switch.rng_ops:
        gone.append(f"dropout's random bits ({switch.rng_ops} rng-bit-generator)")
    gone.append(f"the backward and update ({switch.updates} outputs shaped like parameters)")
    if switch.to == "eval":
        summary = "an eval step after training steps (model.eval(), no_grad): " + " and ".join(gone) + " disappear"
    else:
        summary = "a training step after eval steps (model.train()): " + " and ".join(gone) + " appear"
    cause = Cause("mode", summary, [switch.call] if switch.call is not None else [])
    set_fix(cause, FixContext())  # the table's mode row
    cause.fix_is_final = True
    return cause
