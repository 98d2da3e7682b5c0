"""Labels, subgraph hashes and module fingerprints over normalized graphs.

Each node's hash covers its label and, in order, its operands' hashes (a Merkle hash of the subgraph it
computes). Two modules have the same fingerprint exactly when their normalized entry graphs are equal: same
instructions with the same labels wired the same way, called computations compared by their own hashes.
Hashes are BLAKE2 digests of text, so they are stable across processes and machines.
"""

from __future__ import annotations

import functools
import json
import re

try:  # what hashlib.blake2b is, without loading OpenSSL's module at start-up (hashlib imports _hashlib)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b as _blake2b


from hlodiff import progress
from hlodiff._runtime import paused_gc
from hlodiff.graph.canonical import (
    INDEX_MIN,
    CanonicalComputation,
    CanonicalModule,
    Normalization,
    build_computation,
    graph_index,
    live_nodes,
    reachable_computations,
    side_effect_roots,
    topological_order,
)
from hlodiff.accel import native
from hlodiff.graph.passes import ORDER
from hlodiff.graph.passes.parameter_order import canonical_ids
from hlodiff.errors import HloParseError
from hlodiff.hlo.attributes import CALL_KEYS, parse_frontend_attributes
from hlodiff.hlo.model import Instruction, Module

_CALL_KEYS = frozenset(CALL_KEYS)
_NAME_TOKEN = re.compile(r"%?([A-Za-z0-9_.\-]+)")
# Attributes that only hold names or numbering, erased with the names pass.
_NAME_ATTRS = frozenset({"control-predecessors"})
_shape_text: dict = {}  # Shape -> its text; shapes are few and immutable


def canonicalize(module: Module, options: Normalization = Normalization()) -> CanonicalModule:
    """Build the canonical graphs of ``module``, run the enabled passes, and compute hashes and fingerprint."""
    with paused_gc():
        return _canonicalize(module, options)


def _canonicalize(module: Module, options: Normalization) -> CanonicalModule:
    comps = {c.name: build_computation(c) for c in reachable_computations(module)}
    cm = CanonicalModule(module, options, comps, comps[module.entry.name])
    for name, run in ORDER[:2]:  # the passes that rewrite graphs
        if getattr(options, name):
            report = run(cm)
            if report is not None:
                cm.reports.append(report)
    shape_text = _shape_label(options, {})
    label_fn = functools.partial(_label, cm, shape_text=shape_text)  # one for the module, not one per computation
    size = sum(len(cc.insts) for cc in comps.values())
    with progress.stage("normalizing", size, size, "instructions") as bar:
        _hash_computations(cm, list(comps.values()), shape_text, label_fn, bar)
    for name, run in ORDER[2:]:  # the passes that decide what is compared
        if getattr(options, name):
            report = run(cm)
            if report is not None:
                cm.reports.append(report)
    for cc in comps.values():  # what comes next looks few names up in the index: its table of names goes
        if cc._index:
            native.index_compact(cc._index)
    cm.fingerprint = _digest(cm.computation_hashes[cm.entry.name], 16)
    return cm


def _hash_computations(cm: CanonicalModule, ccs: list[CanonicalComputation], shape_text, label_fn, bar) -> None:
    """Every computation's hashes, callees first (a caller's label holds its callees' hashes). With the
    accelerator, each run of small called computations is hashed in one call (``_accel.hash_small``, the same
    steps as :func:`_hash_computation`): an unrolled step calls a small reduction per block, and the Python steps
    around the C loops cost more than the loops (13,600 computations a side of the 300K pair)."""
    small = native is not None and cm.options.dead_code  # (with dead code kept, every node is hashed twice)
    plain = cm.options.names and cm.options.metadata
    refill = functools.partial(_refill_small, _hashing_context(cm), shape_text) if small else None
    i = 0
    while i < len(ccs):
        if small:
            i, hashed = native.hash_small(ccs, i, cm.entry, INDEX_MIN, plain, label_fn, shape_text, shape_text.by_id,
                                          _CALL_KEYS, cm.computation_hashes, refill)
            bar.advance(hashed)
            if i == len(ccs):
                break
        cc = ccs[i]  # the entry, a big or unusual computation: the general path
        _hash_computation(cm, cc, shape_text, label_fn)
        bar.advance(len(cc.insts))
        i += 1


