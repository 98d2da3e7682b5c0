"""Copies a program makes: every ``copy`` outside fusions, and the loop-buffer copies of paxml#17.

A ``copy`` outside a fusion is a physical copy of a whole buffer (XLA inserts them for layout changes and to
break aliasing). A carried buffer written whole into a stacked loop output (a scan returning its buffer as ys) is
one more whole copy per iteration. Inside a ``while`` body it runs every iteration. The expensive case users cannot see without
reading optimized HLO by hand: a loop-carried buffer that the body updates in place with
``dynamic-update-slice`` (directly or as the root of a fusion) is nevertheless copied whole in the same
iteration, so a slice update costs a full-buffer copy per microbatch.
"""

from __future__ import annotations

from hlodiff.cost.loops import Context
from hlodiff.cost.model import Copy, LoopBufferCopy
from hlodiff.cost.source import SourceLocator
from hlodiff.hlo.model import Computation, Instruction, Module

COPY_OPCODES = ("copy", "copy-start")
_VIEW_OPCODES = ("bitcast", "copy", "copy-start", "copy-done", "transpose", "reshape")
"""Ops that carry a whole buffer forward (possibly as a physical copy) without changing its element count."""


def find_copies(ctxs: list[Context], where: SourceLocator) -> list[Copy]:
    """Every copy outside fusions, in the order the program's computations were reached."""
    found = []
    for ctx in ctxs:
        for inst in ctx.computation.instructions:
            if inst.opcode in COPY_OPCODES:
                shape = inst.shape.tuple_shapes[0] if inst.opcode == "copy-start" and inst.shape.is_tuple else inst.shape
                found.append(Copy(inst.name, ctx.computation.name, str(shape.without_layout()), shape.byte_size(), ctx.loop,
                                  ctx.times if ctx.loop is not None else None, where.frame(inst)))
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
        shifts = {u.name for u in updates if _shifts(u, by_name)}
        masks = {u.name for u in updates if _masked_root(u, by_name) is not None}
        one_hot = {u.name for u in updates if _one_hot_root(u, by_name) is not None}
        copies = [lineage[n] for n in sorted(lineage, key=_order(body))
                  if n in shifts or n in masks or n in one_hot or _is_whole_copy(lineage[n], whole, by_name)]
        emits = [u for n in sorted(lineage, key=_order(body)) for u in users.get(n, [])
                 if u.name not in lineage and _writes_whole_into(u, n, whole, by_name)]
        copies += emits
        if not copies:
            continue
        location = next((f for f in (where.frame(c) for c in copies) if f is not None), None) \
            or next((f for f in (where.frame(u) for u in updates) if f is not None), None) or where.frame(loop)
        found.append(LoopBufferCopy(loop.name, str(inst.shape.without_layout()), len(copies),
                                    inst.shape.byte_size(), times, k, tuple(c.name for c in copies), location,
                                    shift=bool(shifts), masked=bool(masks) and not shifts,
                                    emitted=bool(emits) and not shifts and not masks and not one_hot
                                    and len(emits) == len(copies),
                                    one_hot=bool(one_hot) and not shifts and not masks))
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
        taken = _snapshot_of(value, inst.name, by_name, insts)
        if taken is None or not any(taken in lineage for j, (_, lineage) in carried.items() if j != k):
            continue
        found.append(LoopBufferCopy(loop.name, str(inst.shape.without_layout()), 1, inst.shape.byte_size(), times,
                                    k, (value.name,), where.frame(value) or where.frame(loop), snapshot=True))
    return found


SNAPSHOT_OPCODES = ("select",)
"""Roots of a value that replaces a carried buffer whole by another buffer of the loop on one scalar decision
(``best = jnp.where(score > best_score, buf, best)``: a snapshot of the buffer at the best step so far): every
iteration reads and writes the whole snapshot to keep it or replace it, where carrying the best step's index (a
scalar) and building the snapshot once after the loop writes nothing per iteration. A mask per element or row (an
RNN's ``where(mask, h_new, h)``) or a branch computed in the iteration (a state frozen once done) is the work
itself, no finding: the other branch must be another carried buffer (or its in-place update)."""


