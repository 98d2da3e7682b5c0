"""Where in the program a reason outside the graph comes from (compare-runs): a miss whose cause is not a graph
difference (the same HLO, the same or another key) may still be made by one instruction of the program, whose
metadata names the user's line: the call back into Python that keeps JAX from writing the entry, the large constant
(a closed-over array) that XLA's text dump elides and that made another key. The headline is then located there,
as a graph difference is at its cause's line."""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.hlo.model import Computation, Instruction, SourceFrame, user_frame


def _host_callback(inst: Instruction, comp: Computation) -> bool:
    """A call back into Python (``jax.debug.print``, ``jax.debug.callback``, ``io_callback``, ``pure_callback``):
    JAX's CPU and GPU callbacks are custom-calls whose target names the callback."""
    return inst.opcode == "custom-call" and "callback" in (inst.attr("custom_call_target") or "")


def _uses_elided_constant(inst: Instruction, comp: Computation) -> bool:
    """An instruction reading a constant XLA's text dump printed as ``{...}`` (a closed-over array baked into the
    program): the constant itself carries no metadata, its first user names the line."""
    elided = {i.name for i in comp.instructions if i.opcode == "constant" and i.literal == "{...}"}
    return bool(elided) and any(op.lstrip("%") in elided for op in inst.operands)


LOCATED_IN_PROGRAM = {"host_callbacks": _host_callback, "elided_constants": _uses_elided_constant}
"""Reasons outside the graph whose cause is nevertheless an instruction of the program (the call back into Python
that keeps JAX from writing it; the baked constant that made another key): the headline is located at the user's
line of the first such instruction, from its metadata."""


def program_line(rec: GraphRecord, reason: str) -> SourceFrame | None:
    """The user's line of the first instruction of ``rec`` that :data:`LOCATED_IN_PROGRAM` marks for ``reason``
    (computations in dump order, so a callback inside a loop body is found too)."""
    from hlodiff.graph import canonicalize

    test = LOCATED_IN_PROGRAM.get(reason)
    if test is None:
        return None
    module = rec.module()
    canonical = canonicalize(module)
    for comp in module.computations:
        for inst in comp.instructions:
            if test(inst, comp) and (frame := user_frame(canonical.frames(inst))) is not None:
                return frame
    return None




def calling_line(rec: GraphRecord, computation: str) -> SourceFrame | None:
    """The user's line of the first instruction (computations in dump order) that calls, directly or through
    other computations, a computation named ``computation`` (or ``computation.N``): a library function's lowering
    (``threefry2x32``) often carries no metadata of its own, while the call the user's line made into it does
    (JAX's ``jit(_bernoulli)`` call, ``jit(_threefry_split)``)."""
    from hlodiff.graph import canonicalize

    module = rec.module()
    by_name = {c.name.lstrip("%"): c for c in module.computations}
    reaching = {n for n in by_name if n.split(".")[0] == computation}
    grown = True
    while grown:  # the computations that call into one already known, until none is added
        grown = False
        for name, comp in by_name.items():
            if name not in reaching and any(callee.lstrip("%") in reaching for inst in comp.instructions
                                            for callee in inst.called_computation_names()):
                reaching.add(name)
                grown = True
    if not reaching:
        return None
    canonical = canonicalize(module)
    for comp in module.computations:
        for inst in comp.instructions:
            if any(c.lstrip("%") in reaching for c in inst.called_computation_names()) and \
                    (frame := user_frame(canonical.frames(inst))) is not None:
                return frame
    return None


def named_by_both(locations: list[SourceFrame], a: GraphRecord | None, b: GraphRecord | None) -> bool:
    """Every one of ``locations`` (a cause's user lines) is the user's line of instructions in both programs: the
    two runs traced the same code there, and what differs is how often it ran (a loop unrolled once more for a
    static count), decided by what the call passed rather than by a line of its own."""
    if not locations or a is None or b is None:
        return False
    named = [_user_lines(r) for r in (a, b)]
    return all((f.file, f.line) in named[0] and (f.file, f.line) in named[1] for f in locations)


def _user_lines(rec: GraphRecord) -> set[tuple[str, int]]:
    from hlodiff.graph import canonicalize

    module = rec.module()
    canonical = canonicalize(module)
    return {(frame.file, frame.line) for comp in module.computations for inst in comp.instructions
            if (frame := user_frame(canonical.frames(inst))) is not None}
