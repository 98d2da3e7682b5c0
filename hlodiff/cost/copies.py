"""Copies a program makes: every ``copy`` outside fusions, and the loop-buffer copies of paxml#17.

A ``copy`` outside a fusion is a physical copy of a whole buffer (XLA inserts them for layout changes and to
break aliasing). A carried buffer written whole into a stacked loop output (a scan returning its buffer as ys) is
one more whole copy per iteration. Inside a ``while`` body it runs every iteration. The expensive case users cannot see without
reading optimized HLO by hand: a loop-carried buffer that the body updates in place with
``dynamic-update-slice`` (directly or as the root of a fusion) is nevertheless copied whole in the same
iteration, so a slice update costs a full-buffer copy per microbatch.
"""

from __future__ import annotations

from hlodiff.cost.buffer_writes import (SHIFT_OPCODES, fused_copy, is_shift, masked_root, masks_buffer,
                                       one_hot_root, one_hot_writes, shifts_buffer, snapshot_of, updates_in_place,
                                       writes_whole_into)
from hlodiff.cost.loops import Context
from hlodiff.cost.model import Copy, LoopBufferCopy
from hlodiff.cost.stale_reads import kept_in_carry, reads_old_value
from hlodiff.cost.source import SourceLocator
from hlodiff.hlo.model import Computation, Instruction, Module

COPY_OPCODES = ("copy", "copy-start")
_VIEW_OPCODES = ("bitcast", "copy", "copy-start", "copy-done", "transpose", "reshape")
"""Ops that carry a whole buffer forward (possibly as a physical copy) without changing its element count."""


def find_copies(ctxs: list[Context], where: SourceLocator, aliasing: frozenset[str] = frozenset()) -> list[Copy]:
    """Every copy outside fusions, in the order the program's computations were reached; ``aliasing``: the names of
    those XLA made for an in-place (aliased) output (:func:`hlodiff.cost.alias_copies.aliasing_copies`)."""
    found = []
    for ctx in ctxs:
        for inst in ctx.computation.instructions:
            if inst.opcode in COPY_OPCODES:
                shape = inst.shape.tuple_shapes[0] if inst.opcode == "copy-start" and inst.shape.is_tuple else inst.shape
                found.append(Copy(inst.name, ctx.computation.name, str(shape.without_layout()), shape.byte_size(), ctx.loop,
                                  ctx.times if ctx.loop is not None else None, where.frame(inst),
                                  aliasing=ctx.loop is None and inst.name in aliasing))
    return found


def find_loop_buffer_copies(module: Module, ctxs: list[Context], where: SourceLocator) -> list[LoopBufferCopy]:
    """Loop-carried buffers updated by dynamic-update-slice and copied whole in the same iteration."""
    by_name = {c.name: c for c in module.computations}
    found = []
    seen: set[str] = set()
    for ctx in ctxs:
        for inst in ctx.computation.instructions:
            if inst.opcode != "while" or inst.name in seen:
                continue
            seen.add(inst.name)
            body = by_name.get((inst.attr("body") or "").lstrip("%"))
            if body is None:
                continue
            times = None if ctx.times is None else _times(ctxs, inst.name)
            found.extend(_in_body(inst, body, by_name, times, where))
    return found


def _times(ctxs: list[Context], loop: str) -> int | None:
    for ctx in ctxs:
        if ctx.loop == loop:
            return ctx.times
    return None


