"""User code or library code? Decided by where a file is *installed*, never by what a folder is called.

A frame is library code when its file lies

* under a ``site-packages`` or ``dist-packages`` folder (pip, conda, Debian: where every installed distribution
  lives — torch, torch_xla, jax, flax alike),
* in the interpreter's standard library (``.../lib/pythonX.Y/`` itself, not a project under it),
* is synthetic (``<frozen importlib._bootstrap>``, ``<string>``),
* ends in a module path of a known ML distribution (``.../pytorch/torch/nn/functional.py`` of a source checkout,
  ``.../src/jax/jax/_src/api.py`` of an editable install): :mod:`hlodiff.hlo.library_modules`, or
* under a root recorded at capture time: ``sys.prefix`` and the stdlib/site-packages paths of the interpreter that
  ran the program, and the folders of installed distributions (an editable install of a library outside
  ``site-packages``). ``hlodiff record`` writes them into its manifest (``library_roots``);
  :func:`add_library_roots` takes them when a run is read. The interpreter running hlodiff adds its own roots
  too, which matter when the dump was captured on this machine.

A user project folder named ``jax`` or ``torch`` (``/home/user/project/jax/train.py``) is user code: a path
component that happens to be named like a package says nothing about where the file is installed, and
``jax/train.py`` is no module of jax. A bare or
relative file name (an IR ``location=`` tag keeps only ``train.py``) is user code too.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
from typing import Callable, Iterable

from hlodiff.hlo.library_modules import module_path_in, set_installed_lister

_INSTALL_DIRS = ("site-packages", "dist-packages")
_STDLIB_RE = re.compile(r"(^|/)lib(64)?/python\d+(\.\d+)?t?/[^/]+$|(^|/)lib(64)?/python\d+(\.\d+)?t?/"
                        r"(?!site-packages/|dist-packages/)[^/]+/")
_GENERIC_PREFIXES = {"/", "/usr", "/usr/local"}
"""System prefixes too broad to be a library root: applications live under /usr/src or /usr/local/app too."""

_roots: set[str] = set()


def add_library_roots(roots: Iterable[str]) -> None:
    """Folders whose files are library code (from a capture manifest)."""
    added = {_norm(r) for r in roots if r and _norm(r) not in _GENERIC_PREFIXES}
    if not added <= _roots:
        _roots.update(added)
        is_library_path.cache_clear()


def library_roots() -> list[str]:
    return sorted(_roots)


def local_roots() -> list[str]:
    """The roots of the interpreter running this code (what ``hlodiff record`` records for the program it runs)."""
    paths = sysconfig.get_paths()
    roots = [paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    roots += [sys.prefix, sys.base_prefix, sys.exec_prefix]
    return sorted({_norm(r) for r in roots if r and _norm(r) not in _GENERIC_PREFIXES})


def list_installed_with(lister: Callable[[], list[str]]) -> None:
    """Who lists the module paths of the distributions installed where hlodiff runs: reading the disk is the
    dumps layer's (:func:`hlodiff.dumps.installed_modules.installed_module_paths`, given when ``hlodiff.dumps`` is
    imported); it is asked lazily, at the first lookup, as before. Every answer built on the old lists is
    forgotten: :mod:`hlodiff.hlo.library_modules`' and :func:`is_library_path`'s."""
    set_installed_lister(lister)
    is_library_path.cache_clear()


@functools.lru_cache(maxsize=65536)
def is_library_path(file: str) -> bool:
    """Whether ``file`` (as a frame prints it) is installed library code; see the module docstring."""
    if not file:
        return False
    if file.startswith("<"):
        return True
    path = _norm(file)
    parts = path.split("/")
    if any(part in _INSTALL_DIRS for part in parts[:-1]):
        return True
    if _STDLIB_RE.search(path):
        return True
    if module_path_in(parts) is not None:
        return True
    return any(path == root or path.startswith(root + "/") for root in _roots)


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    if len(path) > 1:
        path = path.rstrip("/")
    return os.path.normpath(path).replace("\\", "/") if path.startswith("/") else path


add_library_roots(local_roots())


def package_path(file: str) -> str:
    """``/usr/lib/python3.11/site-packages/torch/optim/adamw.py`` -> ``torch/optim/adamw.py``."""
    path = file.replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return "/".join(path.rsplit("/", 3)[-3:])
