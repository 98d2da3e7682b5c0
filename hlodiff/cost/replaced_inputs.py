"""Which parameter an output of a module replaces: the output is that parameter's new value when the instruction
computing it is elementwise arithmetic (or a fusion of it) reading the parameter itself, of the output's exact
shape (``p - lr * g``, ``0.9 * m + 0.1 * g``), when it writes part of the parameter anew (a KV cache's
``dynamic-update-slice``), or when a loop carries it and updates it in its body. A gradient (reverse-mode
autodiff's, by JAX's ``op_name``) is no replacement, even when it reads its weight elementwise.

Facts of one module; :mod:`hlodiff.cost.donation` asks them of each output the header leaves unaliased.
"""

from __future__ import annotations

from hlodiff.errors import HlodiffError
from hlodiff.hlo.attributes import parse_metadata
from hlodiff.hlo.model import Instruction


UPDATE_OPCODES = frozenset((
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "select", "clamp", "negate",
    "convert", "sqrt", "rsqrt", "exp", "log", "tanh", "power", "abs",
))
"""Instructions whose output is an elementwise function of their operands: reading a parameter of the output's
shape, the output is that parameter's new value (``p - lr * g``). A fusion is followed into its computation (XLA
fuses the update's arithmetic into one loop); a broadcast or a reduction ends the walk (a gradient read from
activations is no update of its weight)."""


PARTIAL_UPDATE_OPCODES = {
    "dynamic-update-slice": 0,   # lax.dynamic_update_slice(cache, row, (0, pos, 0)): a KV cache's new position
    "scatter": 0,                # cache.at[idx].set(v) with array indices
}
"""Instructions whose output is one operand with part of it replaced (opcode -> that operand's index): reading a
parameter of the output's shape there, the output is that parameter's new value, written whole into a buffer of
its own when undonated (sglang-jax#65: a decode step copies its whole KV cache to change one position). Only that
operand is followed: the slice written and the indices are other values."""


LOOP_OPCODES = frozenset(("while",))
"""Instructions whose result's element *k* is the loop-carried value started from the element *k* of their operand
tuple: a parameter carried through a ``fori_loop`` of train steps (a donated step called inside an undonated
``train_k``: its donation does not reach the outer computation, crossings round 5) comes out as that parameter's
new value, written into a buffer of its own when undonated (XLA copies the parameter into the loop first)."""


GRADIENT_OP_MARKERS = ("transpose(jvp",)
"""Words of JAX's ``op_name`` metadata that mark reverse-mode autodiff (``jit(loss)/transpose(jvp())/add_any``): an
output computed there is a gradient, even when it reads its weight elementwise (weight decay folded into the loss:
``g + 2 * wd * w``); the caller keeps the weight, so it is no replaced input."""


def is_gradient(producer: Instruction, entry: dict[str, Instruction], comps: dict) -> bool:
    """The output is computed by reverse-mode autodiff (:data:`GRADIENT_OP_MARKERS` in its op_name, or in the
    op_name of the fused instruction a multi-output fusion gives it)."""
    inst = producer
    if inst.opcode == "get-tuple-element" and inst.operands:
        source = entry.get(inst.operands[0])
        index = inst.attrs.get("index")
        if source is not None and source.opcode == "fusion":
            called = comps.get((source.attrs.get("calls") or "").lstrip("%"))
            if (called is not None and called.root.opcode == "tuple" and index is not None and index.isdigit()
                    and int(index) < len(called.root.operands)):
                inst = _names(called, comps).get(called.root.operands[int(index)]) or source
            else:
                inst = source
    return any(m in op_name(inst) for m in GRADIENT_OP_MARKERS)


def op_name(inst: Instruction) -> str:
    raw = inst.attrs.get("metadata")
    if not raw:
        return ""
    try:
        return parse_metadata(raw).op_name or ""
    except HlodiffError:
        return ""


def replaced_parameter(producer: Instruction, shape, entry: dict[str, Instruction], comps: dict,
                        by_number: dict[int, Instruction], taken: set[int]) -> int | None:
    """The number of the parameter of ``shape`` whose new value ``producer`` computes, or None: the first entry
    parameter of that exact shape reached from ``producer`` through elementwise arithmetic alone (into a fusion's
    computation and back out through its operands; a multi-output fusion's ``get-tuple-element`` follows its own
    output)."""
    want = shape.without_layout()
    for number in _elementwise_reads(producer, want, entry, entry, comps, None, 0):
        if number in by_number and number not in taken:
            return number
    return None


_MAX_DEPTH = 12


