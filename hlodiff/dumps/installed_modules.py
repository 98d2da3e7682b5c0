"""The module paths of the ML distributions installed where hlodiff runs, for the library-code lookup of
:mod:`hlodiff.hlo.library_modules`: read from the ``RECORD`` file lists on ``sys.path`` here, in the layer that
reads the disk, and handed down through :func:`hlodiff.hlo.installed.list_installed_with` when
``hlodiff.dumps`` is imported (read lazily, at the first lookup).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hlodiff.hlo.library_modules import DISTRIBUTIONS, is_package_module, shipped_versions


def installed_module_paths() -> list[str]:
    """Module paths of those distributions installed here in another version than the shipped list's, from the
    ``RECORD`` file lists of their ``.dist-info`` folders on ``sys.path``: read as text, never by importing the
    library (nor ``importlib.metadata``, whose import alone costs more than the whole lookup)."""
    shipped = shipped_versions()
    paths = []
    for entry in dict.fromkeys(sys.path):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            dist, _, version = name[:-len(".dist-info")].partition("-")
            dist = dist.lower().replace("-", "_").replace(".", "_")
            if dist not in DISTRIBUTIONS or shipped.get(dist, ("",))[0] == version:
                continue
            try:
                record = Path(entry or ".", name, "RECORD").read_text(errors="replace")
            except OSError:
                continue
            for line in record.splitlines():
                text = line.split(",", 1)[0].replace("\\", "/")
                if is_package_module(text):
                    paths.append(text)
    return paths