def _hashing_context(cm: CanonicalModule) -> CanonicalModule:
    """What hashing reads of a module (its options, entry and computations' hashes: the same objects) without its
    computations: held by the small computations whose maps hash_small did not keep, where the module itself
    would make a reference cycle (comparing pauses the cyclic collector: a module would outlive its use)."""
    return CanonicalModule(cm.module, cm.options, {}, cm.entry, computation_hashes=cm.computation_hashes)


def _refill_small(context: CanonicalModule, shape_text, cc: CanonicalComputation) -> None:
    """A small computation's labels, hashes and parameter numbers made again, when something reads them: the
    steps hash_small took (they are _hash_computation's), on the graph it hashed (no pass rewrites a graph after
    hashing), so the same maps. Its hash stays the object hash_small made (equal computations share one)."""
    kept = context.computation_hashes[cc.name]
    _hash_computation(context, cc, shape_text, functools.partial(_label, context, shape_text=shape_text))
    assert context.computation_hashes[cc.name] == kept, cc.name
    context.computation_hashes[cc.name] = kept


def fingerprint(module: Module, options: Normalization = Normalization()) -> str:
    return canonicalize(module, options).fingerprint


def _digest(text: str, size: int = 12) -> str:
    return _blake2b(text.encode(), digest_size=size).hexdigest()


def label(cm: CanonicalModule, cc: CanonicalComputation, inst: Instruction) -> str:
    """The node's own comparable text: everything but its operands and its parameter number."""
    return _label(cm, inst, _shape_label(cm.options, {}))


def _shape_label(options: Normalization, by_id: dict[int, str]):
    """Shape -> its text, for one module's instructions. The parser shares one Shape object among the
    instructions that print the same shape, so a lookup by identity (no hashing of nested tuples) finds most;
    ``by_id`` lives only while the module does, so an id cannot be reused meanwhile. Layout-free shapes are
    built on the fly (temporary objects): those go through the value-keyed cache."""
    def text_of(shape) -> str:
        if options.layouts:
            shape = shape.without_layout()
        else:
            text = by_id.get(id(shape))
            if text is not None:
                return text
        text = _shape_text.get(shape)
        if text is None:
            text = _shape_text[shape] = str(shape)
        if not options.layouts:
            by_id[id(shape)] = text
        return text
    text_of.by_id = by_id  # the accelerator looks plain shapes up itself
    return text_of


def _label(cm: CanonicalModule, inst: Instruction, shape_text) -> str:
    options = cm.options
    parts = [inst.opcode, shape_text(inst.shape)]
    if inst.literal is not None:
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
        elif key == "frontend_attributes" and ("={" in value or '="{' in value):
            value = _frontend_spelling(value)
        parts.append(f"{key}={value}")
    if inst.truncated_operands:
        parts.append(f"...(+{inst.truncated_operands})")
    return "|".join(parts)


@functools.lru_cache(maxsize=4096)
def _frontend_spelling(raw: str) -> str:
    """One spelling for frontend attributes holding ``{...}`` values, which XLA writes quoted or not
    (``composite.attributes="{n = 1 : i32}"`` and ``composite.attributes={n = 1 : i32}`` are one value)."""
    try:
        items = parse_frontend_attributes(raw)
    except HloParseError:
        return raw
    parts = []
    for key, value in items.items():
        if value.startswith("{") and value.endswith("}"):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={json.dumps(value)}")
    return "{" + ",".join(parts) + "}"


