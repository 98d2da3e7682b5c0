"""Canonical parameter order: a parameter is known by what it feeds and its shape, not by its number.

Parameters are numbered in the order a depth-first walk from the root (operands in order) first reaches them,
so two graphs that differ only in how the tracer numbered their inputs (FSDP callbacks run in another order,
a dict iterated differently) get the same numbers. Unused parameters follow, ordered by shape.
"""

from __future__ import annotations

from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, PassReport


def run(cm: CanonicalModule) -> PassReport | None:
    total = 0
    for cc in cm.computations.values():
        if cm.options.parameter_order:
            cc.param_ids = canonical_ids(cc)
        else:
            cc.param_ids = {n: cc.insts[n].parameter_number or 0 for n in cc.parameters()}
        total += len(cc.param_ids)
    if not cm.options.parameter_order or not total:
        return None
    return PassReport("parameter_order", f"parameter numbers ({len(cm.entry.param_ids)} entry parameters)", total)


def canonical_ids(cc: CanonicalComputation) -> dict[str, int]:
    ids: dict[str, int] = {}
    seen: set[str] = set()
    stack = [cc.root]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if cc.insts[name].opcode == "parameter":
            ids[name] = len(ids)
        stack.extend(reversed(cc.operands[name]))
    unused = [n for n in cc.parameters() if n not in ids]
    unused.sort(key=lambda n: (str(cc.insts[n].shape), cc.insts[n].parameter_number or 0))
    for name in unused:
        ids[name] = len(ids)
    return ids
