"""Fold ``get-tuple-element(tuple(a, b, c)), index=1`` to ``b``.

Tracing frameworks build tuples only to take them apart again; whether a value went through such a detour does
not change what the program computes, so it must not make two graphs differ.
"""

from __future__ import annotations

from hlodiff.accel import native
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, PassReport, remove_instruction


def run(cm: CanonicalModule) -> PassReport | None:
    folded = sum(_fold(cc) for cc in cm.computations.values())
    if not folded:
        return None
    return PassReport("tuple_plumbing", f"{folded} get-tuple-element of tuple folded", folded)


def _fold(cc: CanonicalComputation) -> int:
    insts, operands = cc.insts, cc.operands
    if cc._gtes == 0:  # none when the maps were built, and passes only remove: no walk to find none
        return 0
    if native is not None:
        folds = native.reads_tuple(insts, operands)
    else:
        folds = any(inst.opcode == "get-tuple-element" and len(operands[name]) == 1
                    and insts[operands[name][0]].opcode == "tuple" for name, inst in insts.items())
    if not folds:
        return 0  # most computations: nothing to fold, no users map
    users: dict[str, set[str]] = {name: set() for name in cc.operands}
    for name, ops in cc.operands.items():
        for op in ops:
            users[op].add(name)
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
        for user in users.pop(name):
            cc.operands[user] = tuple([element if op == name else op for op in cc.operands[user]])
            cc._index = None
            users[element].add(user)
        users[source].discard(name)
        if cc.root == name:
            cc.root = element
        remove_instruction(cc, name)
        folded += 1
        if not users[source] and source != cc.root:
            for op in cc.operands[source]:
                users[op].discard(source)
            del users[source]
            remove_instruction(cc, source)
    return folded