def _hash_computation(cm: CanonicalModule, cc: CanonicalComputation, shape_text, label_fn) -> None:
    """Three steps: anonymous hashes (parameters known by shape only), canonical parameter numbers (a walk that
    uses them to visit outputs in an order independent of how the tracer ordered them), exact hashes.

    The anonymous hashes are what matching uses: they survive added inputs and reordered outputs, which would
    renumber parameters. The exact hashes (with canonical numbers) make the fingerprint tell ``add(p0, p1)``
    from ``add(p0, p0)``.
    """
    labels, anon, hashes = cc.labels, cc.anon, cc.hashes
    index = graph_index(cc)
    # Over the index when the text order is operand-first (what XLA and the tracers print): that order is the
    # topological order, and each operand's hash is read by position.
    ordered = index is not None and native.index_ordered(index)
    if ordered:
        order = None
    elif index is None and native is not None and native.defined_before_use(cc.operands):
        order = list(cc.operands)  # what topological_order returns for a small map printed operand-first
    else:
        order = topological_order(cc)
    # Most instructions carry no attribute but metadata: their label is built inline (the same text _label makes).
    plain = cm.options.names and cm.options.metadata
    if ordered:
        native.anon_hashes_ix(index, cc.insts, plain, label_fn, shape_text, shape_text.by_id, labels, anon,
                              _CALL_KEYS, cm.computation_hashes)
    elif native is not None:
        native.anon_hashes(order, cc.insts, cc.operands, plain, label_fn, shape_text, shape_text.by_id, labels, anon,
                           _CALL_KEYS, cm.computation_hashes)
    else:
        _anon_hashes(cm, cc, order, plain, shape_text)
    if cc is cm.entry:
        cc.param_ids = canonical_ids(cc)
    else:  # callers pass operands by position: a called computation's parameter numbers are meaning
        cc.param_ids = {p: cc.insts[p].parameter_number or 0 for p in cc.parameters()}
    if ordered:  # the root's hash and those of nodes it does not reach: what is read below and by _postorder
        native.exact_hashes_ix(index, labels, cc.param_ids, hashes, cc.root)
    elif native is not None:
        native.exact_hashes(order, labels, cc.operands, cc.param_ids, hashes)
    else:
        _exact_hashes(cc, order)
    parts = [hashes[cc.root]]
    parts.extend(sorted(f"{labels[p]}|#{cc.param_ids[p]}" for p in cc.parameters()))
    if not cm.options.parameter_order and cc is cm.entry:
        parts.append(",".join(sorted(f"{cc.param_ids[p]}={cc.insts[p].parameter_number}" for p in cc.parameters())))
    # What the root does not reach still counts when it has a side effect (a print's target, an outfeed), and
    # everything does when dead code is kept. Most computations have neither: no second walk for them.
    kept = cc.insts if not cm.options.dead_code else side_effect_roots(cc)
    if kept:
        live = live_nodes(cc)
        parts.extend(sorted(hashes[n] for n in kept if n not in live))
    cm.computation_hashes[cc.name] = _digest(";".join(parts))


def _anon_hashes(cm: CanonicalModule, cc: CanonicalComputation, order: list[str], plain: bool, shape_text) -> None:
    """Labels and anonymous hashes in operand-first order (the reference for ``_accel.anon_hashes``)."""
    labels, anon, insts, operands = cc.labels, cc.anon, cc.insts, cc.operands
    blake2b = _blake2b
    for name in order:
        inst = insts[name]
        attrs = inst.attrs
        if plain and (not attrs or (len(attrs) == 1 and "metadata" in attrs)) and not inst.truncated_operands:
            text = inst.opcode + "|" + shape_text(inst.shape)
            if inst.literal is not None:
                text = text + "|" + inst.literal
        else:
            text = _label(cm, inst, shape_text)
        labels[name] = text
        ops = operands[name]
        # A stable digest, not hash(): it orders outputs for canonical parameter numbers, and hash() of str
        # changes from process to process.
        if ops:  # map, not a list comprehension: no function frame per node (Python 3.11)
            text = text + "(" + ",".join(map(anon.__getitem__, ops)) + ")"
        anon[name] = blake2b(text.encode(), digest_size=8).hexdigest()


