"""A tensor the program grows by ``torch.cat`` between compiled calls (Dynamo round 31, d31_queue_grow).

A MoCo-style queue kept as a plain tensor attribute, started empty and grown by ``torch.cat([k, queue])[:K]``
after each step: Dynamo's size guard on it fails at every new size (0, 8, 16, 24, 32) and its row for a new size
says "pad or bucket". Dynamo's log cannot see the cat (it runs outside the compiled function); the XLA graphs can:
their story names a tensor grown by concatenation (the ``grows op:cat`` fact). When it does and a guarded tensor
only grew over Dynamo's size recompilations, those recompilations get the fact ``grown_by_cat`` and the row that
says what a growing buffer needs: preallocate it and write in place.
"""

from __future__ import annotations

from hlodiff.explain.dynamo_types import _SIZE, DynamoRecompile

GROWN_BY_CAT_ROWS = frozenset({"shape_growing_cache"})
"""Rows of the XLA story that name a tensor grown by concatenation between steps."""


def mark_grown_by_cat(recompiles: list[DynamoRecompile], explanation) -> None:
    """Give the size recompilations of each guarded tensor whose size only grew the fact ``grown_by_cat`` when the
    XLA story of the same run names a tensor grown by concatenation."""
    if not any(c.fix_rule in GROWN_BY_CAT_ROWS for x in explanation.recompilations for c in x.causes):
        return
    groups: dict[tuple[str, str], list[tuple[DynamoRecompile, int, int]]] = {}
    for r in recompiles:
        m = _SIZE.search(r.guard.guard) if r.kind == "shape" else None
        if m is not None:
            groups.setdefault((m.group("name"), m.group("dim")), []).append(
                (r, int(m.group("expected")), int(m.group("actual"))))
    for members in groups.values():
        if all(b > a for _, a, b in members):
            for r, _, _ in members:
                r.facts = (r.facts - {"last_call"}) | {"grown_by_cat"}
