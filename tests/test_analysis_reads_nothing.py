"""The analysis reads no files (issue 37): ``explain/`` and ``diff/`` take a run's evidence
(:class:`hlodiff.dumps.evidence.Run`) and open nothing, so every analysis can run on evidence built in memory and a
fact's origin is one layer down.

A scan of their source: no ``open``, no file-system query (``os.path.isfile``, ``os.listdir``, ...), no
``Path.read_text``; from ``dumps/`` only the evidence's types (classes and constants) and a few pure helpers named
below, never a reader function; nothing from ``capture/``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import hlodiff

PACKAGE = Path(hlodiff.__file__).parent
ANALYSIS = sorted([*PACKAGE.joinpath("explain").rglob("*.py"), *PACKAGE.joinpath("diff").rglob("*.py")])

PURE = {
    ("hlodiff.dumps.report_alignment", "shape_key"): "normalizes a shape's text, reads nothing",
    ("hlodiff.dumps.cached_run", "compiled_modules"): "groups a read run's records by module name",
    ("hlodiff.dumps.cached_run", "nth_module"): "a lookup in the dict compiled_modules returned",
}
"""Functions of ``dumps/`` the analysis may call: each works on evidence already read, and says why here."""

FILE_SYSTEM = {"isfile", "isdir", "exists", "lexists", "getsize", "getmtime", "listdir", "scandir", "walk", "stat",
               "lstat", "glob", "iglob"}
"""``os``/``os.path``/``glob`` functions that look at the disk (``abspath``, ``dirname``, ``join`` only spell paths)."""

READING_METHODS = {"read_text", "read_bytes", "iterdir", "rglob", "open"}


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "open":
                found.append(f"{where}: open()")
            elif isinstance(func, ast.Attribute):
                owner = ast.unparse(func.value)
                if func.attr in FILE_SYSTEM and owner in ("os", "os.path", "glob", "shutil"):
                    found.append(f"{where}: {owner}.{func.attr}()")
                elif func.attr in READING_METHODS:
                    found.append(f"{where}: .{func.attr}()")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(("hlodiff.dumps.", "hlodiff.capture")) or alias.name == "hlodiff.dumps":
                    found.append(f"{where}: import {alias.name} (a reader module)")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("hlodiff.capture"):
                found.append(f"{where}: from {node.module} import ... (capture/ is not evidence)")
            elif node.module == "hlodiff.dumps" or node.module.startswith("hlodiff.dumps."):
                found += [f"{where}: {why}" for alias in node.names
                          if (why := _not_a_type(node.module, alias.name)) is not None]
    return found


def _not_a_type(module: str, name: str) -> str | None:
    """Why importing ``name`` from ``module`` is more than a type of the evidence (None: it is a type)."""
    if (module, name) in PURE:
        return None
    value = getattr(importlib.import_module(module), name)
    if inspect.ismodule(value):
        return f"from {module} import {name} (a module: its readers come with it)"
    if inspect.isclass(value) or not callable(value):
        return None  # a type or a constant of the evidence
    return f"from {module} import {name} (a function of dumps/: reads, or is not a type)"


@pytest.mark.parametrize("path", ANALYSIS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_analysis_module_reads_no_file(path):
    assert _problems(path) == []


def test_the_scan_sees_what_a_reader_looks_like():
    """The scan itself: the readers it must refuse are refused (a scan that finds nothing would pass anything)."""
    bad = PACKAGE.parent / "tests" / "data" / "_reads_files_example.py"
    text = ("import os\nfrom pathlib import Path\nfrom hlodiff.dumps import iter_graphs\n"
            "from hlodiff.dumps.evidence import Run, read_run\nfrom hlodiff.dumps.graph_record import TRACED_KINDS\n"
            "def f(p):\n    os.path.isfile(p)\n    Path(p).read_text()\n    return open(p)\n")
    bad.write_text(text)
    try:
        problems = _problems(bad)
    finally:
        bad.unlink()
    assert [p.split(": ", 1)[1].split(" ")[0] for p in problems] == \
        ["from", "from", "os.path.isfile()", ".read_text()", "open()"], problems
    assert "iter_graphs" in problems[0] and "read_run" in problems[1]
