"""Optimizer state that begins after training began: a setting switched on mid-run that makes the optimizer keep a
buffer per parameter (SGD's momentum written from 0.0 to 0.9 into its param_groups; torch keeps no momentum buffer
while momentum is 0).

The evidence, in two recompilations of one family (round 11, r11_tx_momentum_warmup): a graph that only adds
outputs (the buffers, cloned from gradients the step computed anyway: no new work but layout), then the graph
compiled from it adds inputs made in ``torch.optim`` (the buffers read back). A metric kept on some steps adds
outputs too, but nothing in the optimizer reads it back; a layer unfrozen adds the gradient ops of its backward;
the optimizer's state on the first step (``momentum_warmup``) is already in the first graph, with no graph before
it that lacks the outputs.
"""

from __future__ import annotations

_LAYOUT = frozenset({"transpose", "copy", "bitcast", "reshape"})


def _added_only(cause) -> bool:
    """Every instruction of the cause is on the right only (an outputs cause lists its outputs, no origins)."""
    pairs = list(cause.instructions) or [(o.left, o.right) for o in cause.origins]
    return bool(pairs) and all(a is None and b is not None for a, b in pairs)


def _inputs_added(cause) -> bool:
    """Every input of the cause is on the right only. The instructions it absorbed may be removed ones: Adam's
    first step makes its moments as zeros inside the graph, which the later steps read as inputs instead (round 30,
    r30_tx_adam_reset_epoch_control: 8 inputs added, 40 instructions removed); SGD's momentum is a clone of the
    gradient and removes nothing."""
    return bool(cause.origins) and all(o.left is None and o.right is not None for o in cause.origins)


def _layout_only(cause) -> bool:
    return all((o.right or o.left).opcode in _LAYOUT for o in cause.origins)


def _in_optimizer(cause) -> bool:
    sides = [s for o in cause.origins for s in (o.left, o.right) if s is not None]
    return bool(sides) and all(any("/optim/" in f.file for f in s.frames) for s in sides)


def state_begun_late(r, family_recompilations) -> bool:
    """``r`` only adds outputs (no inputs, no work but layout ops), and a recompilation of the same family compiled
    against ``r``'s graph adds inputs made in ``torch.optim`` only: the optimizer's new state, created by ``r``'s
    step and read back from the next."""
    kinds = {c.kind for c in r.causes}
    if "outputs" not in kinds or kinds - {"outputs", "ops", "aliasing"}:
        return False
    if not all(_added_only(c) for c in r.causes if c.kind == "outputs"):
        return False
    if not all(_layout_only(c) for c in r.causes if c.kind == "ops"):
        return False
    return any(n.closest is r.graph and any(c.kind == "inputs" and _added_only(c) and _in_optimizer(c)
                                            for c in n.causes)
               for n in family_recompilations if n is not r)


def reads_state_begun_late(r, family_recompilations) -> bool:
    """``r`` was compiled against the graph of a recompilation that began optimizer state (:func:`state_begun_late`)
    and adds inputs made in ``torch.optim``: the buffers read back, a consequence, not a cause of its own."""
    if not any(c.kind == "inputs" and _added_only(c) and _in_optimizer(c) for c in r.causes):
        return False
    return any(p.graph is r.closest and state_begun_late(p, family_recompilations)
               for p in family_recompilations if p is not r)


def state_reset(r, members: list) -> bool:
    """Round 14 (r14_tx_opt_rebuild_control): the optimizer's state is made anew again and again (an optimizer built
    again each epoch). ``r`` is compared with the family's first graph (the step run before the optimizer had
    state), adds inputs made in ``torch.optim`` only (the state read back from the second step) and nothing but
    ops, outputs or aliasing beside them (the zeros the first step made its state from are removed with them:
    Adam); and after ``r``'s graph first ran, the first graph comes back and ``r``'s
    after it (A,B,B,A,B,B): each reset runs the first step's program again from the cache. Look-alikes: an
    optimizer's first step alone (the first graph never comes back), gradient accumulation (the added inputs are
    gradients, made at the user's backward), state begun late (no graph before it lacks the state but the first)."""
    if not members or r.closest is None or r.closest.cache_key != members[0].cache_key:
        return False
    kinds = {c.kind for c in r.causes}
    if "inputs" not in kinds or kinds - {"inputs", "ops", "outputs", "aliasing"}:
        return False
    if not all(_inputs_added(c) and _in_optimizer(c) for c in r.causes if c.kind == "inputs"):
        return False
    keys = [g.cache_key for g in members]
    at = keys.index(r.graph.cache_key) if r.graph.cache_key in keys else None
    if at is None:
        return False
    back = next((i for i in range(at + 1, len(keys)) if keys[i] == keys[0]), None)
    return back is not None and r.graph.cache_key in keys[back + 1:]