def _snapshot_of(value: Instruction, buffer: str, by_name: dict[str, Computation],
                 insts: dict[str, Instruction]) -> str | None:
    """The body value ``value`` (unfused, or a fusion's root) selects between ``buffer`` and one other whole value
    under a broadcast scalar predicate: that other value's name, else None."""
    fused = _fused_root(value, by_name)
    node, f_insts = fused if fused is not None else (value, insts)
    if node.opcode not in SNAPSHOT_OPCODES or len(node.operands) != 3:
        return None

    def outer(name: str) -> str | None:  # a fused operand's name in the body
        n = f_insts.get(name)
        if n is None:
            return None
        n = _through_bitcasts(n, f_insts)
        if fused is None:
            return n.name
        if n.opcode == "parameter" and n.parameter_number is not None and n.parameter_number < len(value.operands):
            return value.operands[n.parameter_number]
        return None

    pred = f_insts.get(node.operands[0])
    if pred is None or pred.opcode != "broadcast" or not pred.operands or pred.operands[0] not in f_insts \
            or f_insts[pred.operands[0]].shape.num_elements() != 1:
        return None
    sides = [outer(node.operands[1]), outer(node.operands[2])]
    if buffer not in sides:
        return None
    other = sides[1] if sides[0] == buffer else sides[0]
    return other if other is not None and other != buffer else None


def _writes_whole_into(inst: Instruction, value: str, whole: int, by_name: dict[str, Computation]) -> bool:
    """``inst`` writes all of ``value`` (the carried buffer, ``whole`` elements) as the update of a
    ``dynamic-update-slice`` into a larger array: a scan stacking the whole buffer as its per-iteration output
    (``return carry, buf``), one whole copy of the buffer into row t of the stacked ys every iteration. Unfused, or
    a fusion whose root (past bitcasts) is that update with ``value`` as an operand."""
    if inst.shape.is_tuple or inst.shape.num_elements() <= whole:
        return False
    if inst.opcode == "dynamic-update-slice":
        return len(inst.operands) > 1 and inst.operands[1] == value and inst.operands[0] != value
    fused = _fused_root(inst, by_name)
    if fused is None:
        return False
    node, f_insts = fused
    if node.opcode != "dynamic-update-slice" or len(node.operands) < 2 or node.operands[1] not in f_insts:
        return False
    update = _through_bitcasts(f_insts[node.operands[1]], f_insts)
    if update.opcode != "parameter" or update.parameter_number is None or update.shape.num_elements() != whole:
        return False
    return update.parameter_number < len(inst.operands) and inst.operands[update.parameter_number] == value


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
            elif (_updates_in_place(user, value.name, by_name) or _shifts_buffer(user, value.name, by_name)
                  or _masks_buffer(user, value.name, by_name, body_insts)
                  or _one_hot_writes(user, value.name, by_name, body_insts)):
                updates.append(user)
            elif user.opcode == "fusion" and _fused_copy(user, by_name):
                pass
            else:
                continue
            lineage[user.name] = user
            todo.append(user)
    return lineage, updates


def _fused_root(inst: Instruction, by_name: dict[str, Computation]) -> tuple[Instruction, dict] | None:
    """A fusion's root (past bitcasts) and its computation's instructions by name; None for any other op."""
    if inst.opcode != "fusion":
        return None
    fused = by_name.get((inst.attr("calls") or "").lstrip("%"))
    if fused is None:
        return None
    f_insts = fused.by_name()
    return _through_bitcasts(fused.root, f_insts), f_insts


def _updates_in_place(inst: Instruction, buffer: str, by_name: dict[str, Computation]) -> bool:
    """``dynamic-update-slice(buffer, ...)``, or a fusion whose root is one writing into the fusion operand
    ``buffer``."""
    if inst.opcode == "dynamic-update-slice":
        return bool(inst.operands) and inst.operands[0] == buffer
    fused = _fused_root(inst, by_name)
    if fused is None:
        return False
    node, f_insts = fused
    if node.opcode != "dynamic-update-slice" or not node.operands:
        return False
    target = _through_bitcasts(f_insts.get(node.operands[0], node), f_insts)
    if target.opcode != "parameter" or target.parameter_number is None:
        return False
    return target.parameter_number < len(inst.operands) and inst.operands[target.parameter_number] == buffer


SHIFT_OPCODES = ("concatenate",)
"""Roots of a value that rewrites the carried buffer whole from a slice of itself: ``jnp.concatenate([buf[1:],
new[None]])`` (a rolling window, a shift register), ``jnp.roll`` (two slices joined). Each iteration moves every
row to append one: a whole copy in all but name, where a ring buffer would write one row in place."""


