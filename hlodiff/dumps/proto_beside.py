"""The HLO protos an XLA dump wrote beside a torch_xla save-tensors file: full Python stacks for the save file's graphs.

A run captured with both ``XLA_SAVE_TENSORS_FILE`` and ``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto``
has each compiled graph twice: in the save file (HLO text, one innermost frame per instruction, often inside torch)
and in DIR (``module_0003.SyncTensorsGraph.168.before_optimizations.hlo.pb``, whose ``stack_frame_index`` holds the
whole stack, through the user's lines). Both are the same module: the save file's ``IrToHlo.168`` is the dump's
``SyncTensorsGraph.168``, instruction for instruction. The dump holds only compiled graphs, in compilation order; a
module id can repeat (graphs that differ only in a constant), so among protos of one id the first unused one whose
instruction names all belong to the graph is taken, compiled graph after compiled graph.
"""

from __future__ import annotations

import os
import re

from hlodiff.dumps.hlo_proto import stacks_for, values_for
from hlodiff.errors import InputWarning
from hlodiff.hlo.model import Module, SourceFrame

_TRIES = 3
"""Protos of one id read per graph at most: a long run's dump must not be read once per graph."""
_PROTO_RE = re.compile(r"^module_(\d+)\.(.+)\.before_optimizations\.hlo\.pb$")


class ProtosBeside:
    """Finds, per save-file graph, the stacks of its proto in an XLA dump folder beside the save file."""

    def __init__(self) -> None:
        self._by_folder: dict[str, dict[str, list[str]]] = {}
        self._used: set[str] = set()
        self._by_key: dict[str, dict[str, tuple[SourceFrame, ...]]] = {}
        self._path_by_key: dict[str, str | None] = {}
        self._last: str | None = None

    def stacks(self, save_path: str, module: Module, key: str | None,
               warnings: list[InputWarning] | None) -> dict[str, tuple[SourceFrame, ...]]:
        """The stacks for ``module`` read from ``save_path``; a graph seen before under the same cache ``key`` (a
        cache hit: not in the dump) gets its first sighting's stacks. Empty when no proto fits."""
        if key is not None and key in self._by_key:
            return self._by_key[key]
        found: dict[str, tuple[SourceFrame, ...]] = {}
        self._last = None
        ident = module.name.rsplit(".", 1)[-1]
        candidates = self._candidates(os.path.dirname(save_path) or ".").get(ident, [])
        if candidates:
            names = {inst.name for _, inst in module.instructions()}
            unused = [path for path in candidates if path not in self._used]
            for path in unused[:_TRIES]:  # the first unused one fits unless graphs are missing from the dump
                stacks = stacks_for(path, warnings)
                if stacks and set(stacks) <= names:
                    self._used.add(path)
                    found = stacks
                    self._last = path
                    break
        if key is not None:
            self._by_key[key] = found
            self._path_by_key[key] = self._last
        return found

    def values(self, key: str | None) -> dict[str, tuple]:
        """The constants' values of the proto the last :meth:`stacks` call matched (by ``key`` for a graph seen
        before): what the save file's text prints as ``{...}``."""
        path = self._path_by_key.get(key) if key is not None else self._last
        return values_for(path, None) if path else {}

    def _candidates(self, folder: str) -> dict[str, list[str]]:
        """Protos of the folder and its direct subfolders, by module id, in module-number order."""
        if folder not in self._by_folder:
            found: list[tuple[int, str, str]] = []
            for where in [folder, *_subfolders(folder)]:
                try:
                    names = os.listdir(where)
                except OSError:
                    continue
                for name in names:
                    m = _PROTO_RE.match(name)
                    if m is not None:
                        found.append((int(m.group(1)), m.group(2).rsplit(".", 1)[-1], os.path.join(where, name)))
            by_id: dict[str, list[str]] = {}
            for _, ident, path in sorted(found):
                by_id.setdefault(ident, []).append(path)
            self._by_folder[folder] = by_id
        return self._by_folder[folder]


def _subfolders(folder: str) -> list[str]:
    try:
        return sorted(os.path.join(folder, n) for n in os.listdir(folder) if os.path.isdir(os.path.join(folder, n)))
    except OSError:
        return []
