"""A batch cut into unequal pieces before a compiled call (Dynamo round 31, d31_accum_chunk_uneven).

Gradient accumulation by ``for xm in xb.chunk(4): model(xm)`` on batches of 30 rows gives 8, 8, 8 and 6 rows every
step: Dynamo's size guard fails at the first short piece, and no later recompilation comes (the second graph serves
every short piece after), which reads like an epoch's short last batch, and its row says "drop_last". The loader's
batches are all full; the split is what is uneven. When the line the recompilation is placed at cuts a tensor into
pieces (read from the user's file on disk), the recompilation gets the fact ``uneven_chunks`` (and loses
``last_call``) and its own row in :mod:`hlodiff.diff.fix_rules`: a batch size the pieces divide, or a padded piece.
"""

from __future__ import annotations

from hlodiff.dumps.evidence import SourceLines
from hlodiff.explain.dynamo_recompile_fixes import choose_fix


def mark_uneven_chunks(found, sources: SourceLines) -> None:
    """Give each Dynamo recompilation on a smaller dim 0 whose line (the recompilation's own, or its guard's) cuts a
    tensor into pieces the fact ``uneven_chunks`` and choose its fix again."""
    for r in getattr(found, "recompiles", []):
        if r.kind != "shape" or "leading_dim_shrank" not in r.facts:
            continue
        frames = [f for f in (r.location, r.guard_at) if f is not None and f.file and not f.is_library]
        if any(sources.splits_into_pieces(f.file, f.line) for f in frames):
            r.facts = (r.facts - {"last_call", "full_again"}) | {"uneven_chunks"}
            choose_fix(r)
