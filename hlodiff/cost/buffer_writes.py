"""How a loop body writes its carried buffer: the shapes of ops that rewrite it whole where one row changes (a
shift, a masked or one-hot write, a snapshot kept on a decision, a stacked output) or write it in place, each
recognized unfused or as a fusion's root. :mod:`hlodiff.cost.copies` follows a buffer's lineage through them.
"""

from __future__ import annotations

from hlodiff.hlo.model import Computation, Instruction


SNAPSHOT_OPCODES = ("select",)
"""Roots of a value that replaces a carried buffer whole by another buffer of the loop on one scalar decision
(``best = jnp.where(score > best_score, buf, best)``: a snapshot of the buffer at the best step so far): every
iteration reads and writes the whole snapshot to keep it or replace it, where carrying the best step's index (a
scalar) and building the snapshot once after the loop writes nothing per iteration. A mask per element or row (an
RNN's ``where(mask, h_new, h)``) or a branch computed in the iteration (a state frozen once done) is the work
itself, no finding: the other branch must be another carried buffer (or its in-place update)."""


def snapshot_of(value: Instruction, buffer: str, by_name: dict[str, Computation],
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
        return n.name if fused is None else _outer_operand(value, n)

    pred = f_insts.get(node.operands[0])
    if pred is None or pred.opcode != "broadcast" or not pred.operands or pred.operands[0] not in f_insts \
            or f_insts[pred.operands[0]].shape.num_elements() != 1:
        return None
    other = _other_side(outer(node.operands[1]), outer(node.operands[2]), lambda side: side == buffer)
    return other if other is not None and other != buffer else None


def writes_whole_into(inst: Instruction, value: str, whole: int, by_name: dict[str, Computation]) -> bool:
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
    return update.shape.num_elements() == whole and _outer_operand(inst, update) == value


def _fused_root(inst: Instruction, by_name: dict[str, Computation]) -> tuple[Instruction, dict] | None:
    """A fusion's root (past bitcasts) and its computation's instructions by name; None for any other op."""
    if inst.opcode != "fusion":
        return None
    fused = by_name.get((inst.attr("calls") or "").lstrip("%"))
    if fused is None:
        return None
    f_insts = fused.by_name()
    return _through_bitcasts(fused.root, f_insts), f_insts


def updates_in_place(inst: Instruction, buffer: str, by_name: dict[str, Computation]) -> bool:
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
    return _outer_operand(inst, target) == buffer


SHIFT_OPCODES = ("concatenate",)
"""Roots of a value that rewrites the carried buffer whole from a slice of itself: ``jnp.concatenate([buf[1:],
new[None]])`` (a rolling window, a shift register), ``jnp.roll`` (two slices joined). Each iteration moves every
row to append one: a whole copy in all but name, where a ring buffer would write one row in place."""


def shifts_buffer(inst: Instruction, buffer: str, by_name: dict[str, Computation]) -> bool:
    """A fusion rooted at a :data:`SHIFT_OPCODES` op joining a slice of its operand ``buffer`` with other values
    (the unfused form is followed from the slice, in :mod:`hlodiff.cost.copies`)."""
    fused = _fused_root(inst, by_name)
    if fused is None:
        return False
    node, f_insts = fused
    if node.opcode not in SHIFT_OPCODES:
        return False
    return _joins_slice_of(node, f_insts, lambda n: _outer_operand(inst, n) == buffer)


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


def is_shift(inst: Instruction, by_name: dict[str, Computation]) -> bool:
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


def masks_buffer(inst: Instruction, buffer: str, by_name: dict[str, Computation],
                  body_insts: dict[str, Instruction] | None = None) -> bool:
    """``inst`` writes through a position mask into ``buffer`` (:data:`MASKED_WRITE_OPCODES`), unfused or as a
    fusion's root reading ``buffer`` as an operand."""
    return _writes_into(inst, buffer, by_name, body_insts, MASKED_WRITE_OPCODES, _position_write)


def masked_root(inst: Instruction, by_name: dict[str, Computation]) -> Instruction | None:
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
        name in f_insts and _outer_operand(inst, _through_bitcasts(f_insts[name], f_insts)) == buffer))


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
    written = _other_side(on_false, on_true, is_buffer)
    if written is None:
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


def one_hot_writes(inst: Instruction, buffer: str, by_name: dict[str, Computation],
                    body_insts: dict[str, Instruction] | None = None) -> bool:
    """``inst`` adds a one-hot product into ``buffer`` (:data:`ONE_HOT_WRITE_OPCODES`), unfused or as a fusion's
    root reading ``buffer`` as an operand."""
    return _writes_into(inst, buffer, by_name, body_insts, ONE_HOT_WRITE_OPCODES, _one_hot_add)


def one_hot_root(inst: Instruction, by_name: dict[str, Computation]) -> Instruction | None:
    """The add of a one-hot write found in a lineage (the op itself, or its fusion's root)."""
    return _root_of(inst, by_name, ONE_HOT_WRITE_OPCODES)


def _one_hot_add(add: Instruction, insts: dict[str, Instruction], is_buffer) -> bool:
    if len(add.operands) != 2:
        return False
    other = _other_side(*add.operands, is_buffer)
    if other is None:
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


def _outer_operand(fusion: Instruction, node: Instruction) -> str | None:
    """The operand of ``fusion`` (its name in the loop body) that ``node``, a parameter of the fused computation,
    stands for; None for any other node: a fused write is told by which body value it writes."""
    if node.opcode != "parameter" or node.parameter_number is None or node.parameter_number >= len(fusion.operands):
        return None
    return fusion.operands[node.parameter_number]


def _other_side(first: str | None, second: str | None, is_buffer) -> str | None:
    """Of two operands one of which ``is_buffer``, the other (the value written into the buffer); None when
    neither is."""
    if is_buffer(first):
        return second
    if is_buffer(second):
        return first
    return None


def _through_bitcasts(node: Instruction, insts: dict[str, Instruction]) -> Instruction:
    while node.opcode == "bitcast" and node.operands and node.operands[0] in insts:
        node = insts[node.operands[0]]
    return node


def fused_copy(inst: Instruction, by_name: dict[str, Computation]) -> bool:
    """A fusion that only moves its one operand (copy / transpose / bitcast): a copy in disguise."""
    fused = by_name.get((inst.attr("calls") or "").lstrip("%"))
    if fused is None or len(inst.operands) != 1:
        return False
    ops = {i.opcode for i in fused.instructions}
    return ops <= {"parameter", "bitcast", "copy", "transpose", "reshape"} and bool(ops & {"copy", "transpose"})
