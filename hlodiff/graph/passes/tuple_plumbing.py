"""Fold ``get-tuple-element(tuple(a, b, c)), index=1`` to ``b``.

Tracing frameworks build tuples only to take them apart again; whether a value went through such a detour does
not change what the program computes, so it must not make two graphs differ.
"""

from __future__ import annotations

from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, PassReport


def run(cm: CanonicalModule) -> PassReport | None:
    folded = sum(_fold(cc) for cc in cm.computations.values())
    if not folded:
        return None
    return PassReport("tuple_plumbing", f"{folded} get-tuple-element of tuple folded", folded)


def _fold(cc: CanonicalComputation) -> int:
    folded = 0
    for name in list(cc.insts):
        inst = cc.insts.get(name)
        if inst is None or inst.opcode != "get-tuple-element" or len(cc.operands[name]) != 1:
            continue
        source = cc.operands[name][0]
        if cc.insts[source].opcode != "tuple":
            continue
        try:
            element = cc.operands[source][int(inst.attrs.get("index", "-1"))]
        except (ValueError, IndexError):
            continue
        _replace_uses(cc, name, element)
        folded += 1
        if cc.graph.out_degree(source) == 0 and source != cc.root:
            _remove(cc, source)
    return folded


def _replace_uses(cc: CanonicalComputation, old: str, new: str) -> None:
    for user in list(cc.graph.successors(old)):
        ops = cc.operands[user]
        for i, op in enumerate(ops):
            if op == old:
                ops[i] = new
        if not cc.graph.has_edge(new, user):
            cc.graph.add_edge(new, user, pos=ops.index(new))
    if cc.root == old:
        cc.root = new
    _remove(cc, old)


def _remove(cc: CanonicalComputation, name: str) -> None:
    cc.removed[name] = cc.insts.pop(name)
    del cc.operands[name]
    cc.graph.remove_node(name)
