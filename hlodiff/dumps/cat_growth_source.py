"""Where the program grows a tensor by concatenating it with more of itself in a loop (``queue = torch.cat([k,
queue])[:K]``, ``self.bank = torch.cat([self.bank, z])``): the line a name or attribute is rebound to a
concatenation that includes it. A compiled function that reads such a tensor sees a new size on every iteration
until it stops growing (Dynamo round 31, d31_queue_grow: Dynamo's log names ``self.queue``, never the cat, which
runs outside the compiled function).

Read from the user's file when it is on disk (never required: without it the answer is None).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import GROWING_CALLS, tree_if_present


def grown_by_cat(file: str, name: str) -> int | None:
    """The first line in ``file`` where ``name`` (a variable, or an attribute by its last part: ``queue`` for
    ``net.queue`` and ``self.queue``) is rebound, inside a loop, to a concatenation with itself among its inputs;
    None when there is none or the file is not on disk."""
    tree = tree_if_present(file)
    if tree is None or not name:
        return None
    lines = [node.lineno for loop in ast.walk(tree) if isinstance(loop, (ast.For, ast.While, ast.AsyncFor))
             for node in ast.walk(loop) if isinstance(node, ast.Assign) and _grows(node, name)]
    return min(lines) if lines else None


def _grows(node: ast.Assign, name: str) -> bool:
    if len(node.targets) != 1 or _last_part(node.targets[0]) != name:
        return False
    for call in ast.walk(node.value):
        if isinstance(call, ast.Call) and _called(call) in GROWING_CALLS and any(
                _last_part(n) == name for a in call.args for n in ast.walk(a)):
            return True
    return False


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _last_part(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
