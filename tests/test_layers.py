"""Layers one way: everything read from disk is read in ``dumps/`` (docs/design.md, "Evidence in, story out").

``graph/``, ``diff/``, ``explain/``, ``cost/`` and ``render/`` take evidence (a :class:`hlodiff.dumps.evidence.Run`,
a :class:`hlodiff.dumps.cost_evidence.CostRun`, the lines of :class:`hlodiff.dumps.page_source.SourceText`) and
open no file: the entry layer (``api.py``, ``jobs.py``, ``live_run.py``) reads through ``dumps/`` and hands the
evidence down. A scan of their source with ``ast``: no ``open``, no file-system query (``os.stat``,
``os.scandir``, ``Path.read_text``, ...), no reader function or module of ``dumps/`` imported (its types and
constants are the evidence, and a few pure helpers named below), nothing from ``capture/``. An offender is listed
as ``file:line: what``; ``ALLOWED`` names what may stay, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import hlodiff

PACKAGE = Path(hlodiff.__file__).parent
LAYERS = ("graph", "diff", "explain", "cost", "render")
MODULES = sorted(p for layer in LAYERS for p in PACKAGE.joinpath(layer).rglob("*.py"))

PURE = {
    ("hlodiff.dumps", "split_ref"): "splits PATH#N into its parts, reads nothing",
    ("hlodiff.dumps.compile_times", "compile_seconds"): "joins compile times already read to records already read",
    ("hlodiff.dumps.report_alignment", "shape_key"): "normalizes a shape's text, reads nothing",
    ("hlodiff.dumps.jax_log", "join_modules"): "joins a JAX log already read to the dumped modules' names",
    ("hlodiff.dumps.cached_run", "compiled_modules"): "groups a read run's records by module name",
    ("hlodiff.dumps.cached_run", "nth_module"): "a lookup in the dict compiled_modules returned",
}
"""Functions of ``dumps/`` the layers above may call: each works on evidence already read, and says why here."""

ALLOWED = {
    "hlodiff/render/write.py": "writes the user's output file (--html, --model-explorer-out) atomically, and first "
                               "looks at the paths it would write over (a folder, a FIFO, one of the run's inputs): "
                               "writing is the renderer's job",
}
"""Files that may touch the disk, and why (each must still need it: see the last test)."""

FILE_SYSTEM = {"isfile", "isdir", "exists", "lexists", "getsize", "getmtime", "listdir", "scandir", "walk", "stat",
               "lstat", "glob", "iglob", "open", "copyfile", "copy", "copytree"}
"""Functions of ``os``, ``os.path``, ``glob``, ``io`` and ``shutil`` that look at the disk (``abspath``,
``dirname``, ``join`` only spell paths)."""

READING_METHODS = {"read_text", "read_bytes", "iterdir", "rglob", "glob", "open", "scandir", "stat", "is_file",
                   "is_dir", "exists", "is_symlink", "samefile"}
"""Methods of ``pathlib.Path`` (and of any object) that read the disk."""

READING_MODULES = {"subprocess", "linecache", "pickle", "shelve", "sqlite3", "tarfile", "zipfile"}
"""Modules whose import alone means a reader or another program's output (``subprocess`` runs a tool and reads what
it prints; ``linecache`` reads a source file; the rest open archives and stores): evidence is read in ``dumps/``."""

LOADERS = {("json", "load"), ("np", "load"), ("numpy", "load"), ("torch", "load"), ("os", "system"),
           ("os", "popen")}
"""Calls that read a file handed to them, or run a program, without ``open`` in sight."""


def problems(path: Path) -> list[str]:
    """Each disk access and reader import in the module at ``path``, as ``file:line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(PACKAGE.parent).as_posix()}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "open":
                found.append(f"{where}: open()")
            elif isinstance(func, ast.Attribute):
                owner = ast.unparse(func.value)
                if func.attr in FILE_SYSTEM and owner in ("os", "os.path", "glob", "shutil", "io"):
                    found.append(f"{where}: {owner}.{func.attr}()")
                elif (owner, func.attr) in LOADERS:
                    found.append(f"{where}: {owner}.{func.attr}()")
                elif func.attr in READING_METHODS and owner not in ("os", "os.path", "glob", "shutil", "io"):
                    found.append(f"{where}: .{func.attr}()")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(("hlodiff.dumps", "hlodiff.capture")):
                    found.append(f"{where}: import {alias.name} (a module: its readers come with it)")
                elif alias.name.split(".")[0] in READING_MODULES:
                    found.append(f"{where}: import {alias.name} (reads files or runs programs)")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in READING_MODULES:
                found.append(f"{where}: from {node.module} import ... (reads files or runs programs)")
            elif node.module.startswith("hlodiff.capture"):
                found.append(f"{where}: from {node.module} import ... (capture/ is not evidence)")
            elif node.module == "hlodiff":
                found += [f"{where}: from hlodiff import {a.name} (a module: its readers come with it)"
                          for a in node.names if a.name in ("dumps", "capture")]
            elif node.module == "hlodiff.dumps" or node.module.startswith("hlodiff.dumps."):
                found += [f"{where}: {why}" for alias in node.names
                          if (why := _not_evidence(node.module, alias.name)) is not None]
    return sorted(found, key=lambda p: int(p.split(":")[1]))


