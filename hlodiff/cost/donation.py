"""Which inputs a graph replaces without giving their buffers to the outputs, and which donations it could not use.

A step that returns new parameters or optimizer state, computed from the old ones, holds both while it runs and
until the caller drops the old: the memory of that state doubles (JAX without ``donate_argnums``: elixir-nx/axon#645,
keras-core#888). And a donated input that no output can take (no output has its shape and dtype) is dropped with
at most a warning (jax-ml/jax#9237): the user asked for donation and did not get it.

The evidence is the optimized module alone: the header's ``input_output_alias`` (outputs written into a parameter's
buffer) and ``buffer_donor`` (parameters donated with no output chosen), and, for an output aliasing nothing, the
instruction computing it. An output *replaces* a parameter only when that instruction is elementwise arithmetic (or
a fusion of it) reading the parameter itself, of the output's exact shape: ``p - lr * g``, ``0.9 * m + 0.1 * g``,
``acc + g``. A gradient shaped like its weight is computed from activations, not read from the weight, so it is no
replacement (the weight is still needed); a copy of a parameter (JAX's ``jit_stage``, a ``device_put``) is none.
An output that is a parameter itself (through views and copies), unaliased, is the input handed back unchanged
(an eval step's ``return state, metrics``): nothing is computed, but XLA must give the output a buffer of its own,
so it copies the input on every call and both are held; JAX's own ``jit_stage`` (a ``device_put``) is not judged.
Only modules whose aliasing the header tells are judged (``aliased_source == "hlo"``: a JAX module or an optimized
torch_xla module; torch_xla's saved graphs are traced before it decides what to donate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.cost.memory import output_producers, output_shapes
from hlodiff.cost.source import SourceLocator
from hlodiff.errors import HlodiffError
from hlodiff.hlo.attributes import parse_buffer_donor, parse_input_output_alias, parse_metadata
from hlodiff.hlo.jax_eager_ops import NAMES as EAGER_OP_NAMES
from hlodiff.hlo.model import Instruction, Module, SourceFrame

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


@dataclass(frozen=True, slots=True)
class Undonated:
    """Output ``output`` (flat index) is the new value of parameter ``parameter``, in a buffer of its own."""

    parameter: int
    output: int
    shape: str
    bytes: int
    location: SourceFrame | None = None
    """The user's line of the update (the instruction computing the output), when the module names one."""
    unchanged: bool = False
    """The output is the parameter itself, handed back unchanged (``return state, metrics``): nothing is computed,
    yet without donation XLA copies it into a new buffer on every call and both are held."""
    argument: str | None = None
    """The Python argument the parameter came from, as JAX names it (``op_name="params['w']"`` -> ``params``); None
    when the module names none (torch_xla)."""

    def to_json(self) -> dict:
        from hlodiff.cost.model import frame_json

        return {"parameter": self.parameter, "output": self.output, "shape": self.shape, "bytes": self.bytes,
                "location": frame_json(self.location), "unchanged": self.unchanged, "argument": self.argument}


@dataclass(frozen=True, slots=True)
class UnusableDonation:
    """Parameter ``parameter`` was donated (``buffer_donor``) but no output aliases it. ``mismatch`` says why no
    output could take it when one output differs in one respect only: ``dtype`` (same dimensions, another element
    type: ``closest`` is that output's shape) or ``shape`` (same type, other dimensions); None otherwise."""

    parameter: int
    shape: str
    bytes: int
    mismatch: str | None = None
    closest: str | None = None

    def to_json(self) -> dict:
        return {"parameter": self.parameter, "shape": self.shape, "bytes": self.bytes, "mismatch": self.mismatch,
                "closest": self.closest}


GRADIENT_OP_MARKERS = ("transpose(jvp",)
"""Words of JAX's ``op_name`` metadata that mark reverse-mode autodiff (``jit(loss)/transpose(jvp())/add_any``): an
output computed there is a gradient, even when it reads its weight elementwise (weight decay folded into the loss:
``g + 2 * wd * w``); the caller keeps the weight, so it is no replaced input."""