def _shifts_buffer(inst: Instruction, buffer: str, by_name: dict[str, Computation]) -> bool:
    """A fusion rooted at a :data:`SHIFT_OPCODES` op joining a slice of its operand ``buffer`` with other values
    (the unfused form is followed from the slice, in :func:`_lineage`)."""
    fused = _fused_root(inst, by_name)
    if fused is None:
        return False
    node, f_insts = fused
    if node.opcode not in SHIFT_OPCODES:
        return False
    return _joins_slice_of(node, f_insts, lambda n: (
        n.opcode == "parameter" and n.parameter_number is not None and n.parameter_number < len(inst.operands)
        and inst.operands[n.parameter_number] == buffer))


def _joins_slice_of(concat: Instruction, insts: dict[str, Instruction], is_buffer) -> bool:
    """One operand of ``concat`` is a ``slice`` of the buffer (``is_buffer`` tells it, through bitcasts)."""
    for name in concat.operands:
        node = insts.get(name)
        if node is None:
            continue
        node = _through_bitcasts(node, insts)
        if node.opcode == "slice" and node.operands and node.operands[0] in insts \
                and is_buffer(_through_bitcasts(insts[node.operands[0]], insts)):
            return True
    return False


def _shifts(inst: Instruction, by_name: dict[str, Computation]) -> bool:
    """Whether an update found in a lineage is a shift (rewrites the buffer whole) rather than an in-place write."""
    if inst.opcode in SHIFT_OPCODES:
        return True
    fused = by_name.get((inst.attr("calls") or "").lstrip("%")) if inst.opcode == "fusion" else None
    return fused is not None and _through_bitcasts(fused.root, fused.by_name()).opcode in SHIFT_OPCODES


MASKED_WRITE_OPCODES = ("select",)
"""Roots of a value that rewrites the carried buffer whole through a mask to write one position:
``jnp.where(rows == t, row, buf)`` (pytorch/xla#4248's idiom, used in JAX to avoid an indexed write). It is one when
one branch is the buffer, the other a broadcast of fewer elements (the row written everywhere), and the mask an
equality against a position that is no constant (``iota == t``, the loop counter): every iteration reads and writes
the whole buffer where ``buf.at[t].set(row)`` writes one row in place. A mask from data (``done == eos``) or a
branch computed whole (an RNN's ``where(mask, h_new, h)``) is the work itself, no finding."""


def _masks_buffer(inst: Instruction, buffer: str, by_name: dict[str, Computation],
                  body_insts: dict[str, Instruction] | None = None) -> bool:
    """``inst`` writes through a position mask into ``buffer`` (:data:`MASKED_WRITE_OPCODES`), unfused or as a
    fusion's root reading ``buffer`` as an operand."""
    return _writes_into(inst, buffer, by_name, body_insts, MASKED_WRITE_OPCODES, _position_write)


def _masked_root(inst: Instruction, by_name: dict[str, Computation]) -> Instruction | None:
    """The select of a masked write found in a lineage (the op itself, or its fusion's root)."""
    return _root_of(inst, by_name, MASKED_WRITE_OPCODES)


def _writes_into(inst: Instruction, buffer: str, by_name: dict[str, Computation],
                 body_insts: dict[str, Instruction] | None, opcodes, writes) -> bool:
    """``writes(node, insts, is_buffer)`` holds for ``inst`` (one of ``opcodes``) reading ``buffer``, or for the
    root of the fusion ``inst`` calls, whose parameter is ``buffer``: the loop body writes the buffer the same way
    whether XLA fused the write or not."""
    if inst.opcode in opcodes:
        return writes(inst, body_insts or {}, lambda name: name == buffer)
    fused = _fused_root(inst, by_name)
    if fused is None:
        return False
    node, f_insts = fused
    return node.opcode in opcodes and writes(node, f_insts, lambda name: (
        (p := _through_bitcasts(f_insts[name], f_insts) if name in f_insts else None) is not None
        and p.opcode == "parameter" and p.parameter_number is not None
        and p.parameter_number < len(inst.operands) and inst.operands[p.parameter_number] == buffer))


def _root_of(inst: Instruction, by_name: dict[str, Computation], opcodes) -> Instruction | None:
    """``inst`` when it is one of ``opcodes``, else its fusion's root when that is."""
    if inst.opcode in opcodes:
        return inst
    fused = _fused_root(inst, by_name)
    return fused[0] if fused is not None and fused[0].opcode in opcodes else None


