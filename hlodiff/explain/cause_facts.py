"""Typed facts read off a cause and the two graphs' entry computations, for the relations of a cause graph
(:mod:`hlodiff.explain.cause_rules`) and the fix context: its origins' opcodes and computations, the instructions
and inputs it added or removed, the sizes in its shapes and literals, whether it swaps a code path or places an
argument otherwise. Typed facts only, never prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.diff.model import Cause
from hlodiff.diff.output_causes import computed_from
from hlodiff.hlo.shapes import without_layout_text


LAYOUT_OPS = frozenset({"transpose", "copy", "bitcast"})
"""Instructions that only lay out the same values: the tracer adds or moves them along with other changes."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the rules read besides the causes: the two graphs' entry computations (operand edges, output shapes),
    when parsed (``hlodiff.graph.canonical`` computations)."""

    left: object | None = None
    right: object | None = None
    arguments_restructured: bool = False
    """JAX said the arguments' pytree structure changed (a ``cache_key`` cause with reason ``pytree``): a scalar
    input that came is an argument the caller passed (one more list item), not a Python number new ops read."""

    def entry_names(self) -> set[str]:
        return {cc.name for cc in (self.left, self.right) if cc is not None}

    def left_shape(self, name: str) -> str | None:
        inst = self.left.insts.get(name) if self.left is not None else None
        return str(inst.shape) if inst is not None else None

    def reads(self, users: set[str], inputs: set[str]) -> bool:
        """Some instruction of ``users`` is computed from one of ``inputs`` (right side, bounded walk)."""
        cc = self.right
        if cc is None or not users or not inputs:
            return False
        return computed_from(cc, [u for u in users if u in cc.insts], inputs, limit=20_000)


def origin_opcodes(cause: Cause) -> set[str]:
    return {(c.right or c.left).opcode for c in cause.origins if (c.right or c.left) is not None}


def only_opcodes(cause: Cause, allowed: frozenset[str]) -> bool:
    ops = origin_opcodes(cause)
    return bool(ops) and ops <= allowed


def layout_only(cause: Cause) -> bool:
    """Every origin is a transpose/copy/bitcast appearing, going or moving: no value changed."""
    return cause.kind == "layout" or (cause.kind == "ops" and only_opcodes(cause, LAYOUT_OPS))


def input_origin(cause: Cause) -> bool:
    return any(c.left is not None and c.right is not None and c.left.opcode == "parameter" for c in cause.origins)


def origin_computations(cause: Cause) -> set[str]:
    return {(c.left or c.right).computation for c in cause.origins if (c.left or c.right) is not None}


def added_refs(cause: Cause) -> list[str]:
    return [b for a, b in cause.instructions if a is None and b is not None]


def removed_refs(cause: Cause) -> list[str]:
    return [a for a, b in cause.instructions if b is None and a is not None]


def added_inputs(cause: Cause) -> list:
    return [c.right for c in cause.origins if c.left is None and c.right is not None and c.right.opcode == "parameter"]


def is_scalar_shape(shape: str) -> bool:
    return shape.split("{", 1)[0].endswith("[]")


def bare_shape(shape: str) -> str:
    return shape.split("{", 1)[0]


def own_placement(c: Cause) -> bool:
    """A sharding change on an entry parameter: an argument placed otherwise (``w`` from ``jnp.zeros``, uncommitted,
    then replicated by the first call's output). Nothing traced inside the function sets it, so no static argument
    or weak type explains it, and alone it compiles the step again: a cause of its own, told beside the root with
    its own fix, not under it (new-user review 14, F2: after fixing the static argument the step still compiled
    twice)."""
    return c.kind == "sharding" and c.on_parameter


def int_pair(pair) -> tuple[int, int] | None:
    if not pair or len(pair) != 2:
        return None
    try:
        return int(str(pair[0]).strip()), int(str(pair[1]).strip())
    except ValueError:
        return None


def literal_ints(text) -> list[int] | None:
    found = re.findall(r"-?\d+", str(text))
    return [int(v) for v in found] if found and re.fullmatch(r"[\s{}\[\],()\d-]*", str(text)) else None


def shape_dims(shape: str) -> list[int]:
    m = re.search(r"\[([\d,]*)\]", shape or "")
    return [int(v) for v in m.group(1).split(",") if v] if m else []


SWAP_MIN = 10
"""Instructions added, and removed, beside a parameter's new shape for it to be another code path (a head's layer
and its loss), not the broadcasts and converts a new size drags along."""


def swaps_path(cause: Cause) -> bool:
    """A shape change on a parameter that comes with at least SWAP_MIN instructions added and SWAP_MIN removed."""
    return (cause.kind == "shape" and cause.added and cause.removed and cause.instructions_removed >= SWAP_MIN
            and len(cause.instructions) - cause.instructions_removed >= SWAP_MIN and cause.on_parameter)


def slice_starts(text: str) -> list[int]:
    return [int(a) for a, _ in re.findall(r"\[(-?\d+):(-?\d+)", text or "")]


def repeats_kept_inputs(entry, changed: list) -> bool:
    """The entry parameters ``changed`` (refs of the inputs one graph has and the other lacks) are more of the same:
    none is a scalar and each has the shape (layout aside) of a parameter the graph keeps that it does not return.
    A Python loop over a list whose length changes traces the same computation once more per item (micro-batches
    of an accumulation group); weights, gradients and optimizer state come back as outputs of their shapes, a data
    batch never does."""
    if entry is None or not changed:
        return False
    names = {x.name for x in changed}
    outputs = {str(entry.insts[n].shape.without_layout()) for n in entry.outputs() if n in entry.insts}
    kept = {str(i.shape.without_layout()) for i in entry.insts.values()
            if i.opcode == "parameter" and i.name not in names} - outputs
    shapes = [without_layout_text(x.shape) for x in changed]
    return all(not (sh.endswith("[]") or "[" not in sh) and sh in kept for sh in shapes)
