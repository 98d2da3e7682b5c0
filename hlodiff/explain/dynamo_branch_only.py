"""A Python number that only steers the compiled function's Python control flow (new-user review 17, F1).

``forward(x, step)`` with ``if step % 3 == 0: print(...)`` inside: Dynamo guards ``step == 0``, ``step == 1``, ...
and the row for a number that changes from call to call says "pass it as a tensor". A tensor cannot steer a Python
``if``: the reviewer followed that advice and got a data-dependent-branch graph break and a host read on every
call. When the user's file on disk shows the number read only in ``if``/``while`` tests and reports (print,
logging), the recompilation gets the fact ``branch_only`` and its own row (:mod:`hlodiff.diff.fix_rules`,
``dynamo_int_steers_branch``): move the branch and what it does out of the compiled function. A number that also
feeds tensor math keeps "pass it as a tensor" (the source shows that read, and the fact is not given).
"""

from __future__ import annotations

import re

from hlodiff.dumps.evidence import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix

_LOCAL = re.compile(r"^(?:L\[(?P<q>['\"])(?P<quoted>\w+)(?P=q)\]|(?P<name>[A-Za-z_]\w*))$")
"""A guard's subject that is a local of the compiled function: ``step`` (torch 2.9's guard text) or ``L['step']``."""
NUMBERS = frozenset({"python_int", "python_float"})


def mark_branch_only(found, sources: SourceLines) -> None:
    """Give each Dynamo recompilation on a number argument that the source shows read only in Python control flow
    the fact ``branch_only`` and choose its fix again. The file read is the one of the guard's line (the compiled
    function's own) or, without it, of the recompilation's line."""
    for r in getattr(found, "recompiles", []):
        if r.kind != "python_value" or not r.facts & NUMBERS or not r.function or not r.subject:
            continue
        m = _LOCAL.match(r.subject.strip())
        if m is None:
            continue
        frames = [f for f in (r.guard_at, getattr(r.guard, "source", None), r.location)
                  if f is not None and f.file and not f.is_library]
        files = list(dict.fromkeys(f.file for f in frames))
        name = m.group("quoted") or m.group("name")
        if any(sources.steers_only_branches(file, r.function, name) for file in files):
            r.facts = r.facts | {"branch_only"}
            choose_fix(r)
        elif not any(sources.has_source(file) for file in files) and tested_in_branch(name, r.guard.code):
            r.facts = r.facts | {"branch_test"}  # no source to tell "only": both readings, the branch first
            choose_fix(r)


def tested_in_branch(name: str, code: str | None) -> bool:
    """Whether the line Dynamo quoted for the guard on ``name`` is an ``if``/``elif``/``while`` that tests it
    (``if step % 3 == 0:``): the number steers Python control flow there, whatever else it does."""
    if not code or (m := _BRANCH.match(code)) is None:
        return False
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", m.group("test")) is not None


_BRANCH = re.compile(r"^\s*(?:if|elif|while)\b(?P<test>.+?):?\s*(?:#.*)?$")
