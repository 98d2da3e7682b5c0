"""torch_xla's random-seed bookkeeping told apart from a Python `if`.

Every random draw torch_xla traces (``torch.randn``, dropout) advances the device seed inside the graph with a
linear congruential step, ``seed * 214013 + 2531011`` on an ``s64[]`` scalar (two constants, a multiply, an add).
A graph holding one draw more or fewer than another carries one such update more or fewer: those four
instructions appear or go with the number of draws pending at the sync, not with a branch of the user's code
(review F3: "4 instructions removed (2 constant, add, multiply) ... a Python `if` decides what is traced").
"""

from __future__ import annotations

LCG_CONSTANTS = frozenset({"214013", "2531011"})
"""torch_xla's seed-update multiplier and increment (its RNG, as the dumps show them)."""
_SEED_OPS = frozenset({"constant", "multiply", "add"})


def _inst(graph, name):
    canonical = getattr(graph, "_canonical", None) if graph is not None else None
    if canonical is None or name is None:
        return None
    return canonical.entry.insts.get(name) if hasattr(canonical.entry.insts, "get") else None


def seed_update_only(r, cause) -> bool:
    """Every instruction of ``cause`` that one side lacks is part of a seed update: a scalar 64-bit integer
    constant of the LCG, or a multiply or add of such scalars; at least one LCG constant is among them."""
    if cause.kind != "ops" or not cause.instructions:
        return False
    saw_constant = False
    for left, right in cause.instructions:
        if left is not None and right is not None:
            return False
        inst = _inst(r.closest, left) if left is not None else _inst(r.graph, right)
        if inst is None or inst.opcode not in _SEED_OPS:
            return False
        if str(inst.shape).split("{", 1)[0] not in ("s64[]", "u64[]"):
            return False
        if inst.opcode == "constant":
            if (inst.literal or "").strip() not in LCG_CONSTANTS:
                return False
            saw_constant = True
    return saw_constant
