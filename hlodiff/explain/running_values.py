"""A running value restarted at the top of a loop: one scalar that is a constant on a loop's first step and the
previous step's result on the next ones.

``total = 0.0`` (or ``torch.zeros(())``) before a loop and ``total = total + loss`` in it: torch_xla traces the start
value into the first step's graph as a constant (or folds it away), and from the second step on the total is the
previous step's output, device data. Two graphs, each compiled once and reused every round: expected. Read for
the fix rules (the fact ``carried_scalar``); a learning rate or a loss weight of 0, baked where other steps pass
data, is multiplied into the step, never summed into a scalar output, so it is not one.
"""

from __future__ import annotations


from hlodiff.hlo.literal import real
from hlodiff.hlo.shapes import without_layout_text

# What a running value passes through on its way back out: the sum that carries it (a total += loss, a count +=
# n) and layout or casts; a product (a loss weight, a learning rate) is not a carried value.
_CARRY_SUMS = frozenset({"add", "subtract"})
_CARRY_PLUMBING = frozenset({"convert", "copy", "bitcast", "reshape"})
# Round 26 (r26_tx_metric_reset_control): a torchmetrics-style metric keeps several running values (a correct count
# and a total; tp/fp/fn), all restarted by its reset() and carried alike; a handful, not a model's worth of inputs,
# and each with its start value (the constant 0) on the other side: several sums present on one side only are a
# dict of sums that changes its keys (per_class_dict), not a restart.
_MAX_CARRIED = 8


def _scalar_shape(shape: str) -> bool:
    return shape.endswith("[]") or "[" not in shape


def carried_scalar(r) -> bool:
    """The two graphs differ in a few scalars only (one running value, or a metric's several), each made at a user
    line: device data (a parameter) on one side, where the other side has the constant 0 or nothing, and on the
    parameter's side each such input is summed (add, subtract, nothing but casts besides) into a scalar output of
    the graph. A running value (a total, a count of correct
    predictions) carried from step to step, started afresh from a Python number or ``torch.zeros`` at the top of a
    loop: the loop's first step traces the start value as a constant, the next ones read the previous step's
    result. A learning rate of 0 (made in an optimizer, read into weight-shaped updates) or a loss weight of 0
    (multiplied, not summed) is not one."""
    if r.diff is None or r.diff.equal:
        return False
    params = []
    for cause in r.causes:
        if cause.kind not in ("inputs", "constant"):
            continue
        for o in cause.origins:
            for mine, other, graph in ((o.right, o.left, r.graph), (o.left, o.right, r.closest)):
                if mine is None or mine.opcode != "parameter":
                    continue
                if other is not None and not (other.opcode == "constant" and _zero_constant(r, other)):
                    return False
                params.append((mine, graph, other))
    if len(params) > 1 and any(other is None for _, _, other in params):
        return False  # several values, some new on one side: a dict of sums that grows (per_class_dict), no restart
    return bool(params) and len(params) <= _MAX_CARRIED and all(_summed_out(ref, graph) for ref, graph, _ in params)


def _summed_out(ref, graph) -> bool:
    """One scalar parameter made at a user line is summed (add, subtract, casts) into a scalar output of its graph."""
    if not _scalar_shape(without_layout_text(ref.shape)) or not ref.frames or all(f.is_library for f in ref.frames):
        return False
    cm = getattr(graph, "_canonical", None) if graph is not None else None
    if cm is None or ref.computation != cm.entry.name:
        return False
    comp = cm.entry
    outputs = set(comp.outputs())
    frontier, seen = [(ref.name, False)], {ref.name}
    for _ in range(8):
        nxt = []
        for name, summed in frontier:
            if summed and name in outputs:
                return True
            for user in comp.users(name):
                inst = comp.insts.get(user)
                if user in seen or inst is None or inst.opcode not in _CARRY_SUMS | _CARRY_PLUMBING:
                    continue
                if not _scalar_shape(str(inst.shape.without_layout())):
                    continue
                seen.add(user)
                nxt.append((user, summed or inst.opcode in _CARRY_SUMS))
        frontier = nxt
    return False


def _zero_constant(r, ref) -> bool:
    """The other side's constant is the value 0 (the literal the constant cause says the left graph baked)."""
    for cause in r.causes:
        if cause.kind == "constant" and any(o.left is ref or o.right is ref for o in cause.origins):
            return cause.baked_value is not None and real(cause.baked_value) == 0
    return False
