"""Labels, subgraph hashes and module fingerprints over normalized graphs.

Each node's hash covers its label and, in order, its operands' hashes (a Merkle hash of the subgraph it
computes). Two modules have the same fingerprint exactly when their normalized entry graphs are equal: same
instructions with the same labels wired the same way, called computations compared by their own hashes.
Hashes are BLAKE2 digests of text, so they are stable across processes and machines.
"""

from __future__ import annotations

import hashlib
import re

import networkx as nx

from hlodiff.graph.canonical import (
    CanonicalComputation,
    CanonicalModule,
    Normalization,
    build_computation,
    reachable_computations,
)
from hlodiff.graph.passes import ORDER
from hlodiff.hlo.attributes import CALL_KEYS
from hlodiff.hlo.model import Instruction, Module

_CALL_KEYS = frozenset(CALL_KEYS)
_NAME_TOKEN = re.compile(r"%?([A-Za-z0-9_.\-]+)")
# Attributes that only hold names or numbering, erased with the names pass.
_NAME_ATTRS = frozenset({"control-predecessors"})


def canonicalize(module: Module, options: Normalization = Normalization()) -> CanonicalModule:
    """Build the canonical graphs of ``module``, run the enabled passes, and compute hashes and fingerprint."""
    comps = {c.name: build_computation(c) for c in reachable_computations(module)}
    cm = CanonicalModule(module, options, comps, comps[module.entry.name])
    for name, run in ORDER:
        if getattr(options, name):
            report = run(cm)
            if report is not None:
                cm.reports.append(report)
        elif name == "parameter_order":
            run(cm)  # still assigns (original) parameter numbers
    for cc in comps.values():  # callees first
        _hash_computation(cm, cc)
    cm.fingerprint = _digest(cm.computation_hashes[cm.entry.name], 16)
    return cm


def fingerprint(module: Module, options: Normalization = Normalization()) -> str:
    return canonicalize(module, options).fingerprint


def _digest(text: str, size: int = 12) -> str:
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()


def label(cm: CanonicalModule, cc: CanonicalComputation, inst: Instruction) -> str:
    """The node's own comparable text: everything but its operands, under the enabled passes."""
    options = cm.options
    shape = inst.shape.without_layout() if options.layouts else inst.shape
    parts = [inst.opcode, str(shape)]
    if inst.opcode == "parameter":
        parts.append(f"#{cc.param_ids.get(inst.name, inst.parameter_number)}")
    elif inst.literal is not None:
        parts.append(inst.literal)
    if not options.names:
        parts.append("@" + inst.name)
    for key, value in inst.attrs.items():
        if key == "metadata" and options.metadata:
            continue
        if key in _NAME_ATTRS and options.names:
            continue
        if key in _CALL_KEYS:
            value = _NAME_TOKEN.sub(lambda m: "#" + cm.computation_hashes.get(m.group(1), m.group(1)), value)
        parts.append(f"{key}={value}")
    if inst.truncated_operands:
        parts.append(f"...(+{inst.truncated_operands})")
    return "|".join(parts)


def _hash_computation(cm: CanonicalModule, cc: CanonicalComputation) -> None:
    labels = cc.labels
    hashes = cc.hashes
    for name in nx.topological_sort(cc.graph):
        inst = cc.insts[name]
        labels[name] = text = label(cm, cc, inst)
        ops = cc.operands[name]
        if ops:
            text += "(" + ",".join(hashes[o] for o in ops) + ")"
        hashes[name] = _digest(text)
    parts = [hashes[cc.root]]
    parts.extend(sorted(labels[p] for p in cc.parameters()))
    if not cm.options.dead_code:
        live = nx.ancestors(cc.graph, cc.root)
        parts.extend(sorted(hashes[n] for n in cc.insts if n not in live and n != cc.root))
    cm.computation_hashes[cc.name] = _digest(";".join(parts))


def normalized_text(cm: CanonicalModule) -> str:
    """Readable text of the normalized module: canonical names, no metadata, callees first.

    Equal for two modules exactly when their fingerprints are equal, so it is what snapshot files store.
    """
    comp_names = {name: ("main" if cc is cm.entry else f"comp.{i}") for i, (name, cc) in
                  enumerate(cm.computations.items())}
    blocks = []
    for cc in cm.computations.values():
        names = _canonical_names(cc)
        lines = [("ENTRY " if cc is cm.entry else "") + f"%{comp_names[cc.name]} {{"]
        for node in _postorder(cc):
            inst = cc.insts[node]
            lines.append("  " + _normalized_line(cm, cc, inst, names, comp_names))
        lines.append("}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _postorder(cc: CanonicalComputation) -> list[str]:
    """Nodes in a deterministic depth-first post-order from the root, then any others by hash."""
    order: list[str] = []
    seen: set[str] = set()
    stack: list[tuple[str, bool]] = [(cc.root, False)]
    while stack:
        name, expanded = stack.pop()
        if expanded:
            order.append(name)
            continue
        if name in seen:
            continue
        seen.add(name)
        stack.append((name, True))
        stack.extend((op, False) for op in reversed(cc.operands[name]) if op not in seen)
    rest = sorted((n for n in cc.insts if n not in seen), key=lambda n: (cc.hashes.get(n, ""), cc.labels.get(n, "")))
    return order + rest


def _canonical_names(cc: CanonicalComputation) -> dict[str, str]:
    names = {}
    for i, node in enumerate(_postorder(cc)):
        inst = cc.insts[node]
        names[node] = f"p{cc.param_ids[node]}" if inst.opcode == "parameter" else f"{inst.opcode}.{i}"
    return names


def _normalized_line(cm: CanonicalModule, cc: CanonicalComputation, inst: Instruction, names: dict[str, str],
                     comp_names: dict[str, str]) -> str:
    shape = inst.shape.without_layout() if cm.options.layouts else inst.shape
    if inst.opcode == "parameter":
        inner = str(cc.param_ids[inst.name])
    elif inst.literal is not None:
        inner = inst.literal
    else:
        inner = ", ".join("%" + names[o] for o in cc.operands[inst.name])
    text = f"{'ROOT ' if inst.name == cc.root else ''}%{names[inst.name]} = {shape} {inst.opcode}({inner})"
    for key, value in inst.attrs.items():
        if key == "metadata" or key in _NAME_ATTRS:
            continue
        if key in _CALL_KEYS:
            value = _NAME_TOKEN.sub(lambda m: "%" + comp_names.get(m.group(1), m.group(1)), value)
        text += f", {key}={value}"
    return text