def _elementwise_reads(inst: Instruction | None, want, insts: dict, entry: dict, comps: dict,
                       fusion: Instruction | None, depth: int):
    """Entry parameter numbers of shape ``want`` read by ``inst`` through elementwise ops (in ``insts``: the entry,
    or the fused computation of ``fusion``)."""
    if inst is None or depth > _MAX_DEPTH:
        return
    while inst is not None and inst.opcode in ("bitcast", "copy") and inst.operands:
        inst = insts.get(inst.operands[0])
    if inst is None:
        return
    if inst.opcode == "parameter":
        if fusion is None:
            if inst.shape.without_layout() == want and inst.parameter_number is not None:
                yield inst.parameter_number
        elif inst.parameter_number is not None and inst.parameter_number < len(fusion.operands):
            outer = entry.get(fusion.operands[inst.parameter_number])
            yield from _elementwise_reads(outer, want, entry, entry, comps, None, depth + 1)
        return
    if inst.shape.is_tuple or tuple(inst.shape.dims) != tuple(want.dims):
        return
    if inst.opcode == "get-tuple-element" and fusion is None and inst.operands:
        source = insts.get(inst.operands[0])
        index = inst.attrs.get("index")
        if source is not None and source.opcode == "fusion" and index is not None and index.isdigit():
            called = comps.get((source.attrs.get("calls") or "").lstrip("%"))
            if called is not None and called.root.opcode == "tuple" and int(index) < len(called.root.operands):
                inner = _names(called, comps)
                yield from _elementwise_reads(inner.get(called.root.operands[int(index)]), want, inner, entry,
                                              comps, source, depth + 1)
        elif (source is not None and source.opcode in LOOP_OPCODES and index is not None and index.isdigit()
              and _body_updates_carry(source, int(index), want, comps)):
            start = insts.get(source.operands[0]) if source.operands else None
            if start is not None and start.opcode == "tuple" and int(index) < len(start.operands):
                yield from _elementwise_reads(insts.get(start.operands[int(index)]), want, insts, entry, comps,
                                              fusion, depth + 1)
        return
    if inst.opcode == "fusion" and fusion is None:
        called = comps.get((inst.attrs.get("calls") or "").lstrip("%"))
        if called is not None:
            inner = _names(called, comps)
            yield from _elementwise_reads(called.root, want, inner, entry, comps, inst, depth + 1)
        return
    if inst.opcode in PARTIAL_UPDATE_OPCODES:
        k = PARTIAL_UPDATE_OPCODES[inst.opcode]
        if k < len(inst.operands):
            yield from _elementwise_reads(insts.get(inst.operands[k]), want, insts, entry, comps, fusion, depth + 1)
        return
    if inst.opcode not in UPDATE_OPCODES or inst.opcode == "fusion":
        return
    for name in inst.operands:
        yield from _elementwise_reads(insts.get(name), want, insts, entry, comps, fusion, depth + 1)


def _body_updates_carry(loop: Instruction, k: int, want, comps: dict) -> bool:
    """The loop's body computes its carried element ``k`` from that element itself through elementwise arithmetic
    or a partial update (``p - lr * g``, ``cache.at[t].set(row)``): the loop's result is that value's new value.
    An element the body recomputes from others (``x = tanh(x @ a)``, an iterate) is no update of it."""
    body = comps.get((loop.attrs.get("body") or "").lstrip("%"))
    if body is None or body.root.opcode != "tuple" or k >= len(body.root.operands):
        return False
    insts = _names(body, comps)
    return _reads_carry(insts.get(body.root.operands[k]), k, want, insts, insts, comps, None, 0)


def _reads_carry(inst: Instruction | None, k: int, want, insts: dict, body: dict, comps: dict,
                 fusion: Instruction | None, depth: int) -> bool:
    """:func:`_elementwise_reads` inside a loop body, ending at the body's carried element ``k``."""
    while inst is not None and inst.opcode in ("bitcast", "copy") and inst.operands:
        inst = insts.get(inst.operands[0])
    if inst is None or depth > _MAX_DEPTH:
        return False
    if inst.opcode == "parameter":
        if fusion is None or inst.parameter_number is None or inst.parameter_number >= len(fusion.operands):
            return False
        return _reads_carry(body.get(fusion.operands[inst.parameter_number]), k, want, body, body, comps, None,
                            depth + 1)
    if inst.opcode == "get-tuple-element" and fusion is None:
        source = insts.get(inst.operands[0]) if inst.operands else None
        return source is not None and source.opcode == "parameter" and inst.attrs.get("index") == str(k)
    if inst.shape.is_tuple or tuple(inst.shape.dims) != tuple(want.dims):
        return False
    if inst.opcode == "fusion" and fusion is None:
        called = comps.get((inst.attrs.get("calls") or "").lstrip("%"))
        return called is not None and _reads_carry(called.root, k, want, _names(called, comps), body, comps, inst,
                                                   depth + 1)
    if inst.opcode in PARTIAL_UPDATE_OPCODES:
        i = PARTIAL_UPDATE_OPCODES[inst.opcode]
        return i < len(inst.operands) and _reads_carry(insts.get(inst.operands[i]), k, want, insts, body, comps,
                                                       fusion, depth + 1)
    if inst.opcode not in UPDATE_OPCODES:
        return False
    return any(_reads_carry(insts.get(n), k, want, insts, body, comps, fusion, depth + 1) for n in inst.operands)


def _names(comp, comps: dict) -> dict[str, Instruction]:
    """A fused computation's instructions by name, built once per module walk (kept in ``comps``)."""
    key = ("#names", comp.name)
    if key not in comps:
        comps[key] = comp.by_name()
    return comps[key]