def _not_evidence(module: str, name: str) -> str | None:
    """Why importing ``name`` from ``module`` is more than a type or constant of the evidence (None: it is one)."""
    if (module, name) in PURE:
        return None
    value = getattr(importlib.import_module(module), name)
    if inspect.ismodule(value):
        return f"from {module} import {name} (a module: its readers come with it)"
    if inspect.isclass(value) or not callable(value):
        return None
    return f"from {module} import {name} (a function of dumps/: reads, or is not a type)"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layer_module_reads_no_file(path):
    if path.relative_to(PACKAGE.parent).as_posix() in ALLOWED:
        pytest.skip(ALLOWED[path.relative_to(PACKAGE.parent).as_posix()])
    assert problems(path) == []


def test_the_scan_sees_what_a_reader_looks_like(tmp_path):
    """The scan itself refuses each kind of reader (a scan that finds nothing would pass anything)."""
    bad = tmp_path / "reads_files.py"
    bad.write_text("import os\nfrom pathlib import Path\nfrom hlodiff.dumps import iter_graphs, split_ref\n"
                   "from hlodiff.dumps.evidence import Run, read_run\nfrom hlodiff.dumps.graph_record import "
                   "TRACED_KINDS\nimport hlodiff.dumps.xla_memory\nfrom hlodiff import dumps\n"
                   "def f(p):\n    os.path.isfile(p)\n    os.stat(p)\n    Path(p).read_text()\n"
                   "    list(os.scandir(p))\n    Path(p).stat()\n    return open(p)\n"
                   "import subprocess\nfrom linecache import getline\nimport json\n"
                   "def g(p, f):\n    Path(p).exists()\n    list(Path(p).glob('*.hlo'))\n    json.load(f)\n"
                   "    json.loads(p)\n    subprocess.run(['ls'])\n")
    global PACKAGE
    package, PACKAGE = PACKAGE, tmp_path / "hlodiff"
    try:
        found = [p.split(": ", 1)[1] for p in problems(bad)]
    finally:
        PACKAGE = package
    assert [f.split(" ")[0] for f in found] == ["from", "from", "import", "from", "os.path.isfile()", "os.stat()",
                                              ".read_text()", "os.scandir()", ".stat()", "open()", "import",
                                              "from", ".exists()", ".glob()", "json.load()"], found
    assert "iter_graphs" in found[0] and "read_run" in found[1] and "xla_memory" in found[2]
    assert "subprocess" in found[10] and "linecache" in found[11]  # json.loads reads no file
    assert not any("split_ref" in f or "TRACED_KINDS" in f or "import Run " in f for f in found)


def test_every_exception_is_still_needed():
    """An entry of ``ALLOWED`` whose file no longer touches the disk goes."""
    for name in ALLOWED:
        assert problems(PACKAGE.parent / name), f"{name} reads nothing now: drop it from ALLOWED"


