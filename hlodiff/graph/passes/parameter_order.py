"""Canonical parameter order: a parameter is known by what it feeds and its shape, not by its number.

Parameters are numbered in the order a depth-first walk from the root (operands in order) first reaches them,
so two graphs that differ only in how the tracer numbered their inputs (FSDP callbacks run in another order,
a dict iterated differently) get the same numbers. Unused parameters follow, ordered by shape.

With the pass turned off the fingerprint also covers each parameter's original number, so a permutation makes
two modules differ (reported as ``reordered``).
"""

from __future__ import annotations

from hlodiff.accel import native
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, PassReport, graph_index


def run(cm: CanonicalModule) -> PassReport | None:
    """Report the pass; the numbers themselves are assigned while hashing (they need the anonymous hashes)."""
    count = len(cm.entry.param_ids)
    if not count:
        return None
    return PassReport("parameter_order", f"parameter numbers ({count} entry parameters)", count)


def canonical_ids(cc: CanonicalComputation) -> dict[str, int]:
    """Number parameters in the order a depth-first walk from the root first reaches them.

    The root's outputs are visited sorted by their anonymous hash (ties in their written order), so reordering a
    module's outputs does not renumber its parameters; every other operand list is visited as written, because
    operand order is meaning.
    """
    ids: dict[str, int] = {}
    seen: set[str] = set()
    root_ops = cc.operands[cc.root]
    first = sorted(range(len(root_ops)), key=lambda i: (cc.anon[root_ops[i]], i))
    stack = [root_ops[i] for i in reversed(first)]
    seen.add(cc.root)
    params = set(cc.parameters())
    index = graph_index(cc)
    if index is not None:  # the same walk over the integer arrays (seen is {root} here)
        native.index_number_params(index, stack, cc.root, params, ids)
    elif native is not None:
        native.number_params(stack, seen, params, cc.operands, ids)
    else:
        _number_params(stack, seen, params, cc.operands, ids)
    if cc.insts[cc.root].opcode == "parameter":
        ids[cc.root] = len(ids)
    unused = [n for n in cc.parameters() if n not in ids]
    unused.sort(key=lambda n: (str(cc.insts[n].shape), cc.insts[n].parameter_number or 0))
    for name in unused:
        ids[name] = len(ids)
    return ids


def _number_params(stack: list[str], seen: set[str], params: set[str], operands: dict[str, list[str]],
                   ids: dict[str, int]) -> None:
    """The walk itself (the reference for ``_accel.number_params``): pop, number a parameter the first time it
    is reached, push operands not reached yet."""
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in params:
            ids[name] = len(ids)
        # Operands already reached would be skipped when popped: not pushing them visits the same order.
        stack.extend([op for op in reversed(operands[name]) if op not in seen])
