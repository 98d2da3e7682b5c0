"""The user's call of the library function whose code traced the ops that differ.

A torch_xla dump names the innermost frame of each traced op: for ops traced inside a library function
(``torch/nn/functional.py:2206``) no line of the user's is on them, and the story could only say "a call of yours
ran with another argument" with generic examples (round 28, r28_tx_gumbel_hard_switch: ``F.gumbel_softmax(...,
hard=step >= 4)`` was told as "approximate= on GELU, a dropout probability, train() vs eval()", with no line).
The library file, when it is installed where hlodiff runs, names the function that line lies in; the user's source
on disk (the file of the step's sync) names the one line that calls it. Then that line leads and the fix names the
function. Nothing changes when either file is missing, the line lies in a private helper, or the user's file calls
the function from several lines (which one changed is then not known).
"""

from __future__ import annotations

from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.diff.fixes import FixChoice
from hlodiff.hlo.installed import package_path
from hlodiff.hlo.model import SourceFrame

ROWS = frozenset({"ops_library_setting"})
"""Rows whose story is a library call of the user's made with another setting, told without a line of theirs: once
the call is found, the fix names it (:data:`CALL_ROW`)."""
PLACE_ONLY_ROWS = frozenset({"ops_switched_on"})
"""Rows whose words already tell the story (a setting switched on from step N, at a line the capture does not name)
and stay; the call found only leads the locations (label_smoothing_on: F.cross_entropy's smoothing ops)."""
CALL_ROW = "ops_library_setting_call"
"""The row that replaces them once the call's line is known."""


def place_library_calls(recompilations, sources) -> None:
    """For each recompilation whose root is one of :data:`ROWS` and carries no user line: the line of the user's
    that calls the library function its ops were traced in, first, with the fix that names it."""
    for r in recompilations:
        if not r.causes:
            continue
        cause = r.causes[0]
        if cause.fix_rule not in ROWS | PLACE_ONLY_ROWS or any(not f.is_library and f.line is not None
                                                               for f in cause.locations):
            continue
        found = _user_call(cause, getattr(r.graph, "trigger", None), sources)
        if found is None:
            continue
        line, function, where = found
        cause.locations = [line, *cause.locations]
        cause.hint = None
        if cause.fix_rule in PLACE_ONLY_ROWS:
            continue
        rule = RULES_BY_NAME[CALL_ROW]
        cause.fix = FixChoice(rule, {"function": function, "library_call": where, "line": str(line.line)}).text
        cause.fix_rule = rule.name


def _user_call(cause, sync, sources) -> tuple[SourceFrame, str, str] | None:
    lib = cause.library_locations[0] if cause.library_locations else None
    if lib is None or lib.line is None or sync is None or sync.line is None or sync.is_library:
        return None
    function = sources.library_function(lib.file, lib.line)
    if function is None or function.startswith("_"):
        return None
    lines = sources.calls_named(sync.file, (function,))
    if len(lines) != 1:
        return None
    return SourceFrame(sync.file, lines[0], None), function, f"{package_path(lib.file)}:{lib.line}"
