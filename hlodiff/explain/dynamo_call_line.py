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

from hlodiff.dumps.evidence import SourceLines
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
        if r.location.is_library or not r.location.file:
            continue
        lines = sources.calls_of_function(r.location.file, r.function)
        if not lines or len(lines) != 1:
            continue
        call = SourceFrame(r.location.file, lines[0], None)
        if r.located == "guard":
            r.guard_at = r.location
        r.location, r.located = call, "source_call"


def _place_wrapper_call(r, sources: SourceLines, files: list[str]) -> None:
    """The one call, over the user's files, of a name bound to ``torch.compile(...)``: the line that passed the new
    input to the compiled module. None found, or two or more: which one is not known, and nothing changes."""
    calls = [(file, line) for file in files for line in (sources.calls_of_compiled(file) or [])]
    if len(calls) == 1:
        r.location, r.located = SourceFrame(calls[0][0], calls[0][1], None), "compiled_call"
