"""Whether a module's attribute is set once per instance: assigned in ``__init__`` and nowhere else in the file.

Dynamo guards an int attribute of an ``nn.Module`` by value. Read in a forward shared by many instances (six blocks
of one class, each with its own ``self.layer_idx``), it gives one trace per instance, not per step: the value never
changes on one instance, it differs between instances (round 19, r19_d_layer_idx_attr). Dynamo's log cannot tell
that from a value annealed over the steps (``model.temperature = t`` in the loop); the source can: an attribute
the file only ever assigns inside ``__init__`` is fixed per instance.
"""

from __future__ import annotations

import ast

from hlodiff.dumps.python_source import parse_file


def set_only_in_init(file: str, attribute: str) -> bool:
    """True when ``file`` (on disk, where ``--source-map`` says) assigns ``<anything>.<attribute>`` at least once,
    and only inside ``__init__`` methods; False when the file is not there, assigns it elsewhere (a loop's
    ``blk.scale = s``, ``self.step += 1`` in forward) or sets it by name (``setattr(m, "scale", s)``)."""
    return set_only_in_init_across([file], attribute)


def set_only_in_init_across(files: list[str], attribute: str) -> bool:
    """As :func:`set_only_in_init` over several of the user's files, the first the one the question came from (it
    must be on disk): assigned at least once in them, and in none outside an ``__init__`` (tenth stop,
    t10_d_trainer_sets_attr: the model's file sets ``self.temperature`` only in ``__init__``, the trainer's file
    anneals ``model.temperature`` every epoch). A file not on disk beyond the first is not read."""
    if not files or not attribute:
        return False
    found = False
    for n, file in enumerate(files):
        tree = parse_file(file)
        if tree is None:
            if n == 0:
                return False
            continue
        assigned, outside = _assignments(tree, attribute)
        if outside:
            return False
        found = found or assigned
    return found


def _assignments(tree: ast.Module, attribute: str) -> tuple[bool, bool]:
    """(assigned at all, assigned outside ``__init__`` or by ``setattr``) in one module."""
    in_init = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
               and f.name == "__init__" for n in ast.walk(f)}
    assigned = [t for t in _targets(tree) if isinstance(t, ast.Attribute) and t.attr == attribute]
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
           and len(n.args) > 1 and isinstance(n.args[1], ast.Constant) and n.args[1].value == attribute
           for n in ast.walk(tree)):
        return bool(assigned), True
    return bool(assigned), any(id(t) not in in_init for t in assigned)


def _targets(tree: ast.Module):
    """Every expression assigned to (``=``, ``+=``, annotated, a ``for`` target), tuples unpacked."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            found = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            found = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            found = [node.optional_vars]
        else:
            continue
        while found:
            t = found.pop()
            if isinstance(t, (ast.Tuple, ast.List)):
                found.extend(t.elts)
            elif isinstance(t, ast.Starred):
                found.append(t.value)
            else:
                yield t
