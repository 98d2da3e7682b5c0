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
torch_xla module; torch_xla's saved graphs are traced before it decides what to donate). Which parameter an
output replaces is :mod:`hlodiff.cost.replaced_inputs`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.cost.memory import output_producers, output_shapes
from hlodiff.cost.replaced_inputs import is_gradient, op_name, replaced_parameter
from hlodiff.cost.source import SourceLocator
from hlodiff.errors import HlodiffError
from hlodiff.hlo.attributes import parse_buffer_donor, parse_input_output_alias
from hlodiff.hlo.jax_eager_ops import NAMES as EAGER_OP_NAMES
from hlodiff.hlo.model import Instruction, Module, SourceFrame


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
        from hlodiff.cost.figures import frame_json

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


def is_jax_own_module(name: str) -> bool:
    """``jit_tanh``, ``jit_stage``, ``jit__mean``: a module JAX compiled for an operation run eagerly (a name of
    :mod:`hlodiff.hlo.jax_eager_ops`, its private helpers included; a user's ``_train_step``, ``jit__train_step``, is
    the user's). Such an eager op's input usually lives on in the user's code: not donating it is no finding."""
    return name.startswith("jit_") and name.removeprefix("jit_") in EAGER_OP_NAMES


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
        if is_gradient(producer, entry, comps):
            continue
        param = replaced_parameter(producer, shape, entry, comps, by_number, taken)
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


def _argument(param: Instruction | None) -> str | None:
    """JAX names an entry parameter after the argument it came from (``params``, ``params['w']``, ``batch.x``):
    the argument's own name, for ``donate_argnames`` (review 6: the fix could name what to donate)."""
    name = op_name(param) if param is not None else ""
    root = re.split(r"[\[.]", name, maxsplit=1)[0]
    return root if root.isidentifier() else None


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