def is_jax_own_module(name: str) -> bool:
    """``jit_tanh``, ``jit_stage``, ``jit__mean``: a module JAX compiled for an operation run eagerly (a name of
    :mod:`hlodiff.hlo.jax_eager_ops`, or one of JAX's private helpers). Such an eager op's input usually lives on in
    the user's code: not donating it is no finding."""
    if not name.startswith("jit_"):
        return False
    rest = name.removeprefix("jit_")
    return rest.startswith("_") or rest in EAGER_OP_NAMES


def donation_facts(module: Module, where: SourceLocator) -> tuple[list[Undonated], list[UnusableDonation]]:
    """(updates written into new buffers, donations no output took) of one module whose header tells its aliasing."""
    if is_jax_own_module(module.name):
        return [], []
    try:
        raw = module.attrs.get("input_output_alias")
        aliases = parse_input_output_alias(raw) if raw else ()
        donors = parse_buffer_donor(module.attrs["buffer_donor"]) if module.attrs.get("buffer_donor") else ()
    except HlodiffError:
        return [], []
    params = module.entry.parameters()
    by_number = {_number(p, i): p for i, p in enumerate(params)}
    aliased_params = {a.parameter for a in aliases if not a.parameter_index}
    aliased_outputs = {a.output_index for a in aliases}
    outs = output_shapes(module)
    flat_index = _flat_indices(module)
    root = module.entry.root
    producers = output_producers(module) if root.shape.is_tuple else [root]
    undonated: list[Undonated] = []
    taken: set[int] = set(aliased_params)
    entry = module.entry.by_name()  # once per module: a torch_xla step has thousands of outputs
    comps = {c.name: c for c in module.computations}
    for k, (shape, producer) in enumerate(zip(outs, producers)):
        if flat_index[k] in aliased_outputs or producer is None or not shape.dims:
            continue  # a scalar matches every scalar operand (a learning rate, a divisor): no evidence
        source = _through_views(producer, entry)
        if source.opcode == "parameter":
            # the input handed back unchanged, undonated: XLA copies it into a buffer of its own every call
            number = source.parameter_number
            if (number is not None and number in by_number and number not in taken
                    and source.shape.without_layout() == shape.without_layout()):
                taken.add(number)
                undonated.append(Undonated(number, k, str(shape.without_layout()), shape.byte_size(), None,
                                           unchanged=True, argument=_argument(by_number.get(number))))
            continue
        if _is_gradient(producer, entry, comps):
            continue
        param = _replaced_parameter(producer, shape, entry, comps, by_number, taken)
        if param is None:
            continue
        taken.add(param)
        undonated.append(Undonated(param, k, str(shape.without_layout()), shape.byte_size(),
                                   where.frame(producer), argument=_argument(by_number.get(param))))
    unusable = []
    for d in donors:
        p = by_number.get(d.parameter)
        if p is None or d.parameter in aliased_params or d.parameter_index or p.shape.is_tuple:
            continue
        mismatch, closest = _why_no_output(p.shape, outs)
        unusable.append(UnusableDonation(d.parameter, str(p.shape.without_layout()), p.shape.byte_size(),
                                         mismatch, closest))
    return undonated, unusable


def data_arguments(module: Module) -> list[tuple[str, str]]:
    """(argument, shape) of each array a module that donates something takes without donating it and returns
    nothing shaped like: the batch of a step whose state is donated (``train_step(params, noisy, clean)`` with
    ``donate_argnums=(0,)``). The user knows donation and left these out because they read them after the call;
    another function of the run replacing an array of that argument's name and shape (an inference function
    returning ``noisy - net(noisy)``) is handed the same batch, no state (:func:`hlodiff.cost.headline._undonated`).
    Empty for a module that donates nothing, or whose header cannot be read."""
    if is_jax_own_module(module.name):
        return []
    try:
        raw = module.attrs.get("input_output_alias")
        aliases = parse_input_output_alias(raw) if raw else ()
        donors = parse_buffer_donor(module.attrs["buffer_donor"]) if module.attrs.get("buffer_donor") else ()
    except HlodiffError:
        return []
    donated = {a.parameter for a in aliases} | {d.parameter for d in donors}
    if not donated:
        return []
    outs = {str(o.without_layout()) for o in output_shapes(module)}
    found = []
    for i, p in enumerate(module.entry.parameters()):
        shape = str(p.shape.without_layout())
        name = _argument(p)
        if _number(p, i) in donated or p.shape.is_tuple or not p.shape.dims or shape in outs or name is None:
            continue
        found.append((name, shape))
    return found


