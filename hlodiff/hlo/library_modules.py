"""Library code by package layout: a file whose path *ends* in a module path of a known ML distribution
(``torch/nn/functional.py``, ``torch_xla/core/xla_model.py``, ``jax/_src/api.py``) is that library's code, wherever
it lies: site-packages, an editable install, or a source checkout (``/home/u/pytorch/torch/nn/functional.py``).

A user's folder named like a package stays user code: ``project/jax/train.py`` ends in ``jax/train.py``, which is
no module of jax. Only module paths inside a package folder count (``torch/_ops.py``, not a top-level ``six.py``).

The module lists come from two places, merged:

* the file lists (``RECORD``) of those distributions installed where hlodiff runs, in a version the shipped list
  lacks (nothing imported), read by :mod:`hlodiff.dumps.installed_modules` (the layer that reads the disk) and
  handed here through :func:`hlodiff.hlo.installed.list_installed_with`,
* ``library_modules.txt.gz`` beside this file, for when they are not installed here (the dump usually comes from
  another machine). ``fixtures/library_modules/gen_library_modules.py`` writes it; its header names each distribution's version and
  source.
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Callable
from pathlib import Path

DISTRIBUTIONS = ("torch", "torch_xla", "jax", "jaxlib", "flax", "optax", "transformers", "torch_neuronx",
                 "neuronx_distributed")
"""The distributions whose module paths are known (shipped list and installed file lists)."""

DATA_FILE = Path(__file__).with_name("library_modules.txt.gz")


@functools.lru_cache(maxsize=1)
def module_paths() -> frozenset[str]:
    """Every known module path, ``pkg/sub/mod.py``."""
    paths = set(_shipped())
    paths.update(_installed())
    return frozenset(paths)


@functools.lru_cache(maxsize=1)
def top_level_names() -> frozenset[str]:
    """The package folders module paths start with (``torch``, ``functorch``, ``torch_xla``, ``jax``, ...).

    Builds the folder index :func:`module_path_in` reads (so clearing this cache rebuilds both)."""
    global _folders
    _folders = _by_folder()
    _split.clear()
    return frozenset(folder.split("/", 1)[0] for folder in _folders)


def module_path_in(parts: list[str]) -> str | None:
    """The known module path a split file path ends in (``[..., 'torch', 'nn', 'functional.py']`` ->
    ``torch/nn/functional.py``), else None. The match starts at a package folder's name and runs to the end.

    Looked up by folder (:func:`_by_folder`): a report asks this for a handful of frames, and building the 6,000
    module paths of :func:`module_paths` for that cost more than the rest of a start-up's library-code checks."""
    if len(parts) < 2 or not parts[-1].endswith(".py"):
        return None
    tops = top_level_names()
    folders = _folders
    stem = parts[-1][:-3]
    for i in range(len(parts) - 1):
        if parts[i] in tops:
            folder = "/".join(parts[i:-1])
            names = folders.get(folder)
            if names is not None and stem in _names_of(folder, names):
                return f"{folder}/{parts[-1]}"
    return None


def _by_folder() -> dict[str, str | frozenset[str]]:
    """``{folder: its module names}`` of every known module path (``torch/nn`` -> ``functional`` ...): the shipped
    file's lines as they are (the names one space-separated string, split on first use by :func:`_names_of`), the
    installed file lists' paths merged in as sets."""
    folders: dict[str, str | frozenset[str]] = {}
    extra: dict[str, set[str]] = {}
    for line in _lines():
        if line.startswith("#") or "\t" not in line:
            continue
        folder, names = line.split("\t", 1)
        if "/" in names or folder in folders:  # not one flat folder's names: merged path by path
            for name in names.split(" "):
                path_folder, _, stem = f"{folder}/{name}".rpartition("/")
                extra.setdefault(path_folder, set()).add(stem)
            continue
        folders[folder] = names
    for path in _installed():
        path_folder, _, file = path.rpartition("/")
        extra.setdefault(path_folder, set()).add(file[:-3])
    for folder, stems in extra.items():
        known = folders.get(folder)
        if known is not None:
            stems.update(known.split(" ") if isinstance(known, str) else known)
        folders[folder] = frozenset(stems)
    return folders


_folders: dict[str, str | frozenset[str]] = {}
_split: dict[str, frozenset[str]] = {}


def _names_of(folder: str, names: str | frozenset[str]) -> frozenset[str]:
    if not isinstance(names, str):
        return names
    found = _split.get(folder)
    if found is None:
        found = _split[folder] = frozenset(names.split(" "))
    return found


@functools.lru_cache(maxsize=1)
def _tails() -> frozenset[str]:
    """The endings of two parts or more of every known module path (``nn/modules/dropout.py`` of
    ``torch/nn/modules/dropout.py``)."""
    tails = set()
    for path in module_paths():
        parts = path.split("/")
        tails.update("/".join(parts[i:]) for i in range(1, len(parts) - 1))
    return frozenset(tails)


def cut_module_path(file: str) -> bool:
    """Whether a relative path cut short from the left (Dynamo prints a guard's source line as the path's last
    characters: ``nn/modules/dropout.py:73``) is the ending of a known library module path. Only for paths known to
    be cut that way: a whole relative path (an IR tag's ``train.py``) stays user code (:mod:`.installed`)."""
    file = file.replace("\\", "/")
    return not file.startswith("/") and "/" in file and file in _tails()


def shipped_versions() -> dict[str, tuple[str, str]]:
    """``{distribution: (version, source)}`` from the shipped file's header (for ``--version``-like reports and
    the tests that check each distribution is there)."""
    found: dict[str, tuple[str, str]] = {}
    for line in _lines():
        if not line.startswith("# "):
            break
        dist, version, source, _count = line[2:].split(" ")
        found[dist] = (version, source)
    return found


def _lines() -> list[str]:
    try:
        return gzip.decompress(DATA_FILE.read_bytes()).decode().splitlines()
    except OSError:
        return []


def _shipped() -> list[str]:
    paths = []
    for line in _lines():
        if line.startswith("#") or "\t" not in line:
            continue
        folder, names = line.split("\t", 1)
        paths.extend(f"{folder}/{name}.py" for name in names.split(" "))
    return paths


def _installed() -> list[str]:
    """Module paths of those distributions installed here in another version than the shipped list's, as the
    lister given by :func:`set_installed_lister` reads them (none until one is given)."""
    return _installed_lister() if _installed_lister is not None else []


_installed_lister: Callable[[], list[str]] | None = None


def set_installed_lister(lister: Callable[[], list[str]]) -> None:
    """Who lists the module paths of the distributions installed where hlodiff runs (asked lazily, at the first
    lookup), with this module's answers forgotten. The dumps layer gives it through
    :func:`hlodiff.hlo.installed.list_installed_with`, which forgets the answers built on these too."""
    global _installed_lister
    _installed_lister = lister
    module_paths.cache_clear()
    top_level_names.cache_clear()
    _tails.cache_clear()


def is_package_module(path: str) -> bool:
    """A ``.py`` inside a package folder of a distribution's file list (not a top-level file, a script or
    metadata)."""
    return path.endswith(".py") and "/" in path and not path.startswith(("..", "/")) and ".dist-info/" not in path
