"""Between two runs, ops added by a function run A never traced are placed at the user's call of that function
(compare-runs round 12's WRONG_NOW row, runs12_layernorm_added).

The graph diff places an ``ops`` cause at its instructions' innermost user lines: for a layer norm added in today's
checkout, ``jnp.mean`` / ``jnp.var`` / the division inside the new ``layer_norm`` (``_runs12_net_b.py:7-9``), the
first of which led. Right file and function, but the code that changed is the line that now calls ``layer_norm``
(``:14`` in ``forward``). When every added instruction's innermost user frame lies in one function, all of them
called from one line, and run A's program holds no frame of that function at all (its stack-frame table names it
nowhere), the function is new to the program: the call that brought it in leads, the lines inside follow. A
function run A traced too (an edited body, a branch inside it) keeps its own lines, and so does a cause on one line.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_verdicts import Verdict


def lead_with_new_function_calls(verdicts: list[Verdict]) -> None:
    """For each program of B with ops added only, in a function run A's program never traced: its one calling line
    first among the cause's locations."""
    for v in verdicts:
        c = v.cause
        if v.verdict != "miss_hlo_differs" or c is None or c.kind != "ops" or not c.added or c.removed:
            continue
        user = [f for f in c.locations if not f.is_library and f.line is not None and f.function]
        if len(user) < 2 or len(user) != len(c.locations) or len({(f.file, f.function) for f in user}) != 1:
            continue
        callers = {(c.callers.get(f) or (None,))[0] for f in user}
        caller = callers.pop() if len(callers) == 1 else None
        if caller is None or caller.is_library or caller.line is None or caller == v.called_at \
                or caller.function == "<module>":  # the jitted call itself: the function is the program
            continue
        if _traces_function(v.a_record, user[0].file, user[0].function) is not False:
            continue
        c.locations = [caller, *c.locations]


def _traces_function(record: GraphRecord | None, file: str, function: str) -> bool | None:
    """Whether the program's stack-frame table names ``function`` of ``file``; None without a table."""
    if record is None:
        return None
    table = record.module().stack_frames
    if table is None or not table.file_locations:
        return None
    return any(table.function_names.get(loc.function_name_id) == function
               and table.file_names.get(loc.file_name_id) == file for loc in table.file_locations.values())
