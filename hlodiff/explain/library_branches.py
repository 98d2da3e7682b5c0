"""Branches a library takes on its own step count: a graph that changes once, by the library's design.

Some of torch's code picks what to trace from a host value it keeps itself: RAdam's single-tensor update (the one
torch_xla runs) takes plain momentum steps until the variance estimate is tractable (``rho_t > 5``, its 6th step
with beta2 = 0.999) and the rectified update from then on. The step graph changes once, in library code, with no
line of the user's: "run the same ops every step (torch.where)" is advice they cannot follow, and nothing needs
following (round 20, r20_tx_radam_rect_control). Each row names the file and what its branch is; a change is the
row's when every changed instruction's frames are library code and each reaches the row's file.
``tests/test_round20.py`` has one test per row.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.explain.fix_evidence import library_only_refs
from hlodiff.explain.wrapper_lines import OPERATOR_WRAPPERS


@dataclass(frozen=True, slots=True)
class LibraryBranch:
    name: str
    file: str
    """The end of the library file's path (``torch/optim/radam.py``)."""
    what: str
    """The branch, in words: what changes and when."""


LIBRARY_BRANCHES: tuple[LibraryBranch, ...] = (
    LibraryBranch("radam_rectification", "torch/optim/radam.py",
                  "torch.optim.RAdam switches to its rectified update once the variance estimate is tractable "
                  "(rho_t > 5, its 6th step with the default beta2 = 0.999), after plain momentum steps before "
                  "that"),
    # round 20 (r20_tx_swa_update_read): AveragedModel.update_parameters copies the weights at its first call,
    # averages with its counter n_averaged from the second (moved in as the number 1, baked, then as data)
    LibraryBranch("swa_start", "torch/optim/swa_utils.py",
                  "torch.optim.swa_utils.AveragedModel starts averaging at its first update_parameters() call: that "
                  "call copies the model's weights in, the next ones average them with its counter n_averaged (the "
                  "number 1 baked in once, device data after), and the step graph stays the same from then on"),
)


def _norm(path: str) -> str:
    return path.replace("\\", "/")


def library_branch(cause) -> str:
    """The words of the :data:`LIBRARY_BRANCHES` row whose file every changed instruction of ``cause`` reaches
    through library frames only; empty when a frame of the user's is among them or no row's file is."""
    found = _rows_of([cause])
    return _words(found.pop()) if found is not None and len(found) == 1 else ""


def _rows_of(causes) -> set[str] | None:
    """The rows the framed changes of ``causes`` reach; None when one has a frame of the user's, or a library
    frame outside every row's file (and outside torch's operator wrappers)."""
    found: set[str] = set()
    for cause in causes:
        refs = library_only_refs(cause)
        if refs is None:
            return None
        for ref in refs:
            rows = {row.name for row in LIBRARY_BRANCHES
                    if any(_norm(f.file or "").endswith(row.file) for f in ref.frames)}
            if not rows and not all(_norm(f.file or "").endswith(OPERATOR_WRAPPERS) for f in ref.frames):
                return None
            found |= rows
    return found


def _words(name: str) -> str:
    return next(row.what for row in LIBRARY_BRANCHES if row.name == name)


def library_start(recompilations: list, members: list) -> tuple[frozenset[int], str]:
    """A library's start told over several steps (SWA: the copy, the first average with its counter baked, then
    the graph that stays): the family's run of graphs that each ran once, then the graph that stays to the end of
    the run (``A,B,B,C,D,E,E,E``: C, D, E), when the recompilations to them change only library code that reaches
    one :data:`LIBRARY_BRANCHES` row between them (a change with no frame at all, outputs reordered by the copy,
    goes with them). ``(ids of those recompilations, the row's words)``; empty when not so (round 20,
    r20_tx_swa_update_read: the first step alone, with the copy's reorder, named no library)."""
    keys = [g.cache_key for g in members]
    if len(keys) < 3 or keys.count(keys[-1]) < 2 or keys[-2] != keys[-1]:
        return frozenset(), ""
    start = keys.index(keys[-1])
    if keys[start:] != [keys[-1]] * (len(keys) - start):
        return frozenset(), ""  # the last graph came before and went away: no settling start
    while start > 0 and keys.count(keys[start - 1]) == 1:
        start -= 1
    segment = set(keys[start:])
    mine = [r for r in recompilations if r.graph.cache_key in segment]
    if len(mine) < 2:
        return frozenset(), ""  # one change alone: library_branch tells it, cause by cause
    found = _rows_of(c for r in mine for c in r.causes)
    if found is None or len(found) != 1:
        return frozenset(), ""
    return frozenset(id(r) for r in mine), _words(found.pop())
