"""The user's own Python files around a line: the files a capture names outside libraries, and the modules those
import from their own folder (``from trainer import fit`` beside ``model.py``).

A question about a name the user's code sets (is a module's attribute assigned anywhere but ``__init__``?) must read
every file of the project that may set it -- a trainer module sets ``model.temperature`` as often as the model's own
file does -- and nothing else: an installed package is not the user's, and a folder of unrelated scripts is not read
whole (only modules imported by name from a file already known to be the user's).
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from hlodiff.dumps.python_source import parse_file
from hlodiff.dumps.source_paths import on_disk


def user_modules(files: list[str]) -> list[str]:
    """``files`` (paths as the capture recorded them) and, after them, the modules each imports that sit in its own
    folder or a package below it, once each, in order; one level of imports (what the files named import)."""
    seen: dict[str, None] = dict.fromkeys(f for f in files if f)
    for file in list(seen):
        tree = parse_file(file)
        if tree is None:
            continue
        for name in _imported(tree):
            local = _beside(file, name)
            if local is not None:
                seen.setdefault(local)
    return list(seen)


def _imported(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level <= 1:
            names.append(node.module)
    return names


def _beside(file: str, module: str) -> str | None:
    """``module`` as a file in ``file``'s folder (``a.b`` -> ``a/b.py`` or ``a/b/__init__.py``), when it is there
    (where ``--source-map`` says the recorded folder is now); None for anything installed elsewhere."""
    folder = PurePosixPath(file).parent
    for candidate in (folder.joinpath(*module.split(".")).with_suffix(".py"),
                      folder.joinpath(*module.split("."), "__init__.py")):
        try:
            if on_disk(str(candidate)):
                return str(candidate)
        except (OSError, ValueError):
            return None
    return None
