"""Loop outputs stacked one value per iteration and only reduced after the loop.

A scan's per-iteration outputs (ys) are stacked: XLA carries a buffer of K slices through the ``while`` loop and
writes the iteration's value into slice t with a ``dynamic-update-slice``. When every use of that stacked output
after the loop reduces it over the stacked dimension (a sum or a mean: micro-batch gradients returned as ys and
averaged after ``lax.scan``), the loop holds K copies of a value of which only the sum is read; a running sum
carried through the loop (``acc + g``) holds one. Crossings round 7 (``x7c_scan_grads_stacked``): two
f32[8,256,256] buffers, eight copies of each weight, for an average. A stack the program reads whole after the loop
(per-layer outputs, a decoded sequence) is what ys are for, and a stack of scalars (a loss per micro-batch) is
too small to matter (:data:`MIN_STACKED_BYTES`).
"""

from __future__ import annotations

from hlodiff.cost.buffer_writes import _fused_root, _through_bitcasts
from hlodiff.cost.loops import Context
from hlodiff.cost.model import LoopBufferCopy
from hlodiff.cost.source import SourceLocator
from hlodiff.hlo.model import Computation, Instruction, Module

MIN_STACKED_BYTES = 1 << 20
"""Below this a stacked output is a metric per iteration (a loss, a count), not memory worth a change."""

_VIEWS = ("bitcast", "reshape", "copy")


def find_reduced_stacks(module: Module, ctxs: list[Context], where: SourceLocator) -> list[LoopBufferCopy]:
    """Stacked loop outputs (:func:`_stacked_indices`) whose every use after the loop reduces the stacked
    dimension away, each as a :class:`LoopBufferCopy` with ``reduced`` set: ``buffer_bytes`` is the whole stack,
    held while the loop runs."""
    by_name = {c.name: c for c in module.computations}
    found = []
    for ctx in ctxs:
        caller = ctx.computation
        users = _users(caller)
        for loop in caller.instructions:
            if loop.opcode != "while" or not loop.shape.is_tuple:
                continue
            body = by_name.get((loop.attr("body") or "").lstrip("%"))
            if body is None:
                continue
            for k, write in _stacked_indices(body, by_name).items():
                shape = loop.shape.tuple_shapes[k]
                if shape.byte_size() < MIN_STACKED_BYTES:
                    continue
                outs = [u for u in users.get(loop.name, []) if u.opcode == "get-tuple-element"
                        and int(u.attr("index", "-1") or -1) == k]
                if outs and all(_only_reduced(o, users, by_name) for o in outs):
                    found.append(LoopBufferCopy(loop.name, str(shape.without_layout()), 1, shape.byte_size(), None,
                                                k, (write.name,), where.frame(write) or where.frame(loop),
                                                reduced=True))
    return found


def _users(comp: Computation) -> dict[str, list[Instruction]]:
    users: dict[str, list[Instruction]] = {}
    for inst in comp.instructions:
        for operand in inst.operands:
            users.setdefault(operand, []).append(inst)
    return users


def _stacked_indices(body: Computation, by_name: dict[str, Computation]) -> dict[int, Instruction]:
    """Tuple indices whose new value is a ``dynamic-update-slice`` (unfused, or a fusion's root) of the carried
    element itself with an update of one slice along dimension 0: the scan's ys being filled. The write, by index."""
    root = body.root
    param = next((i for i in body.instructions if i.opcode == "parameter"), None)
    if param is None or root.opcode != "tuple":
        return {}
    insts = body.by_name()
    carried = {i.name: int(i.attr("index", "-1") or -1) for i in body.instructions
               if i.opcode == "get-tuple-element" and i.operands and i.operands[0] == param.name}
    found = {}
    for k, name in enumerate(root.operands):
        write = insts.get(name)
        if write is None or write.shape.is_tuple:
            continue
        written = _written_buffer(write, by_name)
        if written is not None and carried.get(written) == k and _one_slice(write, insts, by_name):
            found[k] = write
    return found


def _written_buffer(inst: Instruction, by_name: dict[str, Computation]) -> str | None:
    """The operand a ``dynamic-update-slice`` writes into (through a fusion's parameters), or None."""
    if inst.opcode == "dynamic-update-slice":
        return inst.operands[0] if inst.operands else None
    node, f_insts = _fused_root(inst, by_name) or (None, {})
    if node is None or node.opcode != "dynamic-update-slice" or not node.operands:
        return None
    target = _through_bitcasts(f_insts.get(node.operands[0], node), f_insts)
    if target.opcode != "parameter" or target.parameter_number is None:
        return None
    return inst.operands[target.parameter_number] if target.parameter_number < len(inst.operands) else None


def _one_slice(inst: Instruction, insts: dict[str, Instruction], by_name: dict[str, Computation]) -> bool:
    """The update is one slice of the stack along its first dimension (K slices, K >= 2)."""
    dims = inst.shape.dims
    if len(dims) < 2 or dims[0] < 2:
        return False
    if inst.opcode == "dynamic-update-slice":
        node, scope = inst, insts
    else:
        node, scope = _fused_root(inst, by_name) or (None, {})
    if node is None or len(node.operands) < 2 or node.operands[1] not in scope:
        return False
    return scope[node.operands[1]].shape.num_elements() * dims[0] == inst.shape.num_elements()


def _only_reduced(out: Instruction, users: dict[str, list[Instruction]], by_name: dict[str, Computation]) -> bool:
    """Every use of the stacked output sums its first dimension away: an adding ``reduce`` over dimension 0
    (unfused, or inside a fusion reading it as a parameter), through views of the same element count."""
    uses = users.get(out.name, [])
    if not uses:
        return False
    for use in uses:
        if use.opcode in _VIEWS and use.shape.num_elements() == out.shape.num_elements():
            if not _only_reduced(use, users, by_name):
                return False
        elif use.opcode == "reduce":
            if "0" not in _dimensions(use) or not _sums(use, by_name):
                return False
        elif use.opcode == "fusion":
            if not _fusion_reduces(use, out.name, by_name):
                return False
        else:
            return False
    return True


def _fusion_reduces(fusion: Instruction, operand: str, by_name: dict[str, Computation]) -> bool:
    fused = by_name.get((fusion.attr("calls") or "").lstrip("%"))
    if fused is None:
        return False
    numbers = [i for i, o in enumerate(fusion.operands) if o == operand]
    params = [p for p in fused.instructions if p.opcode == "parameter" and p.parameter_number in numbers]
    if not params:
        return False
    return all(_only_reduced(p, _users(fused), by_name) for p in params)


def _sums(reduce: Instruction, by_name: dict[str, Computation]) -> bool:
    """The reduction adds (a sum, or a mean's sum): the running sum the fix carries. A max or a min over the stack
    would want a running max, which this finding's fix does not say: left untold."""
    combine = by_name.get((reduce.attr("to_apply") or "").lstrip("%"))
    return combine is not None and combine.root.opcode == "add"


def _dimensions(inst: Instruction) -> set[str]:
    raw = (inst.attr("dimensions") or "").strip("{} ")
    return {d.strip() for d in raw.split(",") if d.strip()}