def _exact_hashes(cc: CanonicalComputation, order: list[str]) -> None:
    """Exact hashes: labels, canonical parameter numbers and operands' exact hashes (the reference for
    ``_accel.exact_hashes``)."""
    labels, hashes, operands, param_ids = cc.labels, cc.hashes, cc.operands, cc.param_ids
    blake2b = _blake2b
    for name in order:
        text = labels[name]
        if name in param_ids:
            text += f"|#{param_ids[name]}"
        ops = operands[name]
        if ops:
            text += "(" + ",".join(map(hashes.__getitem__, ops)) + ")"
        hashes[name] = blake2b(text.encode(), digest_size=12).hexdigest()

def normalized_text(cm: CanonicalModule) -> str:
    """Readable text of the normalized module: canonical names, no metadata, callees first.

    Equal for two modules exactly when their fingerprints are equal, so it is what snapshot files store.
    """
    order = _computation_order(cm)
    comp_names = {cc.name: ("main" if cc is cm.entry else f"comp.{i}") for i, cc in enumerate(order)}
    blocks = []
    for cc in order:
        names = _canonical_names(cc)
        lines = [("ENTRY " if cc is cm.entry else "") + f"%{comp_names[cc.name]} {{"]
        for node in _postorder(cc):
            inst = cc.insts[node]
            lines.append("  " + _normalized_line(cm, cc, inst, names, comp_names))
        lines.append("}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _computation_order(cm: CanonicalModule) -> list[CanonicalComputation]:
    """Callees before callers, each first reached through the canonical instruction order (not the text order)."""
    order: list[CanonicalComputation] = []
    placed: set[str] = set()

    def visit(cc: CanonicalComputation, active: frozenset[str]) -> None:
        for node in _postorder(cc):
            for callee in cc.insts[node].called_computation_names():
                target = cm.computations.get(callee)
                if target is not None and callee not in placed and callee not in active:
                    visit(target, active | {callee})
        if cc.name not in placed:
            placed.add(cc.name)
            order.append(cc)

    visit(cm.entry, frozenset({cm.entry.name}))
    return order


def _postorder(cc: CanonicalComputation) -> list[str]:
    """Nodes in a deterministic depth-first post-order from the root, then any others by hash. Computed once per
    canonical computation (a graph of a run is matched against its predecessor and its successor, and printed);
    callers do not change the list."""
    if cc._postorder is not None:
        return cc._postorder
    order = _walk_postorder(cc)
    if cc.root in cc.hashes:  # hashed (no pass runs after that rewrites a graph): the order is final
        cc._postorder = order
    return order


def _walk_postorder(cc: CanonicalComputation) -> list[str]:
    index = graph_index(cc)
    if index is not None:
        order = native.index_postorder(index, cc.root)
        if len(order) == len(cc.insts):
            return order
        seen = set(order)  # the walk reaches exactly what it lists
    elif native is not None:
        order, seen = native.postorder(cc.root, cc.operands)
    else:
        order, seen = _postorder_walk(cc.root, cc.operands)
    if len(seen) == len(cc.insts):  # the root reaches everything (most computations): nothing else to order
        return order
    rest = sorted((n for n in cc.insts if n not in seen), key=lambda n: (cc.labels.get(n, ""), cc.hashes.get(n, "")))
    return order + rest


def _postorder_walk(root: str, operands: dict[str, list[str]]) -> tuple[list[str], set[str]]:
    """Depth-first post-order from ``root`` (operands in order), and the nodes reached (the reference for
    ``_accel.postorder``)."""
    order: list[str] = []
    seen = {root}
    stack = [(root, iter(operands[root]))]  # each node with the operands it has still to visit
    while stack:
        name, pending = stack[-1]
        for op in pending:
            if op not in seen:
                seen.add(op)
                stack.append((op, iter(operands[op])))
                break
        else:
            stack.pop()
            order.append(name)
    return order, seen


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
        inner = str(cc.param_ids[inst.name] if cm.options.parameter_order else inst.parameter_number)
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