def _in_body(loop: Instruction, body: Computation, by_name: dict[str, Computation], times: int | None,
             where: SourceLocator) -> list[LoopBufferCopy]:
    users: dict[str, list[Instruction]] = {}
    for inst in body.instructions:
        for operand in inst.operands:
            users.setdefault(operand, []).append(inst)
    param = next((i for i in body.instructions if i.opcode == "parameter"), None)
    root = body.root
    if param is None or root.opcode != "tuple":
        return []
    found = []
    carried: dict[int, tuple[Instruction, dict]] = {}
    for inst in users.get(param.name, []):
        if inst.opcode != "get-tuple-element" or inst.shape.is_tuple:
            continue
        k = int(inst.attr("index", "-1") or -1)
        if not 0 <= k < len(root.operands):
            continue
        lineage, updates = _lineage(inst, users, by_name, body.by_name())
        carried[k] = (inst, lineage)
        if not updates or root.operands[k] not in lineage:
            continue
        whole = inst.shape.num_elements()
        shifts = {u.name for u in updates if is_shift(u, by_name)}
        masks = {u.name for u in updates if masked_root(u, by_name) is not None}
        one_hot = {u.name for u in updates if one_hot_root(u, by_name) is not None}
        copies = [lineage[n] for n in sorted(lineage, key=_order(body))
                  if n in shifts or n in masks or n in one_hot or _is_whole_copy(lineage[n], whole, by_name)]
        emits = [u for n in sorted(lineage, key=_order(body)) for u in users.get(n, [])
                 if u.name not in lineage and writes_whole_into(u, n, whole, by_name)]
        copies += emits
        if not copies:
            continue
        plain = not shifts and not masks and not one_hot and not emits
        in_place = [u for u in updates if u.name not in shifts and u.name not in masks and u.name not in one_hot]
        location = next((f for f in (where.frame(c) for c in copies) if f is not None), None) \
            or next((f for f in (where.frame(u) for u in updates) if f is not None), None) or where.frame(loop)
        found.append(LoopBufferCopy(loop.name, str(inst.shape.without_layout()), len(copies),
                                    inst.shape.byte_size(), times, k, tuple(c.name for c in copies), location,
                                    shift=bool(shifts), masked=bool(masks) and not shifts,
                                    emitted=bool(emits) and not shifts and not masks and not one_hot
                                    and len(emits) == len(copies),
                                    one_hot=bool(one_hot) and not shifts and not masks,
                                    stale_read=plain and reads_old_value(in_place, lineage, users, body.by_name()),
                                    kept_old=plain and kept_in_carry(in_place, lineage, root, k, body.by_name())))
    found.extend(_snapshots(loop, body, root, carried, by_name, times, where))
    return found


def _snapshots(loop: Instruction, body: Computation, root: Instruction, carried: dict[int, tuple[Instruction, dict]],
               by_name: dict[str, Computation], times: int | None, where: SourceLocator) -> list[LoopBufferCopy]:
    """Carried buffers replaced whole by another carried buffer on a scalar decision (:data:`SNAPSHOT_OPCODES`):
    ``best = jnp.where(score > best_score, buf, best)``, a snapshot of the loop's buffer kept beside it."""
    insts = body.by_name()
    found = []
    for k, (inst, _) in sorted(carried.items()):
        value = insts.get(root.operands[k])
        if value is None:
            continue
        taken = snapshot_of(value, inst.name, by_name, insts)
        if taken is None or not any(taken in lineage for j, (_, lineage) in carried.items() if j != k):
            continue
        found.append(LoopBufferCopy(loop.name, str(inst.shape.without_layout()), 1, inst.shape.byte_size(), times,
                                    k, (value.name,), where.frame(value) or where.frame(loop), snapshot=True))
    return found


def _order(body: Computation):
    position = {inst.name: i for i, inst in enumerate(body.instructions)}
    return lambda name: position.get(name, 0)


def _lineage(start: Instruction, users: dict[str, list[Instruction]], by_name: dict[str, Computation],
             body_insts: dict[str, Instruction] | None = None):
    """Values holding the whole carried buffer in this iteration (``start`` and what views, copies, updates it in
    place or shifts it), and the updates (in place, or shifts) among them."""
    whole = start.shape.num_elements()
    lineage = {start.name: start}
    updates = []
    todo = [start]
    while todo:
        value = todo.pop()
        for user in users.get(value.name, []):
            if user.opcode == "slice" and not user.shape.is_tuple:
                for join in users.get(user.name, []):  # concatenate(slice(buf), new): an unfused shift
                    if (join.opcode in SHIFT_OPCODES and join.name not in lineage and not join.shape.is_tuple
                            and join.shape.num_elements() == whole):
                        lineage[join.name] = join
                        updates.append(join)
                        todo.append(join)
                continue
            if user.name in lineage or user.shape.is_tuple or user.shape.num_elements() != whole:
                continue
            if user.opcode in _VIEW_OPCODES:
                pass
            elif (updates_in_place(user, value.name, by_name) or shifts_buffer(user, value.name, by_name)
                  or masks_buffer(user, value.name, by_name, body_insts)
                  or one_hot_writes(user, value.name, by_name, body_insts)):
                updates.append(user)
            elif user.opcode == "fusion" and fused_copy(user, by_name):
                pass
            else:
                continue
            lineage[user.name] = user
            todo.append(user)
    return lineage, updates


def _is_whole_copy(inst: Instruction, whole: int, by_name: dict[str, Computation]) -> bool:
    if inst.shape.num_elements() != whole:
        return False
    if inst.opcode in COPY_OPCODES or inst.opcode == "transpose":
        return True
    return inst.opcode == "fusion" and fused_copy(inst, by_name)
