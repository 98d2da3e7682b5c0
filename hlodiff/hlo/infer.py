"""Result shapes for instructions written without one (``ROOT sum = add(a, b)``), the way XLA's parser infers them.

XLA's text format lets a shape be left out when it follows from the operands; hand-written modules, XLA's own tests
and nested anonymous instructions rely on it. hlodiff infers the opcodes whose shape is a plain function of operand
shapes (and of the callee's root for ``call``/``conditional``); anything else is reported at the instruction, since a
guessed shape would be worse than none. Layouts are not invented: inferred array shapes carry none.
"""

from __future__ import annotations

from typing import Callable

from hlodiff.errors import HloParseError
from hlodiff.hlo.model import Computation, Instruction, Module, Shape

_UNARY = frozenset((
    "abs", "cbrt", "ceil", "clz", "copy", "cosine", "erf", "exponential", "exponential-minus-one",
    "floor", "log", "log-plus-one", "logistic", "not", "negate", "popcnt", "round-nearest-afz",
    "round-nearest-even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh", "opt-barrier", "reduce-precision",
    "reverse", "while", "all-reduce", "all-reduce-done", "cholesky", "triangular-solve", "bitcast",
    "add-dependency", "stochastic-convert",
))
_BINARY = frozenset((
    "add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "subtract", "and", "or", "xor",
))
_REAL_OF_COMPLEX = {"c64": "f32", "c128": "f64"}
_COMPLEX_OF_REAL = {"f32": "c64", "f64": "c128"}


class _Cannot(Exception):
    """The shape does not follow from what is known: reported at the instruction."""


def infer_shapes(module: Module, path: str) -> None:
    """Give every shape-less instruction of ``module`` its inferred shape, or raise ``file:line:col``."""
    comps = {c.name: c for c in module.computations}
    by_comp = {c.name: c.by_name() for c in module.computations}
    busy: set[int] = set()

    def shape_of(comp: Computation, inst: Instruction) -> Shape:
        """Operands first, with an explicit stack: a chain of shape-less instructions may be long."""
        operands = by_comp[comp.name]
        stack = [inst]
        while stack:
            cur = stack[-1]
            if cur.shape is not None:
                stack.pop()
                continue
            try:
                waiting = [operands[name] for name in cur.operands if operands[name].shape is None]
            except KeyError:
                raise _error(cur, path, "an operand that is not defined") from None
            if waiting:
                if id(cur) in busy:
                    raise _error(cur, path, "its shape depends on itself")
                busy.add(id(cur))
                stack.extend(waiting)
                continue
            try:
                cur.shape = _infer(cur, [operands[name].shape for name in cur.operands], root_shape)
            except _Cannot as e:
                raise _error(cur, path, str(e)) from None
            except (KeyError, IndexError, ValueError):
                raise _error(cur, path, "an operand or callee of the wrong kind") from None
            stack.pop()
        return inst.shape

    def root_shape(name: str) -> Shape:
        comp = comps[name]
        return shape_of(comp, comp.root)

    for comp in module.computations:
        for inst in comp.instructions:
            if inst.shape is None:
                shape_of(comp, inst)


def _error(inst: Instruction, path: str, why: str) -> HloParseError:
    return HloParseError(f"cannot infer the shape of {inst.opcode!r} {inst.name!r} ({why}); write it before the "
                         f"opcode", path=path, line=inst.line, col=inst.col)


def _infer(inst: Instruction, ops: list[Shape], callee_root: Callable[[str], Shape]) -> Shape:
    op = inst.opcode
    if op in _UNARY or op in _BINARY:
        _need(ops, 1 if op in _UNARY else 2)
        return ops[0]  # XLA's unary/binary inference: the operand's shape (add-dependency: its first operand's)
    if op in ("real", "imag", "is-finite"):
        _need(ops, 1)
        kind = "pred" if op == "is-finite" else _REAL_OF_COMPLEX.get(ops[0].element_type, ops[0].element_type)
        return _retype(ops[0], kind)
    if op == "compare":
        _need(ops, 2)
        return _retype(ops[0], "pred")
    if op == "complex":
        _need(ops, 2)
        return _retype(ops[0], _COMPLEX_OF_REAL.get(ops[0].element_type, ops[0].element_type))
    if op in ("select", "clamp"):
        _need(ops, 3)
        return ops[1]
    if op == "tuple":
        return Shape("tuple", tuple_shapes=tuple(ops))
    if op == "sort":
        _need(ops, 1)
        return ops[0] if len(ops) == 1 else Shape("tuple", tuple_shapes=tuple(ops))
    if op in ("replica-id", "partition-id"):
        return Shape("u32")
    if op == "topk":
        _need(ops, 1)
        k = int(inst.attrs["k"])
        dims, dynamic = ops[0].dims[:-1] + (k,), ops[0].dynamic[:-1] + (False,)
        return Shape("tuple", tuple_shapes=(Shape(ops[0].element_type, dims, dynamic), Shape("s32", dims, dynamic)))
    if op == "get-tuple-element":
        _need(ops, 1)
        return ops[0].tuple_shapes[int(inst.attrs["index"])]
    if op == "after-all":
        return Shape("token")
    if op == "send-done":
        return Shape("token")
    if op == "recv-done":
        _need(ops, 1)
        return Shape("tuple", tuple_shapes=(ops[0].tuple_shapes[0], ops[0].tuple_shapes[-1]))
    if op in ("copy-done", "async-done") or op.endswith("-done"):
        _need(ops, 1)
        return ops[0].tuple_shapes[1] if op != "copy-done" else ops[0].tuple_shapes[0]
    if op == "call":
        return callee_root(_callee(inst.attrs.get("to_apply")))
    if op == "conditional":
        branch = inst.attrs.get("true_computation") or inst.attrs.get("branch_computations")
        return callee_root(_callee(branch))
    if op == "dot":
        _need(ops, 2)
        return _dot(inst.attrs, ops[0], ops[1])
    raise _Cannot("XLA infers it; hlodiff does not")


def _need(ops: list[Shape], n: int) -> None:
    if len(ops) < n:
        raise _Cannot(f"expects {n} operand(s), has {len(ops)}")


def _retype(shape: Shape, element_type: str) -> Shape:
    if shape.tuple_shapes:
        raise _Cannot("a tuple operand")
    return Shape(element_type, shape.dims, shape.dynamic)


def _callee(value: str | None) -> str:
    if not value:
        raise _Cannot("no computation to call")
    return value.strip("{} ").split(",")[0].strip().lstrip("%")


def _dims(attrs: dict[str, str], key: str) -> list[int]:
    value = attrs.get(key, "{}").strip("{} ")
    return [int(x) for x in value.split(",") if x.strip()]


def _dot(attrs: dict[str, str], lhs: Shape, rhs: Shape) -> Shape:
    """Batch dimensions, then the free dimensions of lhs, then those of rhs (XLA's dot result order)."""
    lb, lc = _dims(attrs, "lhs_batch_dims"), _dims(attrs, "lhs_contracting_dims")
    rb, rc = _dims(attrs, "rhs_batch_dims"), _dims(attrs, "rhs_contracting_dims")
    keep_l = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    keep_r = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    picks = [(lhs, d) for d in lb] + [(lhs, d) for d in keep_l] + [(rhs, d) for d in keep_r]
    return Shape(lhs.element_type, tuple(s.dims[d] for s, d in picks), tuple(s.dynamic[d] for s, d in picks))
