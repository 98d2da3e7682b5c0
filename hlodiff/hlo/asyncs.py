"""Async operations: the computations XLA wraps shorthand in, and the chain rules its parser enforces.

``x = ((f32[10]), f32[20], s32[]) custom-call-start(p0), custom_call_target="foo"`` is XLA's shorthand for an
``async-start`` calling a computation that holds one parameter per operand and the ``custom-call``. XLA builds that
computation while parsing, so a module's instruction count includes it; hlodiff builds it too (marked ``implicit``:
the printer leaves it out, as XLA prints the shorthand again). The instruction itself keeps the opcode the text
used, which is what a user reads in a diff.

An ``-update``/``-done`` must continue one chain from a ``-start``: same wrapped opcode, same called computation,
same execution thread, and shapes in XLA's ``((operands), outputs, state)`` form. A computation is wrapped by one
async chain only.
"""

from __future__ import annotations

from hlodiff.errors import HloParseError
from hlodiff.hlo.model import Computation, Instruction, Module
from hlodiff.hlo.opcodes import async_shorthand, is_invalid_async

_START = "async-start"


def check_and_wrap_asyncs(module: Module, path: str) -> None:
    """Add the computations XLA wraps async shorthand in, and reject broken async chains at the instruction."""
    names = {c.name for c in module.computations}
    wrapped: list[Computation] = []
    wrappers: dict[str, Instruction] = {}
    for comp in module.computations:
        by_name: dict[str, Instruction] | None = None
        for inst in comp.instructions:
            op = inst.opcode
            if not op.startswith("async-") and not op.endswith(("-start", "-update", "-done")):
                continue
            if is_invalid_async(op):
                raise _error(inst, path, f"expects opcode but sees: {op} (not an opcode, nor async shorthand)")
            short = async_shorthand(op)
            kind = short[1] if short is not None else op[5:] if op.startswith("async-") else None
            if kind is None:
                continue  # all-gather-start and the other operations that are async pairs of their own
            if kind == "-start":
                _check_start_shape(inst, path)
                if short is not None:
                    wrapped.append(_wrap(inst, short[0], names))
                else:
                    for callee in _calls(inst):
                        if callee in wrappers:
                            raise _error(inst, path, f"computation {callee!r} is called by more than one async op "
                                                     f"(also {wrappers[callee].name!r})")
                        wrappers[callee] = inst
                continue
            by_name = by_name if by_name is not None else comp.by_name()
            _check_link(inst, short, by_name, path)
    module.computations.extend(wrapped)


def _check_start_shape(inst: Instruction, path: str) -> None:
    shape = inst.shape
    if not shape.is_tuple or len(shape.tuple_shapes) < 2 or not shape.tuple_shapes[0].is_tuple:
        raise _error(inst, path, "AsyncStart expects the op shape to be in the form of "
                                 "((async-operands), async-outputs, state)")


def _check_link(inst: Instruction, short: tuple[str, str] | None, by_name: dict[str, Instruction],
                path: str) -> None:
    """An update or done: one operand that is the previous link of the same chain."""
    prev = by_name.get(inst.operands[0]) if len(inst.operands) == 1 else None
    if prev is None or _kind(prev.opcode) not in ("-start", "-update"):
        raise _error(inst, path, "AsyncUpdate and AsyncDone expect a single async op operand")
    start = prev
    while _kind(start.opcode) == "-update":
        link = by_name.get(start.operands[0]) if len(start.operands) == 1 else None
        if link is None:
            break
        start = link
    wrapped_op = _wrapped_opcode(start)
    if short is not None and wrapped_op is not None and wrapped_op != short[0]:
        raise _error(inst, path, f"Expect async wrapped opcode to be {wrapped_op}, but got {short[0]}")
    thread = inst.attrs.get("async_execution_thread")  # absent: inherited from the start
    want = start.attrs.get("async_execution_thread", '"main"')
    if thread is not None and thread != want:
        raise _error(inst, path, f"Expect async_execution_thread to be {want.strip(chr(34))}, but got "
                                 f"{thread.strip(chr(34))}")
    if "calls" in inst.attrs and "calls" in start.attrs and _calls(inst) != _calls(start):
        raise _error(inst, path, f"Expect async_wrapped_computation to be {_calls(start)[0]}, but got "
                                 f"{_calls(inst)[0]}")
    if _kind(inst.opcode) == "-update" and prev.shape.without_layout() != inst.shape.without_layout():
        raise _error(inst, path, "AsyncUpdate expects the op shape to be the same as the operand shape")


def _kind(opcode: str) -> str | None:
    if opcode.startswith("async-"):
        return opcode[5:]
    short = async_shorthand(opcode)
    return short[1] if short is not None else None


def _wrapped_opcode(start: Instruction) -> str | None:
    short = async_shorthand(start.opcode)
    return short[0] if short is not None else None


def _calls(inst: Instruction) -> list[str]:
    return [x.strip().lstrip("%") for x in inst.attrs.get("calls", "").strip("{}").split(",") if x.strip()]


def _wrap(start: Instruction, opcode: str, names: set[str]) -> Computation:
    """The computation XLA creates for ``opcode-start``: a parameter per operand, then the operation as root."""
    name = "async_wrapped"
    n = 0
    while name in names:
        n += 1
        name = f"async_wrapped.{n}"
    names.add(name)
    operand_shapes = start.shape.tuple_shapes[0].tuple_shapes
    params = [Instruction(f"async_param.{i}", shape, "parameter", parameter_number=i,
                          line=start.line, col=start.col) for i, shape in enumerate(operand_shapes)]
    result = start.shape.tuple_shapes[1]
    attrs = {k: v for k, v in start.attrs.items() if k != "async_execution_thread"}
    root = Instruction(opcode, result, opcode, tuple(p.name for p in params), attrs, True,
                       line=start.line, col=start.col)
    signature = (tuple((p.name, p.shape) for p in params), result)
    return Computation(name, [*params, root], signature=signature, implicit=True, line=start.line)


def _error(inst: Instruction, path: str, message: str) -> HloParseError:
    return HloParseError(message, path=path, line=inst.line, col=inst.col)

