"""The user's call of a compiled function, where Dynamo's records name only the function.

A TORCH_LOGS text log names the compiled function's ``def`` (its first line: the ``@torch.compile`` decorator), a
TORCH_TRACE log of a compiled function only its own frame; the new size or Python value came from the loop's call
(review 13, F4: "0/1 at c1_batch.py:9" where the reviewer looked for :17). When the XLA graph's stack did not name
the call (:func:`hlodiff.explain.dynamo.caller_in_graph`) and the source file is on disk, the one line of that file
that calls the function by name is its call. Two or more calls: which one passed the new value is not known, and
nothing changes. Where Dynamo names only torch's wrapper of a compiled module (``torch.compile(model)``) and the XLA
graph's changed input has no line (a batch moved with ``x.to(device)``), the one call of a ``torch.compile`` result
in the user's files is the line (the tenth stop's lead47_d_filtered_batch: no line at all before).
"""

from __future__ import annotations

import re

from hlodiff.dumps.source_lines import SourceLines
from hlodiff.hlo.model import SourceFrame


def place_dynamo_calls(found, sources: SourceLines, files: list[str] = ()) -> None:
    """For each recompilation located at the function's definition or at a guard's line (a Python value's use), its
    one call in the source becomes the location (``located`` ``source_call``); the guard's line is kept beside it
    (``guard_at``): the line that passed the new value leads, as the README promises (review 14, F4: P6 led with
    the call, P7 with the guard's line :11 and the call second)."""
    for r in getattr(found, "recompiles", []):
        if r.located == "wrapper" and r.location is None:
            _place_wrapper_call(r, sources, files)
            continue
        if r.located not in ("definition", "guard") or not r.function or r.location is None:
            continue
        if r.called_at is not None:  # the guard's line was chosen to lead, the call beside it (d23_norm_history)
            continue
        if r.location.is_library or not r.location.file:
            continue
        calls = [(r.location.file, line) for line in sources.calls_of_function(r.location.file, r.function) or []]
        if not calls and r.function in MODULE_METHODS:
            calls = [(file, line) for file in dict.fromkeys([r.location.file, *files])
                     for line in (sources.calls_of_compiled(file) or [])]
        if len(calls) != 1:
            continue
        call = SourceFrame(calls[0][0], calls[0][1], None)
        if r.located == "guard":
            r.guard_at = r.location
        r.location, r.located = call, "source_call"


MODULE_METHODS = frozenset({"forward"})
"""Frames Dynamo names for a compiled ``nn.Module`` (``torch.compile(model)`` compiles its ``forward``): the user
never calls them by name, but through the name bound to ``torch.compile(...)`` (review 18, F7: ``step_fn(x, t)`` at
:20 for a guard at :9 in ``forward``, the line the README promises)."""


def _place_wrapper_call(r, sources: SourceLines, files: list[str]) -> None:
    """The one call, over the user's files, of a name bound to ``torch.compile(...)``: the line that passed the new
    input to the compiled module. Two or more: the one call that runs in the mode a failed ``training`` guard
    left for (:func:`_call_in_new_mode`); else which one is not known, and nothing changes."""
    calls = [(file, line) for file in files for line in (sources.calls_of_compiled(file) or [])]
    located = "compiled_call"
    if len(calls) > 1:
        calls, located = _call_in_new_mode(r, sources, files), "mode_call"
    if len(calls) == 1:
        r.location, r.located = SourceFrame(calls[0][0], calls[0][1], None), located


_TRAINING_GUARD = re.compile(r"\.training\s*==\s*(?P<was>True|False)\b")
"""A module's mode guard as Dynamo prints it (``fn._modules['1'].training == True``): the flag the earlier
compile saw; the call that failed it ran with the other."""


def _call_in_new_mode(r, sources: SourceLines, files: list[str]) -> list[tuple[str, int]]:
    """The calls of a compiled module that run, as the source sets its mode (``model.eval()`` before a call), with
    the ``training`` flag the failed guard did not hold (review 17, C2 by hand: the call after ``model.eval()``);
    empty when the guard is no mode guard or any call's mode is left open by the source."""
    m = _TRAINING_GUARD.search(r.guard.guard or "")
    if m is None:
        return _call_in_other_grad_mode(r, sources, files)
    now = m["was"] == "False"
    calls = []
    for file in files:
        modes = sources.compiled_calls_by_mode(file) or {}
        if any(mode is None for mode in modes.values()):
            return []
        calls += [(file, line) for line, mode in modes.items() if mode is now]
    return calls


