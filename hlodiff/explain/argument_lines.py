"""Where a JAX argument whose dtype or shape changed is made and enters the graph, before where it is used.

The HLO's stacks hold the use inside the jitted function and, beyond it, the call that passed the argument; JAX's
cache-miss log names that call too. The line to change is usually a little earlier: where the caller made the
value (``labels = labels * 1.0``), which the caller's source says when it is still on disk.
"""

from __future__ import annotations

import re

from hlodiff.diff.model import Cause
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.model import SourceFrame


ARGUMENT_KINDS = frozenset({"dtype", "shape"})
"""Cause kinds of a changed argument: made outside jit, passed at the call, used inside."""


def jitted_function(graph: GraphSummary) -> str | None:
    """The Python name of a JAX module's function (``jit_loss_fn`` -> ``loss_fn``)."""
    name = graph.record.module_name or graph.name or ""
    return name[4:] if name.startswith("jit_") and len(name) > 4 else None


def changed_argument(cause: Cause, graph: GraphSummary) -> str | None:
    """The argument name (JAX's ``op_name`` of an entry parameter, ``batch['x']`` -> ``batch``) of the first
    entry parameter, in the function's argument order, among the cause's instructions on the right graph. In the
    diff's name order ``mask.1`` came before ``tokens.1`` (compare-runs round 10, runs10_pad_longest) while the
    cause's summary names the first parameter: the line and the summary named two arguments."""
    cm = graph._canonical
    if cm is None:
        return None
    params = [inst for inst in (cm.entry.insts.get(right) for _, right in cause.instructions if right is not None)
              if inst is not None and inst.opcode == "parameter"]
    for inst in sorted(params, key=lambda i: i.parameter_number if i.parameter_number is not None else 1 << 30):
        op_name = cm.metadata(inst).op_name or ""
        root = re.split(r"[\[.]", op_name, maxsplit=1)[0]
        if root.isidentifier():
            return root
    return None


def lead_with_the_call(cause: Cause, call: SourceFrame | None, argument: str | None, function: str | None,
                       defined_at: SourceFrame | None = None, *, sources: SourceLines) -> None:
    """A JAX argument whose dtype or shape changed is made outside jit and enters the graph at the call: the line
    that made it before the call first (when the caller's source is on disk), then the call (JAX's call site, else
    the first frame outside the jitted function on the use's stack), then where the jitted function uses it.
    ``sources``: the run's Python files (:class:`hlodiff.dumps.source_lines.SourceLines`)."""
    inside = list(cause.locations)
    if call is None and inside and function:
        call = _call_from_stack([inside[0], *cause.callers.get(inside[0], ())], function)
    if call is None:
        return
    made = None
    if argument and function and call.line is not None:
        params = sources.parameter_names(defined_at.file, defined_at.line) if defined_at is not None else None
        line = sources.argument_made_at(call.file, call.line, function, argument, params)
        if line is not None and line != call.line:
            made = SourceFrame(call.file, line, call.function)
    entry = ([made] if made is not None else []) + [call]
    lines = {(f.file, f.line) for f in entry}
    uses = [f for f in inside if (f.file, f.line) not in lines]
    above = next((c for f in inside if (c := cause.callers.get(f))), ())
    outer = tuple(above[next((i + 1 for i, f in enumerate(above) if (f.file, f.line) == (call.file, call.line)),
                             0):])
    for frame in entry:
        cause.callers[frame] = outer
    cause.locations = entry + uses
    cause.made_at = made


def made_then_call(call: SourceFrame | None, function: str | None, argument: str | None,
                   defined_at: SourceFrame | None, *, sources: SourceLines) -> list[SourceFrame]:
    """The line that made the argument passed at ``call`` (the caller's source, when on disk), then the call; the
    call alone when the source does not say. For an argument JAX names in its log whose placement changed (review
    17, F5: ``xv = jnp.asarray(...)`` on :31, one device, passed to a step placed on four at :35): the fix, a
    device_put with the step's sharding, goes where the array is made."""
    if call is None:
        return []
    if not argument or not function or call.line is None:
        return [call]
    params = sources.parameter_names(defined_at.file, defined_at.line) if defined_at is not None else None
    line = sources.argument_made_at(call.file, call.line, function, argument, params)
    if line is None or line == call.line or sources.loop_header(call.file, line):
        return [call]  # a loop's item was made by its iterator, elsewhere: the call is the line we know
    return [SourceFrame(call.file, line, call.function), call]


def _call_from_stack(stack: list[SourceFrame], function: str) -> SourceFrame | None:
    """The first frame outside ``function`` (innermost first): the line that called the jitted function."""
    last = max((i for i, f in enumerate(stack) if f.function == function), default=None)
    if last is None or last + 1 >= len(stack):
        return None
    return stack[last + 1]
