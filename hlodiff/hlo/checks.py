"""The rules XLA's parser enforces beyond the grammar, for faults that sit in the text itself.

A constant whose literal does not fit its shape or type, a custom-call naming an API version that does not exist,
a control predecessor that names nothing, a convolution whose ``dim_labels`` repeat a dimension: XLA refuses to read
such a module, so hlodiff refuses too, at the instruction, with XLA's words where they help. Each rule looks only
at the instructions of its opcode or attribute, so a module pays for the rules it uses.

Rules XLA's *verifier* applies (operand shapes of every opcode, layouts against shapes, sharding against device
counts) are left to XLA: see docs/limits.md, "Which HLO text hlodiff reads, and what it leaves to XLA".
"""

from __future__ import annotations

import math
import re
from typing import Callable

from hlodiff.accel import native
from hlodiff.errors import HloParseError
from hlodiff.hlo.literal import number, parse_literal
from hlodiff.hlo.model import Computation, Instruction, Module, Shape
from hlodiff.hlo.opcodes import OPCODES

_API_VERSIONS = frozenset(("API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                           "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"))
UNSPECIFIED_API_VERSION_WRITERS: dict[str, str] = {
    "AwsNeuron": "AWS Neuron's XLA prints api_version=API_VERSION_UNSPECIFIED on every custom-call it writes",
}
"""Custom-call target prefixes whose dumps carry ``API_VERSION_UNSPECIFIED``. XLA's parser rejects that version
("Invalid API version"), and so does hlodiff, except on these targets: their real dumps (PyTorch/XLA on AWS
Neuron) were written by an XLA that printed it, and refusing them would refuse the whole dump."""
_ACCURACY_OPS = frozenset(("exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "rsqrt",
                           "sqrt", "cbrt", "tanh", "tan", "sine", "cosine", "erf"))
_ACCURACY = re.compile(r"\{\s*(?:mode\s*=\s*(?:highest|default)|tolerance\s*=\s*\{\s*"
                       r"(?:(?:atol|rtol)\s*=\s*[-+0-9.eE]+|ulps\s*=\s*\d+)"
                       r"(?:\s*,\s*(?:(?:atol|rtol)\s*=\s*[-+0-9.eE]+|ulps\s*=\s*\d+))*\s*\})\s*\}", re.I)
_PADDING = re.compile(r"-?\d+_-?\d+(?:_-?\d+)?(?:x-?\d+_-?\d+(?:_-?\d+)?)*")
_WINDOW_PAD = re.compile(r"\bpad=(\S+)")
_WINDOW_PAD_VALUE = re.compile(r"-?\d+_-?\d+(?:x-?\d+_-?\d+)*")
_PLAIN_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_NAN_PAYLOAD = re.compile(r"nan\(0x([0-9a-fA-F]+)\)")
_CTRL_NAME = re.compile(r"%?([A-Za-z0-9_.\-]+)")

# Largest finite value and mantissa bits of the float types whose range XLA's parser checks.
_FLOAT_MAX = {"f16": (65504.0, 10), "bf16": (3.3895313892515355e38, 7), "f32": (3.4028234663852886e38, 23),
              "f64": (1.7976931348623157e308, 52)}
_PAYLOAD_BITS = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52, "c64": 23, "c128": 52, "f8e5m2": 2, "f8e4m3": 3,
                 "f8e3m4": 4}
_COMPLEX_PART = {"c64": "f32", "c128": "f64"}


class _Context:
    """Per-computation lookups, built only when a rule needs an operand's shape."""

    def __init__(self, comp: Computation, path: str):
        self.comp, self.path = comp, path
        self._by_name: dict[str, Instruction] | None = None
        self.seen: dict[tuple[str, str], bool] = {}

    def operand(self, inst: Instruction, i: int) -> Shape | None:
        if self._by_name is None:
            self._by_name = self.comp.by_name()
        op = self._by_name.get(inst.operands[i]) if i < len(inst.operands) else None
        return op.shape if op is not None else None

    def names(self) -> dict[str, Instruction]:
        if self._by_name is None:
            self._by_name = self.comp.by_name()
        return self._by_name

    def fail(self, inst: Instruction, message: str) -> HloParseError:
        return HloParseError(message, path=self.path, line=inst.line, col=inst.col)


def check_module(module: Module, path: str) -> set[str]:
    """Raise at the first instruction that breaks one of XLA's parse-time rules.

    Returns the opcodes that are not plain XLA opcodes (``async-*``, async shorthand, unknown ones), which the
    async pass and the unknown-opcode warning look at; collected here so that no other pass walks every instruction.
    """
    odd: set[str] = set()
    known = OPCODES
    seen: dict[tuple[str, str], bool] = {}  # (literal, element type) already checked: constants repeat a lot
    by_opcode = _BY_OPCODE
    comps = module.computations
    # The accelerator hands over only the instructions a rule looks at (and notes odd opcodes itself), for the whole
    # module in one call: most small called computations have none, and without a signature need no step here.
    todos = native.triage_each(comps, by_opcode, known, odd) if native is not None and isinstance(comps, list) else None
    for k, comp in enumerate(comps):
        if todos is not None and todos[k] is None and comp.signature is None:
            continue
        if comp.implicit:
            continue
        _check_root_shape(comp, path)
        if todos is not None:
            todo = todos[k]
        else:
            todo = comp.instructions if native is None else native.triage(comp.instructions, by_opcode, known, odd)
        if not todo:
            continue
        ctx = _Context(comp, path)
        ctx.seen = seen
        for inst in todo:
            rule = by_opcode.get(inst.opcode)
            if rule is not None:
                rule(inst, ctx)
            elif inst.opcode not in known or inst.opcode[:6] == "async-":
                odd.add(inst.opcode)
            attrs = inst.attrs
            if attrs and ("control-predecessors" in attrs or "result_accuracy" in attrs):
                if "control-predecessors" in attrs:
                    _control_predecessors(inst, ctx)
                if "result_accuracy" in attrs:
                    _result_accuracy(inst, ctx)
    return odd


def _check_root_shape(comp: Computation, path: str) -> None:
    if comp.signature is None or not comp.instructions:
        return
    want, root = comp.signature[1], comp.root
    if not _compatible(want, root.shape):
        raise HloParseError(f"Shape of computation {comp.name}, {want}, is not compatible with that of its root "
                            f"instruction {root.name}, {root.shape}", path=path, line=comp.line, col=1)


def _compatible(a: Shape, b: Shape) -> bool:
    """Same element types and dimensions, layouts aside (XLA's ShapeUtil::Compatible)."""
    if a.tuple_shapes or b.tuple_shapes:
        return (a.element_type == b.element_type and len(a.tuple_shapes) == len(b.tuple_shapes)
                and all(_compatible(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes)))
    return a.element_type == b.element_type and a.dims == b.dims


# -- constants ------------------------------------------------------------------------------------------------

def _constant(inst: Instruction, ctx: _Context) -> None:
    shape, raw = inst.shape, inst.literal
    if raw is None or shape.tuple_shapes or shape.element_type in ("token", "opaque"):
        return
    key = (raw, str(shape) if shape.dims else shape.element_type)
    if key in ctx.seen:
        return
    ctx.seen[key] = True
    value = number(raw) if not shape.dims and _PLAIN_NUMBER.fullmatch(raw) else None
    if value is not None:  # the common scalar, read by the one conversion value analysis uses too (cached)
        _check_range(inst, ctx, shape.element_type, (value,), raw)
        return
    try:
        lit = parse_literal(raw, shape.element_type)
    except HloParseError as e:
        raise ctx.fail(inst, e.message) from None
    if lit.elided or lit.is_tuple:
        return
    if not lit.dims and shape.dims:
        _check_scalar_fill(inst, ctx, shape)
    elif not any(shape.dynamic) and lit.dims != shape.dims and not _empty_prefix(lit.dims, shape.dims):
        raise ctx.fail(inst, f"literal has dimensions {list(lit.dims)} but the shape is {shape}")
    _check_range(inst, ctx, shape.element_type, lit.values, raw)
    if "nan(" in raw:
        _check_nan_payloads(inst, ctx, shape.element_type, raw)


def _check_scalar_fill(inst: Instruction, ctx: _Context, shape: Shape) -> None:
    """XLA fills every element of an array from one scalar (``f32[8,2048] constant(0)``, as hlo_diff's tests
    write zeros), except for complex types and arrays without elements, where it wants the nested form."""
    if shape.element_type in _COMPLEX_PART or 0 in shape.dims:
        raise ctx.fail(inst, f"expects nested array in rank {len(shape.dims)}, but sees 0 (a single value fills "
                             f"an array of {shape.element_type} only when it has elements and is not complex)")


def _empty_prefix(lit_dims: tuple[int, ...], dims: tuple[int, ...]) -> bool:
    """``{}`` or ``{ {}, {} }`` for an array with a zero-sized dimension: XLA prints only the non-empty prefix."""
    return 0 in dims and bool(lit_dims) and lit_dims[-1] == 0 and dims[:len(lit_dims)] == lit_dims


def _check_range(inst: Instruction, ctx: _Context, element_type: str, values: tuple, raw: str) -> None:
    kind, bits = element_type[:1], element_type[1:]
    if kind in "su" and bits.isdigit():
        n = int(bits)
        lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if kind == "s" else (0, (1 << n) - 1)
        if n == 64:
            lo, hi = -(1 << 63), (1 << 64) - 1  # XLA reads 64-bit values as either signedness (u64 -1 is valid)
        for v in values:
            if isinstance(v, int) and not isinstance(v, bool) and not lo <= v <= hi:
                raise ctx.fail(inst, f"value {v} is out of range for literal's primitive type {element_type}")
        return
    part = _COMPLEX_PART.get(element_type)
    limit = _FLOAT_MAX.get(part or element_type)
    if limit is None:
        return
    top, mantissa = limit
    bound = top + math.ldexp(top, -mantissa - 2)  # half a unit in the last place: rounds to infinity from here
    for v in values:
        for name, x in (((("real part", v.real), ("imaginary part", v.imag)) if isinstance(v, complex)
                         else (("value", v),))):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                continue
            overflow = isinstance(x, float) and math.isinf(x) and "inf" not in raw  # 1.8e308 read as inf
            if overflow or ((not isinstance(x, float) or math.isfinite(x)) and abs(x) >= bound):
                shown = f"{x:g}" if isinstance(x, float) else str(x)[:40]
                raise ctx.fail(inst, f"{name} {shown} is out of range for literal's primitive type {element_type}")


def _check_nan_payloads(inst: Instruction, ctx: _Context, element_type: str, raw: str) -> None:
    bits = _PAYLOAD_BITS.get(element_type, 0)
    for payload in _NAN_PAYLOAD.findall(raw):
        value = int(payload, 16)
        if value == 0 or value >= 1 << bits:
            raise ctx.fail(inst, f"tries to set NaN payload 0x{value:x} to a literal in shape {inst.shape}, "
                                 f"which has {bits} mantissa bits")


# -- other opcodes ---------------------------------------------------------------------------------------------

def _custom_call(inst: Instruction, ctx: _Context) -> None:
    version = inst.attrs.get("api_version")
    if version is not None and version not in _API_VERSIONS:
        if version != "API_VERSION_UNSPECIFIED":
            raise ctx.fail(inst, f"expects custom-call API version but sees: {version}")
        target = inst.attrs.get("custom_call_target", "").strip('"')
        if not target.startswith(tuple(UNSPECIFIED_API_VERSION_WRITERS)):
            raise ctx.fail(inst, "Invalid API version: API_VERSION_UNSPECIFIED (XLA refuses it; leave api_version "
                                 "out for the original API)")
    constraints = inst.attrs.get("operand_layout_constraints")
    if constraints is None:
        return
    from hlodiff.hlo.attributes import parse_shape_list
    from hlodiff.hlo.shapes import parse_shape

    try:
        shapes = parse_shape_list(constraints, parse_shape)
    except (HloParseError, ValueError) as e:
        raise ctx.fail(inst, f"bad operand_layout_constraints: {e}") from None
    if len(shapes) != len(inst.operands):
        raise ctx.fail(inst, f"Expected {len(inst.operands)} operand layout constraints, {len(shapes)} given")
    for i, want in enumerate(shapes):
        got = ctx.operand(inst, i)
        if got is not None and not _compatible(want, got):
            raise ctx.fail(inst, f"Operand layout constraint shape {want} for operand {i} is not compatible "
                                 f"with operand shape {got}")


def _conditional(inst: Instruction, ctx: _Context) -> None:
    first = ctx.operand(inst, 0)
    if first is None:
        return
    if first.tuple_shapes or first.dims or first.element_type not in ("pred", "s32"):
        raise ctx.fail(inst, f"The first operand must be a scalar of PRED or S32, but got {first}")
    if first.element_type == "pred" and "branch_computations" in inst.attrs:
        raise ctx.fail(inst, 'unexpected attribute "branch_computations": a pred-selected conditional takes '
                             "true_computation and false_computation")


def _infeed(inst: Instruction, ctx: _Context) -> None:
    if not inst.shape.is_tuple or not inst.shape.tuple_shapes:
        raise ctx.fail(inst, "infeed must have a non-empty tuple shape")


def _dynamic_reshape(inst: Instruction, ctx: _Context) -> None:
    if not inst.operands:
        raise ctx.fail(inst, "DynamicReshape requires at least one operand.")


def _broadcast(inst: Instruction, ctx: _Context) -> None:
    # (the accelerator's triage, checks.c rule_passes, does not ask about a broadcast with dimensions: keep in step)
    if "dimensions" in inst.attrs or not inst.operands:
        return
    operand = ctx.operand(inst, 0)
    if operand is not None and (operand.dims or operand.tuple_shapes):
        raise ctx.fail(inst, "broadcast of a non-scalar needs dimensions={...}")


def _pad(inst: Instruction, ctx: _Context) -> None:
    padding = inst.attrs.get("padding")
    if padding is not None and _PADDING.fullmatch(padding.strip()) is None:
        raise ctx.fail(inst, "expects padding_low and padding_high separated by '_' in padding")


def _window(inst: Instruction, ctx: _Context) -> None:
    window = inst.attrs.get("window")
    if window is None:
        return
    m = _WINDOW_PAD.search(window)
    if m is not None and _WINDOW_PAD_VALUE.fullmatch(m.group(1).rstrip("}")) is None:
        raise ctx.fail(inst, "expects padding_low and padding_high separated by '_' in window pad "
                             f"(interior padding is pad's, not a window's): {m.group(1).rstrip('}')}")


def _convolution(inst: Instruction, ctx: _Context) -> None:
    _window(inst, ctx)
    labels = inst.attrs.get("dim_labels")
    if labels is None:
        return
    m = re.fullmatch(r"([0-9a-z?]+)_([0-9a-z?]+)->([0-9a-z?]+)", labels.strip())
    if m is None:
        raise ctx.fail(inst, f"bad dim_labels {labels!r} (expected like b01f_01io->b01f)")
    for part, name, letters in ((m.group(1), "lhs", "bf"), (m.group(2), "rhs", "io"), (m.group(3), "output", "bf")):
        if len(set(part)) != len(part):
            raise ctx.fail(inst, f"expects unique {name} dimension numbers, but sees {part}")
        n = len(part)
        for c in part:
            if not (c in letters or c == "?" or (c.isdigit() and int(c) < n)):
                raise ctx.fail(inst, f"expects [0-{n - 1}{letters}?] in {name} dimension numbers, but sees {c}")
    if not len(m.group(1)) == len(m.group(2)) == len(m.group(3)):
        raise ctx.fail(inst, "input, kernel, and output must have same number of dimensions")


def _control_predecessors(inst: Instruction, ctx: _Context) -> None:
    names = ctx.names()
    for name in _CTRL_NAME.findall(inst.attrs["control-predecessors"]):
        if name not in names:
            raise ctx.fail(inst, f"instruction {name!r} is not defined (in control-predecessors of {inst.name!r})")


def _result_accuracy(inst: Instruction, ctx: _Context) -> None:
    if inst.opcode not in _ACCURACY_OPS:
        raise ctx.fail(inst, f'unexpected attribute "result_accuracy" on {inst.opcode}: only transcendental '
                             "operations take it")
    if _ACCURACY.fullmatch(inst.attrs["result_accuracy"].strip()) is None:
        raise ctx.fail(inst, "expects result_accuracy={mode=highest|default} or "
                             "{tolerance={atol=..., rtol=..., ulps=...}}")


_BY_OPCODE: dict[str, Callable[[Instruction, _Context], None]] = {
    "constant": _constant, "custom-call": _custom_call, "conditional": _conditional, "infeed": _infeed,
    "dynamic-reshape": _dynamic_reshape, "broadcast": _broadcast, "pad": _pad, "convolution": _convolution,
    "reduce-window": _window, "select-and-scatter": _window,
}