def _number(param: Instruction, position: int) -> int:
    """The parameter's number (``parameter(3)``), else its position."""
    return param.parameter_number if param.parameter_number is not None else position


def _is_gradient(producer: Instruction, entry: dict[str, Instruction], comps: dict) -> bool:
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
    return any(m in _op_name(inst) for m in GRADIENT_OP_MARKERS)


def _argument(param: Instruction | None) -> str | None:
    """JAX names an entry parameter after the argument it came from (``params``, ``params['w']``, ``batch.x``):
    the argument's own name, for ``donate_argnames`` (review 6: the fix could name what to donate)."""
    name = _op_name(param) if param is not None else ""
    root = re.split(r"[\[.]", name, maxsplit=1)[0]
    return root if root.isidentifier() else None


def _op_name(inst: Instruction) -> str:
    raw = inst.attrs.get("metadata")
    if not raw:
        return ""
    try:
        return parse_metadata(raw).op_name or ""
    except HlodiffError:
        return ""


def _through_views(inst: Instruction, insts: dict[str, Instruction]) -> Instruction:
    while inst.opcode in ("bitcast", "copy") and inst.operands and inst.operands[0] in insts:
        inst = insts[inst.operands[0]]
    return inst


def _flat_indices(module: Module) -> list[tuple[int, ...]]:
    """The ``input_output_alias`` index of each flat output: ``()`` for an array ROOT, ``(k,)`` for a tuple's."""
    root = module.entry.root.shape
    if not root.is_tuple:
        return [()]
    out: list[tuple[int, ...]] = []

    def walk(shape, prefix):
        if shape.is_tuple:
            for i, s in enumerate(shape.tuple_shapes):
                walk(s, prefix + (i,))
        else:
            out.append(prefix)

    walk(root, ())
    return out


def _replaced_parameter(producer: Instruction, shape, entry: dict[str, Instruction], comps: dict,
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


def _why_no_output(shape, outs) -> tuple[str | None, str | None]:
    bare = shape.without_layout()
    for o in outs:
        o = o.without_layout()
        if o.dims == bare.dims and o.element_type != bare.element_type:
            return "dtype", str(o)
    for o in outs:
        o = o.without_layout()
        if o.element_type == bare.element_type and o.dims != bare.dims and o.byte_size() == bare.byte_size():
            return "shape", str(o)
    return None, None


def told_unusable(graph, arrays: tuple[str, ...]) -> list[UnusableDonation]:
    """The graph's unusable donations, with the arrays JAX's log said it could not donate (``f32[256,32]``) that
    the module's header did not show (JAX drops a donation no output matches before XLA sees it: no
    ``buffer_donor``). Each is matched to a parameter of that shape not already listed, first come first."""
    from hlodiff.hlo.shapes import parse_shape

    found = list(graph.unusable_donations)
    known = [u.shape for u in found]
    used = {u.parameter for u in found}
    try:
        outs = [parse_shape(o) for o in graph.output_shapes]
    except HlodiffError:
        outs = []
    for array in arrays:
        if array in known:
            known.remove(array)  # the header told this one already
            continue
        number = next((k for k, shape in enumerate(graph.parameter_shapes) if shape == array and k not in used), None)
        if number is None:
            continue
        used.add(number)
        shape = parse_shape(array)
        mismatch, closest = _why_no_output(shape, outs)
        found.append(UnusableDonation(number, array, shape.byte_size(), mismatch, closest))
    return found
