"""Whether a source line splits a tensor into pieces (``xb.chunk(4)``, ``torch.tensor_split(x, 4)``,
``x.split(8)``): the pieces are unequal whenever the size is not a multiple (30 rows in 4 chunks: 8, 8, 8, 6), so a
compiled function called on each piece sees a short one every time the line runs -- not an epoch's last batch,
which ``drop_last`` answers (Dynamo round 31, d31_accum_chunk_uneven: gradient accumulation by micro-batches).

Read from the user's file when it is on disk (never required: without it the answer is False and the fix stays the
general one).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present

SPLITTERS = frozenset({"chunk", "tensor_split", "split"})
"""torch's calls that cut a tensor into pieces along a dim: ``chunk`` (the piece size rounded up), ``tensor_split``
(sizes differing by one) and ``split`` (pieces of a given size, the last one the remainder)."""


def splits_into_pieces(file: str, line: int | None) -> bool:
    """Whether a call starting on ``file:line`` is one of :data:`SPLITTERS` (as a method, ``xb.chunk(4)``, or a
    function, ``torch.chunk(xb, 4)``) with a count or size, not a list of sizes (``torch.split(h, [3, 5])`` sets
    each piece's size: d11_split_lengths)."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == line and _splitter(node):
            return True
    return False


def _splitter(call: ast.Call) -> bool:
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name not in SPLITTERS:
        return False
    method = isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id == "torch")
    args = call.args if method else call.args[1:]
    size = args[0] if args else next((k.value for k in call.keywords
                                      if k.arg in ("chunks", "split_size_or_sections", "sections",
                                                   "indices_or_sections")), None)
    return size is not None and not isinstance(size, (ast.List, ast.Tuple))
