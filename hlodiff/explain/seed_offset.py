"""The offset JAX adds to a random seed while tracing (``jax_random_seed_offset``), read from a program.

``jax.random.key(seed)`` / ``PRNGKey(seed)`` inside a jitted function lowers the seed into a threefry key by
splitting it in two 32-bit words: ``convert(seed >> 32)`` and ``convert(seed)``. With ``jax_random_seed_offset``
(``JAX_RANDOM_SEED_OFFSET``) nonzero, JAX first adds the offset to the seed (``random/prng.py``: ``seeds_arr +=
offset``), so the program holds one more ``add`` of that constant before the split, and with 0 it holds none. A
launcher that gives each worker its own offset (its process index) makes each worker's step another program under
another cache key (round 9: ``runs9_seed_offset``, JAX 0.10.2). Facts only; the words are in
:mod:`hlodiff.render.across_runs_fixes`.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference

SEED_OFFSET_SETTING = "jax_random_seed_offset"
SEED_SHIFT = "32"
"""The shift that takes a seed's high word: the first half of threefry's seed split."""
INTEGER_TYPES = ("s32", "s64", "u32", "u64")


def seed_offsets(record: GraphRecord) -> list[int]:
    """The constant added to each seed the program splits into a threefry key (0 where nothing is added), in
    program order; empty when the program makes no key from a seed."""
    offsets = []
    for computation in record.module().computations:
        by_name = {i.name.lstrip("%"): i for i in computation.instructions}
        for i in computation.instructions:
            if i.opcode != "shift-right-logical" or len(i.operands) != 2 or i.shape.dims:
                continue
            seed, shift = (by_name.get(o.lstrip("%")) for o in i.operands)
            if shift is None or shift.opcode != "constant" or (shift.literal or "").strip() != SEED_SHIFT:
                continue
            if seed is None or seed.shape.element_type not in INTEGER_TYPES:
                continue
            offsets.append(_added_constant(seed, by_name))
    return offsets


def _added_constant(seed, by_name) -> int:
    """``C`` for ``add(x, constant(C))`` (either order) of an integer scalar, else 0 (the seed as it came)."""
    if seed.opcode != "add" or len(seed.operands) != 2:
        return 0
    for name in seed.operands:
        operand = by_name.get(name.lstrip("%"))
        if operand is not None and operand.opcode == "constant" and not operand.shape.dims:
            try:
                return int((operand.literal or "").strip())
            except ValueError:
                return 0
    return 0


def seed_offset_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("lowering", "jax_random_seed_offset", A's, B's)]`` when both programs make keys from seeds,
    each program adds one offset to all of them, and the two offsets differ; else empty."""
    if a is None or b is None:
        return []
    sides = [set(seed_offsets(r)) for r in (a, b)]
    if any(len(s) != 1 for s in sides) or sides[0] == sides[1]:
        return []
    return [KeyDifference("lowering", SEED_OFFSET_SETTING, str(sides[0].pop()), str(sides[1].pop()))]
