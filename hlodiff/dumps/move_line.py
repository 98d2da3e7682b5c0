"""Whether a user's line only moves a value between host and device, or computes something on the way.

The cost's round trip (:mod:`hlodiff.cost.round_trips`) sees a value read at a line and a tensor of its shape
uploaded at the same line; that is all the reports show. ``h = torch.from_numpy(h.detach().cpu().numpy()).to(dev)``
only moves it (``.detach()`` on the device gives the next graph the same values), but REINFORCE's returns,
``torch.from_numpy(lfilter(..., rew.cpu().numpy())).to(dev)``, compute new values on the host on the same line
(the last read of the twelfth stop): ``.detach()`` would hand on the rewards, not the returns. The line's text is
the evidence: an assignment whose value is a chain of the move calls alone, nothing else (no other call, no index,
no arithmetic).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present

MOVE_CALLS = frozenset({"detach", "cpu", "numpy", "from_numpy", "tensor", "as_tensor", "to", "clone"})
"""Calls that only move or copy a tensor's values (``torch.tensor`` and ``as_tensor`` as well as the methods)."""

_PLAIN = (ast.Name, ast.Constant, ast.keyword, ast.Load)


def moves_only(file: str, line: int | None) -> bool | None:
    """True when the statement at ``file:line`` assigns (or returns) a value made by move calls alone, False when
    it does anything else on the way, None when the file is not at hand or no such statement starts there."""
    tree = tree_if_present(file) if line is not None else None
    if tree is None:
        return None
    stmt = next((n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr))
                 and n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    if stmt is None or stmt.value is None:
        return None
    return _only_moves(stmt.value)


def _only_moves(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in MOVE_CALLS:
            return False
        receiver_ok = not isinstance(func, ast.Attribute) or _only_moves(func.value)
        return receiver_ok and all(_only_moves(a) for a in node.args) and all(
            _plain(k.value) for k in node.keywords)
    return _plain(node)


def _plain(node: ast.AST) -> bool:
    """A name, a constant or a dotted name (``dev``, ``torch``, ``"cpu"``, ``torch.float32``): passes no work."""
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Call):
        return _only_moves(node)
    return isinstance(node, (ast.Name, ast.Constant))
