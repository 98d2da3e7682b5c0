"""The arguments two JAX runs passed to one jitted function, by their pytree paths.

JAX names each entry parameter of a lowered program after the argument's path in the pytree it was passed in
(``metadata={op_name="hp['weight_decay']"}``; a top-level array is ``x``). Across two runs of one script the same
function taking a leaf in one run that the other never passed means the arguments' structure differed: a value
that is None (an empty pytree node) in one run's config and a number in the other's, a key present in one dict
only, a model with another part. The ops that read that leaf come with it, so the graph diff sees added ops and
inputs; the path names what the user must make the same.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.hlo.attributes import parse_metadata

ARGUMENT_LEAVES = "pytree leaves"
"""``KeyDifference.name`` of :func:`argument_path_differences` (``source`` ``"arguments"``)."""


def argument_path_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("arguments", "pytree leaves", A's own paths, B's own paths)]`` when the argument paths of
    the two programs' entry parameters differ on one side only (leaves added or removed, not renamed); else
    empty. Parameters without a path (torch_xla's, a tuple's positional leaves) are not compared."""
    if a is None or b is None:
        return []
    paths = [_argument_paths(r) for r in (a, b)]
    if not paths[0] or not paths[1]:
        return []
    only = [paths[0] - paths[1], paths[1] - paths[0]]
    if bool(only[0]) == bool(only[1]):
        return []  # the same leaves, or leaves on both sides: another structure altogether, the graph diff says it
    return [KeyDifference("arguments", ARGUMENT_LEAVES, ", ".join(sorted(only[0])) or None,
                          ", ".join(sorted(only[1])) or None)]


def _argument_paths(rec: GraphRecord) -> set[str]:
    """The op_names of the entry's parameters that name a path into a pytree (``hp['lr']``, ``state.mu``)."""
    entry = next((c for c in rec.module().computations if c.is_entry), None)
    if entry is None:
        return set()
    found = set()
    for inst in entry.instructions:
        if inst.opcode != "parameter" or "metadata" not in inst.attrs:
            continue
        name = parse_metadata(inst.attrs["metadata"]).op_name or ""
        if "[" in name or "." in name:
            found.add(name.replace("\\'", "'"))
    return found
