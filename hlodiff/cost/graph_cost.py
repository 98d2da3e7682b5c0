"""The cost of one graph: one parse and a few linear walks over its module."""

from __future__ import annotations

from hlodiff import progress
from hlodiff.cost.alias_copies import aliasing_copies
from hlodiff.cost.constants import baked_constants
from hlodiff.cost.copies import find_copies, find_loop_buffer_copies
from hlodiff.cost.donation import data_arguments, donation_facts
from hlodiff.cost.reads import heavy_ops
from hlodiff.cost.loops import contexts
from hlodiff.cost.memory import aliased_bytes, output_producers, output_shapes, outputs, parameters
from hlodiff.cost.peak import estimate_peak
from hlodiff.cost.model import GraphCost
from hlodiff.cost.source import SourceLocator
from hlodiff.cost.stacked_outputs import find_reduced_stacks
from hlodiff.dumps.xla_memory import XlaMemory
from hlodiff.hlo.model import Module


def module_cost(module: Module, *, ref: str = "", index: int = 0, xla: XlaMemory | None = None) -> GraphCost:
    """Cost figures of a parsed module; ``xla`` is XLA's own memory report for it, when the dump has one."""
    with progress.stage("counting copies and memory", module.instruction_count()):
        ctxs, loops = contexts(module)
        where = SourceLocator(module)
        estimate = estimate_peak(module)
        undonated, unusable = donation_facts(module, where)
    return GraphCost(
        ref=ref or module.path, index=index, name=module.name, instructions=module.instruction_count(),
        parameters=parameters(module), outputs=outputs(module), aliased_bytes=aliased_bytes(module),
        peak_bytes=xla.total_bytes if xla is not None else estimate,
        peak_source="xla" if xla is not None else "estimate",
        estimated_peak_bytes=estimate,
        xla_live_peak_bytes=xla.live_peak_bytes if xla is not None else None,
        copies=find_copies(ctxs, where, aliasing_copies(module)),
        loop_buffer_copies=find_loop_buffer_copies(module, ctxs, where) + find_reduced_stacks(module, ctxs, where),
        loops=[loop.to_json() for loop in loops],
        output_shapes=[str(s.without_layout()) for s in output_shapes(module)],
        parameter_shapes=[str(p.shape.without_layout()) for p in module.entry.parameters()],
        parameters_without_source=_without_source(module, where),
        output_ops=_output_ops(module, where),
        undonated=undonated, unusable_donations=unusable, heavy_ops=heavy_ops(module),
        data_arguments=data_arguments(module), baked_constants=baked_constants(module, where),
    )


def _output_ops(module: Module, where: SourceLocator) -> list[str | None]:
    """``aten__permute at linear.py:134`` per output: enough for a user to recognise a tensor (``W.T``)."""
    described: list[str | None] = []
    for inst in output_producers(module):
        if inst is None or inst.opcode == "parameter":
            described.append(None if inst is None else "parameter")
            continue
        frame = where.frame(inst)
        at = f" at {frame.file.rsplit('/', 1)[-1]}:{frame.line}" if frame is not None and frame.line else ""
        described.append(where.op(inst) + at)
    return described


def _without_source(module: Module, where: SourceLocator) -> list[str] | None:
    """Parameters whose metadata names no Python line, when the module does name lines elsewhere: torch_xla
    (``XLA_HLO_DEBUG``) gives a parameter the line of the first op that read its data, so none means autograd
    read it first."""
    params = module.entry.parameters()
    located = [where.frame(p) is not None for p in params]
    if not any(located) and not any(where.frame(i) is not None for i in module.entry.instructions[:200]):
        return None
    return [str(p.shape.without_layout()) for p, has in zip(params, located) if not has]
