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
)


def _norm(path: str) -> str:
    return path.replace("\\", "/")


def library_branch(cause) -> str:
    """The words of the :data:`LIBRARY_BRANCHES` row whose file every changed instruction of ``cause`` reaches
    through library frames only; empty when a frame of the user's is among them or no row's file is."""
    refs = library_only_refs(cause)
    if refs is None:
        return ""
    found: set[str] = set()
    for ref in refs:
        rows = {row.name for row in LIBRARY_BRANCHES
                if any(_norm(f.file or "").endswith(row.file) for f in ref.frames)}
        if not rows and not all(_norm(f.file or "").endswith(OPERATOR_WRAPPERS) for f in ref.frames):
            return ""
        found |= rows
    if len(found) != 1:
        return ""
    name = found.pop()
    return next(row.what for row in LIBRARY_BRANCHES if row.name == name)
