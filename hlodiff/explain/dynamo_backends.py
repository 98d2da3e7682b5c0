"""The backend behind a recompilation whose log names no failed guard.

torch 2.9 keeps one cache entry per backend for the same code object and checks an entry's backend apart from
its guards: when one function is compiled twice, ``torch.compile(loss_fn, backend="openxla")`` for training and
``torch.compile(loss_fn, backend="aot_eager")`` for a numerics check, the first call through the second traces the
function again, and the recompiles log prints the failure with no text (``- 0/0: ``: every guard held when
checked again; Dynamo round 30, d30_backend_check_eval). The log alone cannot say more than "no guard failed";
the user's source, when on disk, shows the two ``torch.compile`` calls of that function and their backends: then
the fix names them and the call through the other backend leads. One compile, or backends the source does not
spell as string literals: nothing changes. Two compiles in exclusive branches (``if args.check: f =
torch.compile(loss_fn, backend="aot_eager") else: f = torch.compile(loss_fn, backend="openxla")``) keep one entry
each run: a compile counts only when the name it is bound to is called (thirteenth stop's last read).
"""

from __future__ import annotations

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix
from hlodiff.hlo.model import SourceFrame

BRIDGE_BACKEND = "openxla"
"""torch_xla's backend: the entry the XLA graphs come from; a compile with any other backend is the second one."""


def place_other_backends(found, sources: SourceLines, files: list[str] = ()) -> None:
    """For each recompilation with no failed guard, the ``torch.compile`` calls of its function in its file (or the
    user's files): two or more with different backends give it the fact ``other_backend``, the backends in its
    ``seen``, its fix again, and, when one call of the result compiled with another backend than torch_xla's is in
    the source, that call as its location."""
    for r in getattr(found, "recompiles", []):
        if "no_failed_guard" not in r.facts or not r.function:
            continue
        where = [r.location.file] if r.location is not None and not r.location.is_library else []
        for file in dict.fromkeys([*where, *files]):
            compiles = _called(sources, file, sources.compiles_of_function(file, r.function) or [])
            if len({backend for _, backend, _ in compiles}) < 2 or None in {b for _, b, _ in compiles}:
                continue
            r.facts = r.facts | {"other_backend"}
            r.seen = ", ".join(f"backend={backend!r} at line {line}" for line, backend, _ in compiles)
            choose_fix(r)
            _lead_with_other_call(r, sources, file, compiles)
            break


def _called(sources: SourceLines, file: str, compiles):
    """The compiles whose result is called: bound to names one of which a line calls (an unbound compile,
    called where it is made, counts). Compiles bound to the same names are alternatives (one branch or the other
    binds it): they count as two backends only when bound to different names."""
    called = [c for c in compiles if not c[2] or sources.calls_of_names(file, c[2])]
    if len({names or line for line, _, names in called}) < 2:
        return called[:1]  # one name rebound per branch: one backend per run
    return called


def _lead_with_other_call(r, sources: SourceLines, file: str, compiles) -> None:
    others = [(line, names) for line, backend, names in compiles if backend != BRIDGE_BACKEND]
    if len(others) != 1:
        return
    line, names = others[0]
    calls = sources.calls_of_names(file, names) or [] if names else []
    r.location = SourceFrame(file, calls[0] if len(calls) == 1 else line, None)
    r.located = "backend_call" if len(calls) == 1 else "decision"
