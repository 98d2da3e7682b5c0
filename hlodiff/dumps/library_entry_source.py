"""The lines where the user's file enters a library object: calls of an instance of a class (``rnn(x, h)`` after
``rnn = torch.nn.GRU(...)``), of its methods (``opt.step()`` after ``opt = torch.optim.RAdam(...)``), or of a helper
given the instance (``xm.optimizer_step(opt)``), or of a library function by name (``clip_grad_norm_(...)``).

An HLO text dump keeps one frame per instruction, the innermost: ops a library makes on the user's behalf (an
optimizer's state, a GRU's zero state, an adaptive softmax's clusters) name only the library's file. The user's file,
when on disk, shows where it called into that library (:mod:`hlodiff.explain.library_call_lines`).
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import tree_if_present


def library_entry_calls(file: str, classes: tuple[str, ...], methods: tuple[str, ...], helpers: tuple[str, ...],
                        functions: tuple[str, ...]) -> list[int] | None:
    """Lines of ``file`` that call an instance bound to one of ``classes`` (``""`` in ``methods``: the instance
    itself; else those methods of it), pass it to one of ``helpers``, or call one of ``functions`` by name; in line
    order. None when the file is not on disk."""
    tree = tree_if_present(file)
    if tree is None:
        return None
    bound = _instances(tree, classes)
    found: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if "" in methods and ast.unparse(func) in bound:
            found.add(node.lineno)
        elif isinstance(func, ast.Attribute) and func.attr in methods and ast.unparse(func.value) in bound:
            found.add(node.lineno)
        elif last in helpers and any(ast.unparse(a) in bound for a in node.args):
            found.add(node.lineno)
        elif last in functions:
            found.add(node.lineno)
    return sorted(found)


def _instances(tree: ast.Module, classes: tuple[str, ...]) -> set[str]:
    """Names and attributes (``opt``, ``self.rnn``) bound to a call of one of ``classes``
    (``torch.optim.RAdam(...)``, ``GRU(...)``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call)):
            continue
        if any(_called_name(c) in classes for c in _chain(node.value)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(ast.unparse(t) for t in targets if isinstance(t, (ast.Name, ast.Attribute)))
    return names


def _chain(call: ast.Call) -> list[ast.Call]:
    """``torch.nn.GRU(H, H).to(dev)``: the calls of a method chain, outermost first (the class is called inside)."""
    calls = [call]
    while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        call = call.func.value
        calls.append(call)
    return calls


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
