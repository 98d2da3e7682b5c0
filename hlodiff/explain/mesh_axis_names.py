"""Two programs whose meshes differ in their axis names only.

With Shardy (JAX's partitioner since 0.7.0) the lowered module keeps its named mesh in the header
(``frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["data"=4, "model"=1]>}}``) and every sharded value
names the axes it is split over (``xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"data\\"}, {}]>"``). JAX hashes that
module, so a mesh whose axes were renamed (a refactor: "data" -> "batch") is another program and cache entry though
the devices, the mesh's shape and the partitioning (``sharding={devices=[4,1]<=[4]}``) are the same (observed:
round 11's runs11_mesh_axis_names). The graph diff sees a sharding change; the words say it is a name.
"""

from __future__ import annotations

import re
from collections import Counter

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference

MESH_AXIS_NAMES = "mesh axis names"
"""``KeyDifference.name`` of :func:`mesh_axis_name_differences` (``source`` ``"module"``)."""

_MESH = re.compile(r"#sdy\.mesh<\[([^\]]*)\]")
_AXIS = re.compile(r'"(\w+)"=(\d+)')
_PLACED = re.compile(r"\bsharding=(\{[^}]*\})")


def mesh_axis_name_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("module", "mesh axis names", "data, model", "batch, model")]`` when both programs have one
    named mesh of the same axis sizes under other names and place every value alike (the same multiset of
    ``sharding={...}`` annotations); else empty (another mesh shape, another partitioning: the shardings' words)."""
    if a is None or b is None:
        return []
    meshes = [_mesh(r.text()) for r in (a, b)]
    if any(m is None for m in meshes) or [n for _, n in meshes[0]] != [n for _, n in meshes[1]]:
        return []
    names = [[name for name, _ in m] for m in meshes]
    if names[0] == names[1] or _placements(a.text()) != _placements(b.text()):
        return []
    return [KeyDifference("module", MESH_AXIS_NAMES, ", ".join(names[0]), ", ".join(names[1]))]


def _mesh(text: str) -> list[tuple[str, int]] | None:
    """The axes (name, size) of the module's one named mesh; None without one, or with several."""
    found = {m.group(1) for m in _MESH.finditer(text)}
    if len(found) != 1:
        return None
    return [(name, int(size)) for name, size in _AXIS.findall(found.pop())]


def _placements(text: str) -> Counter:
    return Counter(_PLACED.findall(text))