def _position_write(select: Instruction, insts: dict[str, Instruction], is_buffer) -> bool:
    if len(select.operands) != 3:
        return False
    pred, on_true, on_false = select.operands
    if is_buffer(on_false):
        written = on_true
    elif is_buffer(on_true):
        written = on_false
    else:
        return False
    node = insts.get(written)
    if node is None or node.opcode != "broadcast" or not node.operands or node.operands[0] not in insts:
        return False
    if insts[node.operands[0]].shape.num_elements() >= select.shape.num_elements():
        return False
    return _position_mask(insts.get(pred), insts)


ONE_HOT_WRITE_OPCODES = ("add",)
"""Roots of a value that rewrites the carried buffer whole by adding a one-hot product to write one position:
``buf + one_hot(t, T)[:, None] * row`` (Flax's early decode cache, "faster than dynamic_update_slice on TPU";
crossings round 6, ``x6c_onehot_cache_write``). It is one when one operand of the add is the buffer and the other
a ``multiply`` one of whose factors is a position mask (an integer equality against a broadcast scalar that is no
constant, ``iota == t``, converted to floats): every iteration reads and writes the whole buffer where
``buf.at[t].set(row)`` writes one row in place. An outer product of two computed vectors added to a decayed
memory (linear attention's fast weights, ``M = 0.95 * M + outer(v, k)``) changes every element: no finding."""


def _one_hot_writes(inst: Instruction, buffer: str, by_name: dict[str, Computation],
                    body_insts: dict[str, Instruction] | None = None) -> bool:
    """``inst`` adds a one-hot product into ``buffer`` (:data:`ONE_HOT_WRITE_OPCODES`), unfused or as a fusion's
    root reading ``buffer`` as an operand."""
    return _writes_into(inst, buffer, by_name, body_insts, ONE_HOT_WRITE_OPCODES, _one_hot_add)


def _one_hot_root(inst: Instruction, by_name: dict[str, Computation]) -> Instruction | None:
    """The add of a one-hot write found in a lineage (the op itself, or its fusion's root)."""
    return _root_of(inst, by_name, ONE_HOT_WRITE_OPCODES)


def _one_hot_add(add: Instruction, insts: dict[str, Instruction], is_buffer) -> bool:
    if len(add.operands) != 2:
        return False
    first, second = add.operands
    if is_buffer(first):
        other = second
    elif is_buffer(second):
        other = first
    else:
        return False
    node = insts.get(other)
    node = _through_bitcasts(node, insts) if node is not None else None
    if node is None or node.opcode != "multiply":
        return False
    return any(_position_mask(insts.get(factor), insts) for factor in node.operands)


_MASK_VIEWS = ("bitcast", "broadcast", "reshape", "convert")


def _position_mask(node: Instruction | None, insts: dict[str, Instruction]) -> bool:
    """An equality of integers against a broadcast scalar that is no constant (``rows == t``), through views."""
    while node is not None and node.opcode in _MASK_VIEWS and node.operands:
        node = insts.get(node.operands[0])
    if node is None or node.opcode != "compare" or node.attr("direction") != "EQ":
        return False
    sides = [insts.get(n) for n in node.operands]
    if any(s is None or not s.shape.element_type.startswith(("s", "u")) for s in sides):
        return False
    for side in sides:
        if side.opcode == "broadcast" and side.operands and side.operands[0] in insts:
            scalar = _through_bitcasts(insts[side.operands[0]], insts)
            if scalar.shape.num_elements() == 1 and scalar.opcode != "constant":
                return True
    return False


def _through_bitcasts(node: Instruction, insts: dict[str, Instruction]) -> Instruction:
    while node.opcode == "bitcast" and node.operands and node.operands[0] in insts:
        node = insts[node.operands[0]]
    return node


def _fused_copy(inst: Instruction, by_name: dict[str, Computation]) -> bool:
    """A fusion that only moves its one operand (copy / transpose / bitcast): a copy in disguise."""
    fused = by_name.get((inst.attr("calls") or "").lstrip("%"))
    if fused is None or len(inst.operands) != 1:
        return False
    ops = {i.opcode for i in fused.instructions}
    return ops <= {"parameter", "bitcast", "copy", "transpose", "reshape"} and bool(ops & {"copy", "transpose"})


def _is_whole_copy(inst: Instruction, whole: int, by_name: dict[str, Computation]) -> bool:
    if inst.shape.num_elements() != whole:
        return False
    if inst.opcode in COPY_OPCODES or inst.opcode == "transpose":
        return True
    return inst.opcode == "fusion" and _fused_copy(inst, by_name)