def test_a_run_s_cost_is_computed_from_its_evidence_with_no_file_opened():
    """The cost layer on evidence alone: pipeline/mb2's graphs copied into memory with the side evidence read from
    its folder (torch_xla's figures from the PT_XLA_DEBUG log, compile times from metrics.txt) cost what the run
    on disk costs, with opening a file refused while they are costed."""
    import dataclasses

    from conftest import FIXTURES
    from test_evidence import in_memory, no_files

    from hlodiff.cost.run import run_cost
    from hlodiff.dumps.cost_evidence import read_cost_run, side_inputs

    folder = FIXTURES / "torch_xla" / "pipeline" / "mb2"
    dumps, logs, _, pt_logs = side_inputs([str(folder)], [], None)
    on_disk = read_cost_run(dumps, [], compile_logs=logs, debug_logs=pt_logs)  # no reports: aligning them reads
    in_memory_run = dataclasses.replace(on_disk, records=in_memory(folder / "graphs.hlo.0"))
    with no_files():
        from_memory = run_cost(in_memory_run, [])
    from_disk = run_cost(on_disk, [])

    def figures(run):
        return [(g.index, g.compiled, g.peak_source, g.peak_bytes, g.compile_seconds) for g in run.graphs]

    assert figures(from_memory) == figures(from_disk)
    assert {g.peak_source for g in from_memory.graphs} == {"torch_xla"}  # the log's figures were evidence
    assert from_memory.compile_seconds == from_disk.compile_seconds is not None


LAYER_PACKAGES = ("hlo", "dumps", "graph", "diff", "explain", "cost", "render", "capture", "testing")
"""Every folder of hlodiff: inside each, its modules import one another one way."""


def import_cycles(package: Path, prefix: str) -> list[list[str]]:
    """The import cycles among the modules under ``package`` (dotted ``prefix``), each as the modules around it.

    Every ``import`` counts wherever it sits: at the top, inside a function (a lazy import only hides a cycle from
    the interpreter, not from a reader) or under ``TYPE_CHECKING``. A package's ``__init__`` is left out: it is
    the layer's front door, re-exporting names from below, not a module of its own."""
    import networkx as nx

    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        modules[".".join((prefix,) + parts)] = path
    graph = nx.DiGraph()
    for name, path in modules.items():
        if path.name == "__init__.py":
            continue
        here = name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(here[:len(here) - node.level + 1] + [node.module or ""]) if node.level \
                    else node.module
                base = base.rstrip(".")
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets
                                 if t in modules and t != name and modules[t].name != "__init__.py")
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


@pytest.mark.parametrize("layer", LAYER_PACKAGES)
def test_a_layer_s_modules_import_one_another_one_way(layer):
    """docs/design.md's layers go one way, and so do the modules inside each: a cycle (explain/'s thirteen modules,
    families -> dynamo_bridge -> pattern_words -> patterns -> cuts -> explanation -> families) means a fact sits
    above what reads it, and every module on it loads, and changes, with all the others."""
    assert import_cycles(PACKAGE / layer, f"hlodiff.{layer}") == []


def test_the_cycle_scan_sees_lazy_and_type_only_imports(tmp_path):
    """A cycle closed by an import inside a function, or under TYPE_CHECKING, is still found (a scan of top-level
    imports alone would pass explain/ as it was)."""
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "__init__.py").write_text("from .low import fact\n")
    (layer / "low.py").write_text("def fact():\n    from hlodiff.layer.high import story\n    return story\n")
    (layer / "high.py").write_text("from .low import fact\nstory = fact\n")
    (layer / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import words\n")
    (layer / "words.py").write_text("from .typed import TYPE_CHECKING\n")
    (layer / "alone.py").write_text("from . import low\n")
    assert sorted(import_cycles(layer, "hlodiff.layer")) == [["hlodiff.layer.high", "hlodiff.layer.low"],
                                                             ["hlodiff.layer.typed", "hlodiff.layer.words"]]
