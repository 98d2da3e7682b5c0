"""Bytes at a graph's boundary: parameters, outputs, outputs aliasing a parameter, and what computes each output.

Peak memory inside the graph is :mod:`hlodiff.cost.peak`.
"""

from __future__ import annotations

from hlodiff.cost.figures import Tally
from hlodiff.errors import HlodiffError
from hlodiff.hlo.attributes import parse_input_output_alias
from hlodiff.hlo.model import Instruction, Module, Shape


def parameters(module: Module) -> Tally:
    params = module.entry.parameters()
    return Tally(sum(_leaf_count(p.shape) for p in params), sum(p.shape.byte_size() for p in params))


def outputs(module: Module) -> Tally:
    root = module.entry.root.shape
    return Tally(_leaf_count(root), root.byte_size())


def output_shapes(module: Module) -> list[Shape]:
    return list(module.entry.root.shape.leaves())


def output_producers(module: Module) -> list[Instruction | None]:
    """The instruction computing each output of a tuple ROOT (through views), None where unknown."""
    entry = module.entry
    root = entry.root
    if root.opcode != "tuple" or len(root.operands) != len(root.shape.tuple_shapes):
        return [None] * len(output_shapes(module))
    insts = entry.by_name()
    out: list[Instruction | None] = []
    for name in root.operands:
        inst = insts.get(name)
        while inst is not None and inst.opcode in ("bitcast", "copy") and inst.operands:
            inst = insts.get(inst.operands[0])
        if inst is not None and inst.shape.is_tuple:
            out.extend([None] * sum(1 for _ in inst.shape.leaves()))
        else:
            out.append(inst)
    return out


def aliased_output_indices(module: Module) -> list[tuple[int, ...]]:
    """Output indices that ``input_output_alias`` (module header) writes into a parameter's buffer: donated inputs
    (torch_xla's optimizer states and weights, JAX's ``donate_argnums``); none when the header has none or it
    does not parse."""
    raw = module.attrs.get("input_output_alias")
    if not raw:
        return []
    try:
        return [alias.output_index for alias in parse_input_output_alias(raw)]
    except HlodiffError:
        return []


def aliased_bytes(module: Module) -> int:
    """Bytes of the outputs that reuse a parameter's buffer (``input_output_alias`` in the module header)."""
    root = module.entry.root.shape
    total = 0
    for index in aliased_output_indices(module):
        shape = _subshape(root, index)
        if shape is not None:
            total += shape.byte_size()
    return total


def _subshape(shape: Shape, index: tuple[int, ...]) -> Shape | None:
    for i in index:
        if not shape.is_tuple or i >= len(shape.tuple_shapes):
            return None
        shape = shape.tuple_shapes[i]
    return shape


def _leaf_count(shape: Shape) -> int:
    return sum(1 for _ in shape.leaves())
