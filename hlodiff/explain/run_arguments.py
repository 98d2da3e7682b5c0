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


ARGUMENT_ORDER = "pytree leaf order"
"""``KeyDifference.name`` of :func:`argument_order_differences` (``source`` ``"arguments"``)."""


def argument_order_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("arguments", "pytree leaf order", A's order, B's order)]`` (the moved paths with their
    parameter numbers, ``hp['lr'] 6, hp['weight_decay'] 8``) when both programs take the same named leaves, of the
    same types, in another order; else empty. JAX passes a pytree's leaves in its flattening order: a dict sorts its
    keys, an OrderedDict (or a custom node) keeps its insertion order, so the same config read in another key order
    is another program over reordered parameters (observed: round 11's runs11_ordered_config) though hlodiff's
    canonical form, which numbers parameters apart, calls the two the same program."""
    if a is None or b is None:
        return []
    orders = [_numbered_paths(r) for r in (a, b)]
    if not orders[0] or sorted(orders[0].items()) == sorted(orders[1].items()):
        return []
    if set(orders[0]) != set(orders[1]) or any(orders[0][p][1] != orders[1][p][1] for p in orders[0]):
        return []  # other leaves or other types: another structure, said elsewhere
    moved = sorted((p for p in orders[0] if orders[0][p][0] != orders[1][p][0]), key=lambda p: orders[0][p][0])
    if not moved:
        return []
    return [KeyDifference("arguments", ARGUMENT_ORDER, *(", ".join(f"{p} {o[p][0]}" for p in moved) for o in orders))]


ARGUMENT_DTYPES = "pytree leaf dtypes"
"""``KeyDifference.name`` of :func:`argument_dtype_differences` (``source`` ``"arguments"``)."""


def argument_dtype_differences(a: GraphRecord | None, b: GraphRecord | None) -> list[KeyDifference]:
    """``[KeyDifference("arguments", "pytree leaf dtypes", A's, B's)]`` (``p['w1'] f32[16,32], ...`` per side) when
    the two programs take the same named leaves and some of them arrive with another element type and the same
    dimensions: the arrays passed to the jitted function had another dtype in one run (a checkpoint restored with
    the dtype it was saved in, a NumPy array built in another dtype; observed: round 11's runs11_ckpt_f16), not a
    precision setting inside the program. Else empty."""
    if a is None or b is None:
        return []
    typed = [_numbered_paths(r) for r in (a, b)]
    if not typed[0] or set(typed[0]) != set(typed[1]):
        return []
    changed = [p for p in sorted(typed[0]) if typed[0][p][1] != typed[1][p][1]]
    if not changed or any(_dims(typed[0][p][1]) != _dims(typed[1][p][1]) for p in changed):
        return []
    return [KeyDifference("arguments", ARGUMENT_DTYPES, *(", ".join(f"{p} {t[p][1]}" for p in changed)
                                                          for t in typed))]


def _dims(shape: str) -> str:
    return shape.partition("[")[2]


def _argument_paths(rec: GraphRecord) -> set[str]:
    """The op_names of the entry's parameters that name a path into a pytree (``hp['lr']``, ``state.mu``)."""
    return {name for name, _ in _entry_parameters(rec) if "[" in name or "." in name}


def _numbered_paths(rec: GraphRecord) -> dict[str, tuple[int, str]]:
    """Every named entry parameter (a pytree path, or a top-level argument's name): (its number, its shape without
    layout). Empty when two parameters share a name (nothing to tell them apart by)."""
    found: dict[str, tuple[int, str]] = {}
    for name, inst in _entry_parameters(rec):
        if not name or name in found or inst.parameter_number is None:
            return {}
        found[name] = (inst.parameter_number, str(inst.shape).partition("{")[0])
    return found


def _entry_parameters(rec: GraphRecord) -> list:
    """(op_name, instruction) of the entry computation's parameters that carry metadata."""
    entry = next((c for c in rec.module().computations if c.is_entry), None)
    if entry is None:
        return []
    return [((parse_metadata(inst.attrs["metadata"]).op_name or "").replace("\\'", "'"), inst)
            for inst in entry.instructions if inst.opcode == "parameter" and "metadata" in inst.attrs]
