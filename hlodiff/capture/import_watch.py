"""Run a callback the moment a package has been imported, without importing it first.

The sync hook must be installed right after ``import torch_xla`` ran (before the user's first sync), in a process
whose script hlodiff does not edit. A ``sys.meta_path`` finder that reacts to one name only lets the real finders
find the package, wraps its loader, and calls back once the package's code has run; every other import costs one
string comparison. Stdlib only: the injected ``sitecustomize`` may load it by path beside :mod:`hook`.
"""

from __future__ import annotations

import sys


class ImportWatcher:
    """A ``sys.meta_path`` finder that only acts on ``import <name>`` (torch_xla): it lets the real finders find
    it, and runs a callback once the package has been executed."""

    def __init__(self, callback, name: str = "torch_xla"):
        self.callback = callback
        self.name = name
        self.busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or self.busy:
            return None
        self.busy = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self:
                    continue
                find_spec = getattr(finder, "find_spec", None)
                if find_spec is None:
                    continue
                spec = find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _PostImportLoader(spec.loader, self)
        return spec


class _PostImportLoader:
    def __init__(self, loader, watcher: ImportWatcher):
        self._loader = loader
        self._watcher = watcher

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        # torch_xla itself must only ever see its real loader
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        remove_watcher(self._watcher)
        self._watcher.callback(module)  # the callback catches its own errors: never break the user's import

    def __getattr__(self, name):
        return getattr(self._loader, name)


def remove_watcher(watcher=None) -> None:
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not (isinstance(f, ImportWatcher) and (watcher is None or f is watcher))]
