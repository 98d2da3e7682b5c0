"""The op that made a changed value: the metadata of the changed instructions on both sides (torch_xla's
``op_type``, JAX's ``op_name``), what the graph does with a changed input (an index made outside the graph: a
mask's coordinates or a Python list), and the IR of the live tensors behind added or removed outputs. The fix rules
read it (a ``nonzero`` wants a fixed-size mask, a ``topk`` a fixed k); :mod:`hlodiff.explain.fix_context` puts it
into the :class:`~hlodiff.diff.fixes.FixContext`, :mod:`hlodiff.explain.family_buckets` asks whether a family's sizes
follow the data.
"""

from __future__ import annotations

from hlodiff.hlo.shapes import printed_dims


def family_ops(recompilations) -> dict[int, frozenset[str]]:
    """Per recompilation (by id), the producing ops its comparison shows; a mask index seen anywhere in a family
    counts for all of it: one root shows its op in some comparisons only (the first compares the rest of a step
    with the early graph, where the index is one of many added instructions)."""
    own: dict[int, set[str]] = {}
    masked: set[str] = set()
    for r in recompilations:
        ops = producing_ops(r)
        if "index_input" in ops:  # an integer index made outside the graph: by a mask's early run, or on the host
            # review 12 F4: an index of coordinates (s64[N,2]: one row per True of a 2-D mask) is what torch_xla
            # makes of x[mask] when the mask's data is on hand, with no early run: a boolean mask, not a list
            ops.add("nonzero" if any(c.kind == "partial" for c in r.causes) or "mask_coords" in ops
                    else "tensor_list")
        if "nonzero" in ops:
            masked.add(r.family.key)
        own[id(r)] = ops - _MARKERS
    return {id(r): frozenset(own[id(r)] | ({"nonzero"} if r.family.key in masked else set()))
            for r in recompilations}


_MARKERS = frozenset({"index_input", "mask_coords"})
"""What :func:`producing_ops` notes about an index input, read here only: no op a fix names."""


# Names in op_type/op_name metadata and live-tensor IR -> the producing op a fix rule knows.
_OP_NAMES = (("nonzero", "nonzero"), ("masked_select", "nonzero"), ("masked_scatter", "nonzero"),
             ("topk", "topk"), ("concatenate", "cat"), ("aten__cat", "cat"), ("randn", "randn"),
             ("aten__normal", "randn"), ("(_normal)", "randn"), ("constant_pad", "pad"), ("aten__scatter", "scatter"),
             ("aten__randperm", "randperm"), ("compared_list", "compared_list"))


def producing_ops(r) -> set[str]:
    """Ops that made what changed: the metadata of the changed instructions on both sides (torch_xla's
    ``op_type="aten__topk"``, JAX's ``op_name="jit(f)/concatenate"``) and the IR of the live tensors behind added or
    removed outputs."""
    names: list[str] = []
    int_inputs = indexing = coords = False
    sides = ((r.closest, "left"), (r.graph, "right"))
    for cause in r.causes:
        for change in cause.origins:
            for graph, side in sides:
                ref = getattr(change, side)
                cm = getattr(graph, "_canonical", None) if graph is not None else None
                if ref is None or cm is None or ref.computation not in cm.computations:
                    continue
                inst = cm.computations[ref.computation].insts.get(ref.name)
                if inst is None:
                    continue
                meta = cm.metadata(inst)
                names += [n for n in (meta.op_type, meta.op_name) if n]
                if ref.opcode == "parameter":  # device data: what the graph does with it says what it is
                    comp = cm.computations[ref.computation]
                    names += [cm.metadata(comp.insts[u]).op_type or "" for u in comp.users(ref.name)]
                elif ref.opcode == "broadcast":  # zeros a scatter writes into (one_hot's): the scatter names it
                    comp = cm.computations[ref.computation]
                    names += [cm.metadata(comp.insts[u]).op_type or "" for u in comp.users(ref.name)
                              if comp.insts[u].opcode == "scatter"]
                if ref.opcode == "parameter" and _compared_list(cm.computations[ref.computation], ref):
                    names.append("compared_list")
                if ref.opcode == "parameter" and ref.shape.startswith(_INDEX_TYPES) \
                        and _feeds_indexing(cm, cm.computations[ref.computation], ref.name):
                    int_inputs = indexing = True
                    coords = coords or _coordinates(cm, cm.computations[ref.computation], ref)
    for note in getattr(r, "tensors", ()):
        names += [node.op for node in note.tensor.ir if getattr(node, "op", None)]
    found = set()
    for name in names:
        low = name.lower()
        found.update(op for key, op in _OP_NAMES if key in low)
    if int_inputs and indexing:
        found.add("index_input")
        if coords:  # the index holds coordinates, one column per dimension of the indexed tensor: nonzero's layout
            found.add("mask_coords")
    return found


_INDEX_TYPES = ("s64[", "s32[")


def _compared_list(comp, ref) -> bool:
    """A 1-D input broadcast against every value of a batch and compared with it (``(x[:, None] > edges)``, bucket
    edges; ``y[:, None] == classes``, the classes present): a list of thresholds or values made on the host, whose
    length is the data's (``np.unique`` of quantiles or labels), not a size chosen as a bucket."""
    dims = printed_dims(ref.shape)
    if dims is None or len(dims) != 1:
        return False
    for user in comp.users(ref.name):
        inst = comp.insts.get(user)
        if inst is None or inst.opcode != "broadcast":
            continue
        if any(comp.insts[u].opcode == "compare" for u in comp.users(user) if u in comp.insts):
            return True
    return False


def _coordinates(cm, comp, ref) -> bool:
    """An integer input of shape [N, k], k 2 to 4 (one column per dimension of the tensor it indexes: nonzero's
    layout), that reaches ``aten__index``/``aten__index_put``: x[mask] over a mask of k dimensions. Token ids
    ([batch, length], read by an embedding, whose backward puts by index) are no coordinates."""
    dims = printed_dims(ref.shape)
    return (dims is not None and len(dims) == 2 and 2 <= dims[1] <= 4
            and _feeds_indexing(cm, comp, ref.name, ops=_MASK_INDEXING)
            and not _feeds_indexing(cm, comp, ref.name, ops=_EMBEDDING))


def _feeds_indexing(cm, comp, name: str, depth: int = 8, ops: frozenset[str] | None = None) -> bool:
    """An integer input that reaches an indexing op (``aten__index``: gather with it as indices; ``ops``, else
    :data:`_INDEXING`) within a few steps of slices and reshapes: an index tensor made outside the graph."""
    ops = _INDEXING if ops is None else ops
    seen, frontier = {name}, [name]
    for _ in range(depth):
        nxt = []
        for n in frontier:
            for user in comp.users(n):
                if user in seen:
                    continue
                seen.add(user)
                if cm.metadata(comp.insts[user]).op_type in ops:
                    return True
                nxt.append(user)
        frontier = nxt
    return False
_INDEXING = frozenset({"aten__index", "aten__index_select", "aten__gather", "aten__embedding",
                       "aten__index_put"})
_MASK_INDEXING = frozenset({"aten__index", "aten__index_put"})
_EMBEDDING = frozenset({"aten__embedding", "aten__embedding_dense_backward"})
