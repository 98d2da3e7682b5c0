"""Layers for Model Explorer: where each instruction of a module sits (its ``namespace``), from its metadata.

A 35K-instruction module read as one flat graph is not navigable; Model Explorer collapses nodes that share a
namespace prefix into layers. The path comes from the instruction's ``op_name`` scopes (JAX named scopes,
torch_xla's ``aten__add.99/...`` call groups), else the op type torch_xla recorded; parameters share one layer;
every called computation is a layer of its own inside the layer of its first caller.
"""

from __future__ import annotations

import re
from collections import deque

from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule

PARAMETERS_LAYER = "parameters"
NO_OP_NAME_LAYER = "(no op_name)"

_TORCH_CALL = re.compile(r"^(?P<op>[A-Za-z_]+__\w+?)\.\d+$")  # aten__add.99: one call of aten::add


def layer_path(op_name: str | None, op_type: str | None, opcode: str) -> tuple[str, ...]:
    """The layers an instruction sits in, outermost first, from its metadata.

    ``jit(step)/block_3/attn/dot_general`` -> (jit(step), block_3, attn); torch_xla's ``aten__add.99/aten__add``
    -> (aten__add, aten__add.99): the calls of one op side by side in one layer; a bare torch_xla op name
    ``aten__addcmul`` -> (aten__addcmul,); parameters -> (parameters,); no op_name -> ((no op_name),)."""
    if opcode == "parameter":
        return (PARAMETERS_LAYER,)
    name = (op_name or "").split(";")[0]
    parts = [_part(p) for p in name.split("/") if p.strip()]
    scope = parts[:-1]
    if scope and (call := _TORCH_CALL.match(scope[0])):
        scope = [call["op"], *scope]
    if not scope:
        scope = [_part(op_type) if op_type and op_type.strip() else parts[0] if parts else NO_OP_NAME_LAYER]
    return tuple(scope)


def _part(text: str) -> str:
    return " ".join(text.split()).replace("/", "|")


def common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The leading layers every path shares (``jit(step)`` on every op of a jitted step: one layer saying nothing)."""
    if not paths:
        return ()
    first = paths[0]
    n = min(len(p) for p in paths)
    k = 0
    while k < n and all(p[k] == first[k] for p in paths):
        k += 1
    return first[:k]


def computation_layers(cm: CanonicalModule) -> dict[str, dict[str, tuple[str, ...]]]:
    """Computation name -> instruction name -> layer path. The entry at the top; a called computation as a layer
    named after it, inside the layer of its first caller (breadth first from the entry, text order)."""
    placed: dict[str, tuple[str, ...]] = {cm.entry.name: ()}
    layers: dict[str, dict[str, tuple[str, ...]]] = {}
    queue = deque([cm.entry.name])
    while queue:
        cc = cm.computations[queue.popleft()]
        own = _own_layers(cm, cc)
        base = placed[cc.name]
        layers[cc.name] = {n: base + own[n] for n in cc.insts}
        for name, inst in cc.insts.items():
            for callee in inst.called_computation_names():
                if callee in cm.computations and callee not in placed:
                    placed[callee] = layers[cc.name][name] + (_part(callee),)
                    queue.append(callee)
    return layers


def _own_layers(cm: CanonicalModule, cc: CanonicalComputation) -> dict[str, tuple[str, ...]]:
    """Layer paths inside one computation, the scope prefix all its scoped instructions share removed; the root
    stays at the computation's top, where the outputs are."""
    paths, scoped = {}, []
    for name, inst in cc.insts.items():
        meta = cm.metadata(inst)
        path = layer_path(meta.op_name, meta.op_type, inst.opcode)
        paths[name] = path
        if meta.op_name and "/" in meta.op_name and inst.opcode != "parameter" \
                and not _TORCH_CALL.match(meta.op_name.split("/")[0]):
            scoped.append(path)
    cut = len(common_prefix(scoped)) if len(scoped) > 1 else 0
    out = {n: (p[cut:] if cut and p[:cut] == tuple(scoped[0][:cut]) else p) for n, p in paths.items()}
    out[cc.root] = ()
    if cc is not cm.entry:  # a called computation's parameters are its top, not a layer of their own
        out.update((n, ()) for n, inst in cc.insts.items() if inst.opcode == "parameter")
    return out
