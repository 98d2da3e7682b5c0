"""A loop body that reads its carried buffer's old value beside writing it in place (paxml#17's other cause).

``kc = cache.at[t].set(k)`` updates ``cache`` in place only if nothing reads the old ``cache`` after the write. An op
that reads the old buffer and is not an operand (directly or through others) of the in-place write, such as an
attention over ``cache`` where ``kc`` was meant, has no order against the write: XLA keeps both versions, and the
copy it inserts for that is the whole buffer, every iteration. A read that the write needs (a row computed from the
whole buffer, then written: x4c_fori_read_then_write_control) comes before it and costs nothing. The fix is the
user's: read the updated buffer, or make what reads the old one feed the write.

Autodiff's own loops are left out: the backward of a buffer written in place reads the cotangent's slice and
writes zeros over it (``transpose(jvp())`` in JAX's op_name), a stale read no line of the user's makes; there the
buffer should not be carried at all (jax_layer_stack_carry: scan outputs).

The same two versions are kept when the body hands the old value on whole in a second slot of the carry (``prev =
buf`` returned beside ``buf.at[i].set(row)``, to log what the iteration changed): no op reads it, the loop's own
tuple keeps it (:func:`kept_in_carry`). The fix is then to carry only what the later use needs of it.

Only asked where a whole copy of the buffer was already found in the iteration (:mod:`hlodiff.cost.copies`): this
names why it is there, it never makes a finding of its own.
"""

from __future__ import annotations

from hlodiff.cost.replaced_inputs import GRADIENT_OP_MARKERS, op_name
from hlodiff.hlo.model import Instruction

_PASS_THROUGH = ("get-tuple-element", "tuple")
"""Users that hand the buffer on rather than read it (the carry's own tuple, a tuple element)."""


def reads_old_value(updates: list[Instruction], lineage: dict[str, Instruction], users: dict[str, list[Instruction]],
                    body_insts: dict[str, Instruction]) -> bool:
    """Whether a value of the buffer's lineage that an in-place ``updates`` entry writes from is also read by an op
    outside the lineage that the write does not depend on."""
    for update in updates:
        if _autodiff(update):
            continue
        before = _ancestors(update, body_insts)
        for name in before & lineage.keys():
            for user in users.get(name, []):
                if user.name in lineage or user.name in before or user.name == update.name \
                        or user.opcode in _PASS_THROUGH or _autodiff(user):
                    continue
                return True
    return False


def kept_in_carry(updates: list[Instruction], lineage: dict[str, Instruction], root: Instruction, slot: int,
                  body_insts: dict[str, Instruction]) -> bool:
    """Whether a value of the buffer's lineage that an in-place ``updates`` entry writes from is also handed on whole
    as another element of the loop's carry (``root`` is the body's tuple, ``slot`` the buffer's own element)."""
    others = {name for j, name in enumerate(root.operands) if j != slot}
    return any(not _autodiff(u) and others & (_ancestors(u, body_insts) & lineage.keys()) for u in updates)


def _ancestors(inst: Instruction, insts: dict[str, Instruction]) -> set[str]:
    """The names of every value ``inst`` is computed from in its computation."""
    seen: set[str] = set()
    todo = list(inst.operands)
    while todo:
        name = todo.pop()
        if name in seen or name not in insts:
            continue
        seen.add(name)
        todo.extend(insts[name].operands)
    return seen


def _autodiff(inst: Instruction) -> bool:
    """Written by reverse-mode autodiff, not by a line of the user's (JAX's op_name)."""
    return any(m in op_name(inst) for m in GRADIENT_OP_MARKERS)