CALL_LINES = frozenset({"call", "source_call", "xla_call", "backend_call"})
"""``located`` values that are the user's call of the compiled function: the line that passed the inputs."""

PASSED_KINDS = frozenset({"shape", "dtype"})
"""Cause kinds on an input parameter: what the call passed in changed."""


def place_bridge_inputs_at_calls(found, recompilations) -> None:
    """The XLA graph a Dynamo recompilation compiled, told at the call Dynamo's section names (new-user review 15,
    F8: "recompiled (0/1) at tc_eval_batch.py:12" above, "shape ... at tc_eval_batch.py:10" below it, for one
    recompilation). torch_xla keeps, on a parameter of the bridge's graph, the stack of the call that first made its
    IR (the first compiled call, :10), and none on the new input: the changed input was passed by the call that
    recompiled. For each paired recompilation located at a call, its graph's causes on an input parameter lead with
    that call, and a line that is only another Dynamo compile's call is dropped: one line for one recompilation.
    Any other cause of that graph (outputs, ops or inputs removed: review 17, F7, the eval graph's BN and dropout
    outputs told at the training call :11 under Dynamo's :15) keeps its own lines but those of another compile's
    call: what was removed was made by the earlier call, and the graph that lost it ran at this one."""
    paired = _paired_calls(found)
    if not paired:
        return
    others = _other_calls(found)
    for x in recompilations:
        r = paired.get(x.graph.ref)
        if r is None:
            continue
        for cause in x.causes:
            located = _at_the_call(cause, r.location, others)
            if located is not None:
                cause.locations = located
                cause.hint = None  # review 21, F5: "line unknown" printed under the call line just placed


def _other_calls(found) -> set:
    return {(c.call.file, c.call.line) for c in getattr(found, "compiles", []) if c.call is not None}


def _at_the_call(cause, call, others: set) -> list | None:
    """``cause``'s lines once placed at the recompilation's ``call`` (None: unchanged)."""
    stale = others - {(call.file, call.line)}
    kept = [f for f in cause.locations if (f.file, f.line) != (call.file, call.line) and (f.file, f.line) not in stale]
    if cause.kind in PASSED_KINDS and _on_parameter(cause):
        return [call] + kept
    if len(kept) == len(cause.locations):
        return None  # none of its lines is another call's: the graph's own lines stand
    return kept or [call]


def bridge_call(found, ref: str, cause) -> SourceFrame | None:
    """The call line the live line of the bridge's graph ``ref`` gives its leading ``cause``, as the report at exit
    places it (:func:`place_bridge_inputs_at_calls`); None when the report keeps the graph's own lines."""
    r = _paired_calls(found).get(ref) if found is not None else None
    if r is None or cause is None:
        return None
    located = _at_the_call(cause, r.location, _other_calls(found))
    return located[0] if located else None


def _paired_calls(found) -> dict:
    """XLA graph ref -> the Dynamo recompilation paired with it, for those located at the user's call."""
    return {r.difference_graph: r for r in getattr(found, "recompiles", [])
            if r.difference_graph and r.located in CALL_LINES and r.location is not None
            and not r.location.is_library}


def _on_parameter(cause) -> bool:
    named = cause.named or (cause.origins[0] if cause.origins else None)
    side = getattr(named, "left", None) or getattr(named, "right", None)
    return getattr(side, "opcode", None) == "parameter"


def _call_in_other_grad_mode(r, sources: SourceLines, files: list[str]) -> list[tuple[str, int]]:
    """On Dynamo's ``GLOBAL_STATE changed: grad_mode`` (no direction named), the calls whose grad mode, as the
    source sets it (``with torch.no_grad():``), differs from the call that runs first, which compiled first
    (rev11_dc_train_eval: the validation call under no_grad after the training call); one file of calls only, every
    call's mode known."""
    if "grad_mode" not in (r.guard.guard or ""):
        return []
    found = [(file, sources.compiled_calls_by_grad_mode(file)) for file in files]
    found = [(file, f) for file, f in found if f and f[0]]
    if len(found) != 1:
        return []
    file, (modes, first) = found[0]
    if first is None or any(mode is None for mode in modes.values()):
        return []
    return [(file, line) for line, mode in modes.items() if mode is not modes[first]]
