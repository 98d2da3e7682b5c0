"""Two scalar constants of different types that the matcher paired by position but that feed unrelated ops.

A loss swapped for another from step 3 (`(out ** 2).mean()` before, `F.cross_entropy(out, y)` after) leaves one
scalar constant on each side, the mean's f32 divisor and nll_loss's s32 ``ignore_index``; the matcher pairs them as
one constant whose element type changed, and the report told it as a dtype change with the fix "drop `dtype=`"
(the thirteenth stop's note: `hlodiff record` blamed cross_entropy's long targets). No value changed its type:
one number went and another came, with the ops that use them. Such a pair is told as a constant removed and a
constant added (ops). A constant retyped where it is used alike (2*pi inside ``torch.randn`` in f64 instead of
f32, read by the same multiply) stays a dtype change.
"""

from __future__ import annotations

from hlodiff.diff.mapping import Matching


def unrelated_constants(m: Matching, lname: str, rname: str, kinds: tuple[str, ...]) -> bool:
    """``lname`` and ``rname`` are single numbers (scalar constants, or broadcasts of one) whose element type
    differs and whose users, on the two sides, share no opcode."""
    if "element_type" not in kinds:
        return False
    if not _splat(m.left, lname) or not _splat(m.right, rname):
        return False
    left, right = _user_opcodes(m.left, lname), _user_opcodes(m.right, rname)
    return bool(left) and bool(right) and not (left & right)


def _splat(cc, name: str, depth: int = 4) -> bool:
    """``name`` is one number: a scalar constant, or one carried to a shape by :data:`_PLUMBING` (a broadcast)."""
    inst = cc.insts.get(name)
    if inst is None or inst.shape.is_tuple:
        return False
    if inst.opcode == "constant":
        return not inst.shape.dims
    operands = cc.operands.get(name, ())
    return inst.opcode in _PLUMBING and depth > 0 and len(operands) == 1 and _splat(cc, operands[0], depth - 1)


_PLUMBING = frozenset({"broadcast", "reshape", "convert", "bitcast", "bitcast-convert", "copy", "transpose"})
"""Ops that carry a constant to its use without computing with it: looked through."""


def _user_opcodes(cc, name: str, depth: int = 4) -> set[str]:
    """The opcodes that compute with ``name``: its users, looking through :data:`_PLUMBING` up to ``depth``."""
    found: set[str] = set()
    for u in cc.users(name):
        inst = cc.insts.get(u)
        if inst is None:
            continue
        if inst.opcode in _PLUMBING and depth > 0:
            found |= _user_opcodes(cc, u, depth - 1)
        else:
            found.add(inst.opcode)
    return found
