"""A tensor the program grows by ``torch.cat`` between compiled calls (Dynamo round 31, d31_queue_grow).

A MoCo-style queue kept as a plain tensor attribute, started empty and grown by ``torch.cat([k, queue])[:K]``
after each step: Dynamo's size guard on it fails at every new size (0, 8, 16, 24, 32) and its row for a new size
says "pad or bucket". Dynamo's log cannot see the cat (it runs outside the compiled function); two other things
can: the XLA graphs, whose story names a tensor grown by concatenation (the ``grows op:cat`` fact), and the user's
file, which shows the guarded name rebound to a concatenation with itself in a loop. When either does and the
guarded tensor only grew over Dynamo's size recompilations, those recompilations get the fact ``grown_by_cat`` and
the row that says what a growing buffer needs: preallocate it and write in place. The file is what a live look has
from the start (a window of the graphs may not hold the XLA side's growth yet).
"""

from __future__ import annotations

import re

from hlodiff.dumps.evidence import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix
from hlodiff.explain.dynamo_types import DynamoRecompile, size_guard_groups

GROWN_BY_CAT_ROWS = frozenset({"shape_growing_cache"})
"""Rows of the XLA story that name a tensor grown by concatenation between steps."""

_WORD = re.compile(r"[A-Za-z_]\w*")


def mark_grown_by_cat(recompiles: list[DynamoRecompile], explanation) -> None:
    """Give the size recompilations of each guarded tensor whose size only grew the fact ``grown_by_cat`` when the
    XLA story of the same run names a tensor grown by concatenation."""
    if not any(c.fix_rule in GROWN_BY_CAT_ROWS for x in explanation.recompilations for c in x.causes):
        return
    for _, members in growing(recompiles):
        for r in members:
            r.facts = (r.facts - {"last_call"}) | {"grown_by_cat"}


def mark_grown_in_source(found, sources: SourceLines, files: list[str]) -> None:
    """The same fact from the user's files: a guarded tensor that only grew and that one of ``files`` rebinds to a
    concatenation with itself in a loop; its recompilations' fixes are chosen again."""
    for name, members in growing(getattr(found, "recompiles", [])):
        words = _WORD.findall(name)
        if words and any(sources.grown_by_cat(f, words[-1]) is not None for f in files) \
                and any("grown_by_cat" not in r.facts for r in members):
            for r in members:
                r.facts = (r.facts - {"last_call"}) | {"grown_by_cat"}
                choose_fix(r)


def growing(recompiles: list[DynamoRecompile]) -> list[tuple[str, list[DynamoRecompile]]]:
    """Per guarded tensor and dim, its size recompilations when every one of them saw the size grow."""
    groups = size_guard_groups(recompiles)
    return [(name, [r for r, _, _ in members]) for (name, _), members in groups.items()
            if all(b > a for _, a, b in members)]
