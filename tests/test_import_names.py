"""Every name a module of hlodiff imports from hlodiff exists where it is imported from.

A module split by one branch and a use of its old home added by another merge cleanly and fail only when the
import runs; a lazy import inside a function (``from hlodiff.explain.patterns import sequence_text`` under
``if dynamo:``) then fails on the user's run, not at start-up. That is how every torch.compile report once crashed
with exit 3 for 14 minutes of main's history (docs/accuracy.md, eighth stop). This reads every ``from hlodiff... import``
in the package, lazy ones included, and checks each name."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import hlodiff

PACKAGE = Path(hlodiff.__file__).parent
OPTIONAL = ("hlodiff.capture",)  # runs user programs; imported only when used (torch_xla, JAX)


def _imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hlodiff") \
                    and not node.module.startswith(OPTIONAL):
                for alias in node.names:
                    if alias.name != "*":
                        yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", node.module, alias.name


def test_every_imported_name_exists_where_it_is_imported_from():
    missing = []
    for where, module_name, name in _imports():
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            continue
        try:
            importlib.import_module(f"{module_name}.{name}")  # a submodule imported by name
        except ImportError:
            missing.append(f"{where}: {name} is not in {module_name}")
    assert not missing, "\n".join(missing)


def test_the_scan_sees_lazy_imports_inside_functions():
    # explanation imports graph_steps inside a function: the scan must reach it, or it proves nothing
    assert any(where.startswith("hlodiff/explain/explanation.py") and name == "graph_steps"
               for where, _, name in _imports())
