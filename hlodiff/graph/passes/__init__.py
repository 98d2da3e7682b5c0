"""Normalization passes, run in this order. Each is one small module with ``run(cm) -> PassReport | None``.

Passes that rewrite the graph (dead code, tuple plumbing) come first; the others decide what the fingerprint
compares (names, parameter numbers, metadata, layouts) and report what that makes hlodiff ignore.
"""

from __future__ import annotations

from hlodiff.graph.passes import dead_code, layouts, metadata, names, parameter_order, tuple_plumbing

ORDER = (
    ("dead_code", dead_code.run),
    ("tuple_plumbing", tuple_plumbing.run),
    ("parameter_order", parameter_order.run),
    ("names", names.run),
    ("metadata", metadata.run),
    ("layouts", layouts.run),
)
