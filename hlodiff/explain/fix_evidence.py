"""The evidence a run holds beyond the two graphs of one recompilation, read for the fix rules: the op that made the
changed value (metadata, the users of a changed input, the live tensors' IR), the sizes and baked values a family
went through, whether those sizes grow or recur like buckets, whether a change lies in a library's first step, and
what a JAX static argument sets in the graph (a loop's trip count, shapes, the ops traced).

Pure readers of the explanation's recompilations; :mod:`hlodiff.explain.fix_context` puts what they find into a
:class:`~hlodiff.diff.fixes.FixContext`.
"""

from __future__ import annotations

import math
import re

from hlodiff.diff.origin_facts import package_path
from hlodiff.explain.producer import producer
from hlodiff.hlo.literal import real, size
from hlodiff.hlo.shapes import without_layout_text


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
             ("aten__normal", "randn"), ("(_normal)", "randn"), ("constant_pad", "pad"), ("aten__scatter", "scatter"))


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


def _coordinates(cm, comp, ref) -> bool:
    """An integer input of shape [N, k], k 2 to 4 (one column per dimension of the tensor it indexes: nonzero's
    layout), that reaches ``aten__index``/``aten__index_put``: x[mask] over a mask of k dimensions. Token ids
    ([batch, length], read by an embedding, whose backward puts by index) are no coordinates."""
    dims = _dims(ref.shape)
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


_DIM = re.compile(r"\[([0-9,]*)\]")


def family_sizes(recompilations) -> dict[str, tuple[str, ...]]:
    """Per family, the size that changed took over its latest run of chained compilations, in run order
    (``7, 8, 9, 10``: each recompilation starts from the size the one before ended at): read from the first changed
    parameter of each recompilation's shape cause, else from a slice whose length changed."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for r in recompilations:
        sizes = changed_sizes(r)
        if sizes is not None:
            pairs.setdefault(r.family.key, []).append(sizes)
    found = {}
    for key, seq in pairs.items():
        chain = [seq[-1]]
        for pair in reversed(seq[:-1]):
            if pair[1] != chain[0][0] and not (len(set(p for q in seq for p in q)) <= 4):
                break
            chain.insert(0, pair)
        found[key] = (chain[0][0], *(b for _, b in chain))
    return found


def changed_sizes(r) -> tuple[str, str] | None:
    """The size that changed in a recompilation, before and after: of the first changed parameter of its shape
    or attribute causes, else of a slice whose length changed, else of the first changed shape."""
    changes = [o for c in r.causes if c.kind in ("shape", "attribute") for o in c.origins
               if o.left is not None and o.right is not None]
    change = next((o for o in changes if o.left.opcode == "parameter"), None) or next(
        (o for o in changes if o.left.opcode == "slice"), None) or next(
        (o for o in changes if _changed_size(o) is not None), None)
    return _changed_size(change) if change is not None else None


def family_constants(recompilations) -> dict[str, tuple[str, ...]]:
    """Per family, the values its changing constant was baked in with, in run order (``0, 1``: the values an
    index offset or a learning rate took while torch_xla baked them; values passed in as inputs show no literal)."""
    found: dict[str, dict[str, None]] = {}  # values in first-seen order (a dict: membership in constant time)
    for r in recompilations:
        change = next((o for c in r.causes if c.kind == "constant" for o in c.origins
                       if o.left is not None and o.right is not None), None)
        if change is None:
            continue
        seq = found.setdefault(r.family.key, {})
        for key in ("literal", "value"):
            for v in change.details.get(key, ()):
                if v:
                    seq.setdefault(v.strip(), None)
    return {k: tuple(v) for k, v in found.items() if v}


def _changed_size(change) -> tuple[str, str] | None:
    a, b = _dims(change.left.shape), _dims(change.right.shape)
    if a is None or b is None or len(a) != len(b):
        return None
    axis = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    return None if axis is None else (str(a[axis]), str(b[axis]))


def _dims(shape: str) -> list[int] | None:
    m = _DIM.search(shape)
    if not m:
        return None
    dims = [size(x) for x in m.group(1).split(",") if x]
    return None if None in dims else dims


def grows(sizes: tuple[str, ...]) -> bool:
    """At least three compilations, each larger than the last by the same step: a cache or history built up.
    ``sizes`` are printed sizes or baked values (``1.2, 1.4, 1.6``: a ramped float, its steps equal to rounding);
    a value that is no ordered finite number (nan, inf, true, an array) is no growth."""
    if len(sizes) < 3:
        return False
    n = [real(x) for x in sizes]
    if any(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in n):
        return False
    steps = [b - a for a, b in zip(n, n[1:])]
    if all(isinstance(v, int) for v in n):  # exact, and no float conversion of a huge integer
        return steps[0] > 0 and len(set(steps)) == 1
    return steps[0] > 0 and all(abs(s - steps[0]) <= 1e-6 * abs(steps[0]) for s in steps)


def library_step(cause, ctx) -> str:
    """The library file whose first step this change is (``torch/optim/adamw.py``), when only the family's first
    graph differs (warm-up only) and every changed instruction's frames are library code."""
    if not (ctx.first_recompilation and ctx.pattern == "warm-up only"):
        return ""
    files: list[str] = []
    for change in cause.origins:
        for ref in (change.left, change.right):
            if ref is None or not ref.frames:
                continue
            if not all(f.is_library for f in ref.frames):
                return ""
            files.append(ref.frames[0].file)
    if not files:
        return ""
    top = max(set(files), key=files.count)
    return package_path(top)


def static_structure(r) -> str:
    """What the graph's own causes say a static argument sets, in words for the fix; empty for values only."""
    kinds = {c.kind for c in r.causes}
    if "shape" in kinds or trip_count_changed(r):
        return "shapes and loop lengths"
    if kinds & {"ops", "inputs", "outputs"}:
        return "which ops are traced: a Python loop or branch on it"
    if "attribute" in kinds:
        return "" if slice_start_only(r) else "slice bounds or dimensions"
    return ""


def slice_start_only(r) -> bool:
    """Every changed attribute is a slice's bounds, each moved without changing its length (``[0:4]`` ->
    ``[4:8]``): a window's start baked in. ``lax.dynamic_slice`` with a traced start makes it one graph."""
    found = False
    for c in r.causes:
        if c.kind != "attribute":
            continue
        for o in c.origins:
            if o.left is None or o.right is None or set(o.kinds) != {"attribute:slice"}:
                return False
            before, after = o.details.get("attribute:slice", ("", ""))
            if _slice_lengths(before) != _slice_lengths(after) or not _slice_lengths(before):
                return False
            found = True
    return found


_BOUNDS = re.compile(r"\[(-?\d+):(-?\d+)(?::(\d+))?\]")


def _slice_lengths(text: str) -> tuple[int, ...]:
    return tuple(int(b) - int(a) for a, b, _ in _BOUNDS.findall(text or ""))


def trip_count_changed(r) -> bool:
    """A changed constant inside a while loop's condition: a loop count baked in (lax.scan's length,
    fori_loop with Python bounds)."""
    cm = getattr(r.graph, "_canonical", None)
    if cm is None:
        return False
    conditions = {str(inst.attrs.get("condition", "")).lstrip("%") for comp in cm.computations.values()
                  for inst in comp.insts.values() if inst.opcode == "while"}
    return any(o.right is not None and o.right.computation in conditions
               for c in r.causes if c.kind == "constant" for o in c.origins)


def ops_repeat_per_count(r, before: str, after: str) -> bool:
    """The graphs differ only in instructions one of them has more of, every one an opcode the other graph also
    has, and their number a multiple of how much the static integer changed (``10 -> 15``: 30 added, 6 per
    count): a Python loop over that integer unrolled in the trace. A branch on it adds a fixed number of ops
    whatever the values, or ops the other graph lacks."""
    try:
        delta = abs(int(after) - int(before))
    except ValueError:
        return False
    if delta == 0 or r.closest is None:
        return False
    other = [c for c in r.causes if c.kind != "static_argument"]
    if not other or any(c.kind != "ops" for c in other):
        return False
    pairs = [(o.left, o.right) for c in other for o in c.origins]
    added = [x for left, x in pairs if left is None and x is not None]
    removed = [x for x, right in pairs if right is None and x is not None]
    if len(added) + len(removed) != len(pairs) or bool(added) == bool(removed):
        return False  # a changed instruction, or ops both gained and lost: not more of the same
    one_sided, kept_in = (added, r.closest) if added else (removed, r.graph)
    cm = getattr(kept_in, "_canonical", None)
    if cm is None:
        return False
    opcodes = {i.opcode for comp in cm.computations.values() for i in comp.insts.values()}
    return all(x.opcode in opcodes for x in one_sided) and len(one_sided) % delta == 0


def ops_use_new_inputs(r) -> bool:
    """Every operation an ``ops`` cause adds reads (within a few steps) a parameter an ``inputs`` cause added: the
    new ops come with the new argument (``if "mask" in batch: x = x * batch["mask"]``), not on their own. The same
    read the other way: the ops the recompiled graph lost read the parameters it lost (a loss term traced only when
    its labels are in the batch, seen from a step without them)."""
    return _ops_read_params(r, added=True) or _ops_read_params(r, added=False)


def only_added(r) -> bool:
    """Every change of the recompilation adds (an input, an instruction, an output) and none removes: the earlier
    graph is contained in this one. A value synced early on some steps is the other way round: the ops that
    computed it are gone where it arrives as an input (review 2, F3: SGD's grads created on step 0, then added into)."""
    changes = [(c.left, c.right) for cause in r.causes for c in cause.origins]
    changes += [pair for cause in r.causes for pair in cause.instructions]
    return bool(changes) and all(right is not None for _, right in changes) and any(
        left is None for left, _ in changes)


def _ops_read_params(r, added: bool) -> bool:
    graph = r.graph if added else r.closest
    cm = getattr(graph, "_canonical", None) if graph is not None else None
    if cm is None:
        return False
    def side(o):
        return (o.right if o.left is None else None) if added else (o.left if o.right is None else None)
    new_params = {(x.computation, x.name) for c in r.causes if c.kind == "inputs" for o in c.origins
                  if (x := side(o)) is not None and x.opcode == "parameter"}
    ops = [x for c in r.causes if c.kind == "ops" for o in c.origins if (x := side(o)) is not None]
    if not new_params or not ops:
        return False
    reached: set[tuple[str, str]] = set()
    for comp_name, name in new_params:
        comp = cm.computations.get(comp_name)
        if comp is None:
            continue
        frontier, seen = [name], {name}
        for _ in range(8):
            frontier = [u for n in frontier for u in comp.users(n) if u not in seen]
            seen.update(frontier)
        reached |= {(comp_name, n) for n in seen}
    feeding = [a for a in ops if (a.computation, a.name) in reached]
    return bool(feeding) and len(feeding) * 2 >= len(ops)


def inputs_repeat(r) -> bool:
    """The inputs one graph has and the other lacks are more of the same: none is a scalar and each has the shape
    (layout aside) of an input both graphs keep. A Python loop over a list whose length changes traces the same
    computation once more per item (micro-batches of an accumulation group, the short group at an epoch's end),
    unlike a block skipped, a head whose labels are absent or a state created (gradients accumulated, optimizer
    moments): those inputs are weights or state, which the graph also returns, updated."""
    for added in (True, False):
        graph, other = (r.graph, r.closest) if added else (r.closest, r.graph)
        cm = getattr(graph, "_canonical", None) if graph is not None else None
        if cm is None or other is None:
            continue
        changed = [x for c in r.causes if c.kind == "inputs" for o in c.origins
                   if (x := (o.right if o.left is None else None) if added else (o.left if o.right is None else None))
                   is not None and x.opcode == "parameter"]
        if not changed:
            continue
        names = {x.name for x in changed}
        # weights, gradients and optimizer state come back as outputs of their shapes; a data batch never does
        outputs = {str(cm.entry.insts[n].shape.without_layout()) for n in cm.entry.outputs() if n in cm.entry.insts}
        kept = {str(i.shape.without_layout()) for i in cm.entry.insts.values()
                if i.opcode == "parameter" and i.name not in names} - outputs
        shapes = [without_layout_text(x.shape) for x in changed]
        if all(not _scalar_shape(sh) and sh in kept for sh in shapes):
            return True
    return False


def state_returned(r) -> bool:
    """Every input the recompiled graph gained comes back as one of its outputs of that shape (layout aside): state
    the step threads from call to call (a momentum that was None on the first call, returned updated), not an
    argument the caller makes fresh each call (a mask passed on some batches only, never returned)."""
    cm = getattr(r.graph, "_canonical", None)
    gained = [without_layout_text(o.right.shape) for c in r.causes if c.kind == "inputs" for o in c.origins
              if o.left is None and o.right is not None and o.right.opcode == "parameter"]
    if cm is None or not gained:
        return False
    outputs = [str(cm.entry.insts[n].shape.without_layout()) for n in cm.entry.outputs() if n in cm.entry.insts]
    for shape in gained:
        if shape not in outputs:
            return False
        outputs.remove(shape)
    return True


def _scalar_shape(shape: str) -> bool:
    return shape.endswith("[]") or "[" not in shape


def slices_rearranged(r) -> bool:
    """Every slice whose bounds look changed takes bounds that the other graph also slices out of an operand of
    the same shape (``tgt[:, 0]``, ``tgt[:, 2]`` in both graphs, paired otherwise because the ops around them
    changed): no bound changed, the slices were only matched across a different arrangement."""
    pairs = [(o.left, o.right) for c in r.causes if c.kind == "attribute" for o in c.origins
             if o.left is not None and o.right is not None and "attribute:slice" in o.kinds]
    if not pairs or r.closest is None:
        return False
    left_cm, right_cm = getattr(r.closest, "_canonical", None), getattr(r.graph, "_canonical", None)
    if left_cm is None or right_cm is None:
        return False
    left_all, right_all = _slice_keys(left_cm), _slice_keys(right_cm)
    for left, right in pairs:
        lk, rk = _slice_key(left_cm, left), _slice_key(right_cm, right)
        if lk is None or rk is None or lk not in right_all or rk not in left_all:
            return False
    return True


def _slice_key(cm, ref) -> tuple[str, str] | None:
    comp = cm.computations.get(ref.computation)
    inst = comp.insts.get(ref.name) if comp is not None else None
    if inst is None or not inst.operands or inst.operands[0] not in comp.insts:
        return None
    return str(comp.insts[inst.operands[0]].shape.without_layout()), inst.attrs.get("slice", "")


def _slice_keys(cm) -> set[tuple[str, str]]:
    return {(str(comp.insts[i.operands[0]].shape.without_layout()), i.attrs.get("slice", ""))
            for comp in cm.computations.values() for i in comp.insts.values()
            if i.opcode == "slice" and i.operands and i.operands[0] in comp.insts}


def graph_grows(members: list, compiled: list) -> tuple[int, ...]:
    """Instruction counts of the compiled graphs when every whole graph of the family compiled (no cache hit), at
    least three, each larger than the one before: the traced history grows with the step (a state carried from
    step to step keeps its autograd graph). Empty otherwise."""
    if len(compiled) < 3 or len(members) != len(compiled):
        return ()
    counts = tuple(g.instructions for g in compiled)
    return counts if all(b > a for a, b in zip(counts, counts[1:])) else ()


def scalars_grow(compiled: list) -> bool:
    """The compiled graphs of a growing family (:func:`graph_grows`) take the same non-scalar inputs and one or
    more scalar inputs more each time: a Python list of device scalars (losses, metrics) combined in the step
    (``sum(history)``) holds one more item each step. A carried autograd history adds the earlier steps' saved
    tensors instead (an RNN's hidden state, a feature centre: non-scalar), so it never reads so."""
    shapes = []
    for g in compiled:
        cm = getattr(g, "_canonical", None)
        if cm is None:
            return False
        params = [without_layout_text(str(p.shape)) for p in cm.module.entry.parameters()]
        shapes.append((sorted(x for x in params if not x.endswith("[]")), sum(x.endswith("[]") for x in params)))
    return len(shapes) >= 3 and all(a[0] == b[0] and b[1] > a[1] for a, b in zip(shapes, shapes[1:]))


def joins_grow(recompilation) -> bool:
    """Some change of the recompilation is a ``concatenate`` joining another number of operands (torch.stack or
    torch.cat of a Python list, :mod:`hlodiff.diff.origin_facts`' ``join_grows``), whichever cause heads it: the
    inputs a list of tensors adds each step come with the join that reads them (crossings round 5,
    x5c_grad_list_unreset: a gradient history never reset heads with its added f32[64,16] input)."""
    return any("operand_count" in ch.kinds and ch.left is not None and ch.left.opcode == "concatenate"
               for c in recompilation.causes for ch in c.origins)


def _output_shapes(graph, positions) -> list[str]:
    cm = getattr(graph, "_canonical", None)
    if cm is None:
        return []
    outputs = cm.entry.outputs()
    return [without_layout_text(str(cm.entry.insts[outputs[j]].shape)) for j in positions if j < len(outputs)]


def updated_in_place(r) -> bool:
    """Every non-scalar input added comes back as an added output of its shape, and user lines made the inputs
    (not an optimizer's or autograd's state): tensors read and rewritten on these steps only (an EMA)."""
    from hlodiff.explain.locate import outputs_added_removed

    if r.diff is None or r.diff.equal:
        return False
    added_out, removed_out = outputs_added_removed(r.diff)
    new_inputs = [o.right for c in r.causes if c.kind == "inputs" for o in c.origins
                  if o.left is None and o.right is not None and o.right.opcode == "parameter"
                  and not without_layout_text(o.right.shape).endswith("[]")]
    if not added_out or removed_out:
        return False
    if not new_inputs:  # tensors the other graph already held: its outputs, rewritten here, are all weight-shaped
        cm = getattr(r.graph, "_canonical", None)
        params = {_dims_key(str(p.shape)) for p in cm.module.entry.parameters()} if cm is not None else set()
        outs = _output_shapes(r.graph, added_out)
        return len(outs) >= 2 and all(_dims_key(o) in params and not o.endswith("[]") for o in outs) and any(
            not f.is_library for c in r.causes if c.kind == "outputs" for f in c.locations)
    if any(not o.frames or all(f.is_library for f in o.frames) for o in new_inputs):
        return False
    outs = _output_shapes(r.graph, added_out)
    for shape in (without_layout_text(i.shape) for i in new_inputs):
        if shape not in outs:
            return False
        outs.remove(shape)
    return True


def updates_removed(r) -> bool:
    """Only outputs went (none added), two or more, at least half of them shaped like a non-scalar parameter of the
    earlier graph (the rest are the backward's intermediates): the gradients and updated weights of parameters that
    stopped training."""
    from hlodiff.explain.locate import outputs_added_removed

    if r.diff is None or r.diff.equal or r.closest is None or getattr(r.closest, "_canonical", None) is None:
        return False
    added_out, removed_out = outputs_added_removed(r.diff)
    if added_out or len(removed_out) < 2:
        return False
    cm = r.closest._canonical
    params = {_dims_key(str(p.shape)) for p in cm.module.entry.parameters()
              if not without_layout_text(str(p.shape)).endswith("[]")}
    like = [s for s in _output_shapes(r.closest, removed_out) if _dims_key(s) in params]
    return len(like) >= 2 and 2 * len(like) >= len(removed_out)


def _dims_key(shape: str) -> tuple:
    """Element type and sorted dimensions: a gradient kept transposed (``f32[8,16]`` of an ``f32[16,8]`` weight)
    matches its parameter."""
    m = _DIM.search(shape)
    return (shape.split("[", 1)[0], tuple(sorted(m.group(1).split(","))) if m else ())


def graphs_after_reads(family) -> int:
    """Distinct compiled whole graphs that ran right after an early read (a cut graph) of the family. One: the read
    cuts the step at the same point every time (move it after the sync). Two or more: the value read changes what
    is traced next (a size or a branch taken from it), which no moving of the read removes."""
    from hlodiff.explain.families import is_partial

    members = family.members
    after = [g for prev, g in zip(members, members[1:]) if is_partial(prev) and not is_partial(g)]
    keys = [g.cache_key for g in after]
    # the first graph after the read never comes back while the later ones repeat: a warm-up (Adam's first step
    # creating its state, review 5 F6), not a branch the read chose
    warmup = keys[0] if len(keys) > 2 and keys[0] not in keys[1:] else None
    return len({g.cache_key for g in after if g.compiled and g.cache_key != warmup})


def reads_condition(family) -> bool:
    """Every compiled graph of the family that an early read cut short hands back only one-element booleans: the
    value read is a condition (``if not torch.isfinite(loss).item():``) that decides what the step does
    (:mod:`hlodiff.diff.condition_read`), so no moving of the read after the sync can serve it."""
    from hlodiff.diff.condition_read import condition_shapes
    from hlodiff.explain.families import is_partial

    cuts = [g for g in family.members if is_partial(g) and g.compiled]
    if not cuts:
        return False
    for g in cuts:
        cm = getattr(g, "_canonical", None)
        if cm is None:
            return False
        entry = cm.entry
        if not condition_shapes(entry.insts[n].shape for n in entry.outputs() if n in entry.insts):
            return False
    return True


_DIMS = re.compile(r"\[([\d,]*)\]")


def read_chose_ops(family) -> bool:
    """The distinct whole graphs that ran after the family's early reads use the same sizes (every dimension one of
    them has, the others have too): the value read chose which ops run (a branch: skip the optimizer step, halve a
    scale), not a length. A size taken from the read (``x[:, :int(n)]``) shows as a dimension only some of the
    graphs have (review 10, F2: a loss-scaling ``if norm.item() > t:`` was told to pad to the maximum)."""
    from hlodiff.explain.families import is_partial

    members = family.members
    after = {g.cache_key: g for prev, g in zip(members, members[1:])
             if is_partial(prev) and not is_partial(g) and g.compiled}
    if len(after) < 2:
        return False
    dims = []
    for g in after.values():
        cm = getattr(g, "_canonical", None)
        if cm is None:
            return False
        dims.append({d for comp in cm.computations.values() for inst in comp.insts.values()
                     for group in _DIMS.findall(str(inst.shape)) for d in group.split(",") if d})
    return all(d == dims[0] for d in dims[1:])


def branch_lines(family, most: int = 8) -> str:
    """The user's lines traced after the family's early reads on some steps only (``t.py:15, 19, 20``): where the
    branch the read chose differs (review 10, F2: the reviewer's :15-16 against :18-21 were never named). Read
    from the distinct whole graphs after the reads, each instruction's innermost user frame; empty when fewer than
    two such graphs, a frame is missing, or more than ``most`` lines differ (no one branch to point at). Only lines
    below the read in the code that runs both (:func:`hlodiff.hlo.model.runs_after`) count."""
    from hlodiff.explain.families import is_partial
    from hlodiff.hlo.model import runs_after, user_frame

    members = family.members
    after = {g.cache_key: g for prev, g in zip(members, members[1:])
             if is_partial(prev) and not is_partial(g) and g.compiled}
    read = next((g for g in members if is_partial(g)), None)
    read_stack = tuple(read.record.frames or ()) if read is not None else ()
    if len(after) < 2 or not read_stack:
        return ""
    seen = []
    for g in after.values():
        cm = getattr(g, "_canonical", None)
        if cm is None:
            return ""
        lines = set()
        for comp in cm.computations.values():
            for inst in comp.insts.values():
                frames = cm.frames(inst)
                f = user_frame(frames)
                # only what the code below the read traced: the branch it chose (a first step's graph also
                # computes the model's pending initialisation, lines above the read)
                if f is not None and f.line is not None and runs_after(tuple(frames), read_stack):
                    lines.add((f.file.rsplit("/", 1)[-1], f.line))
        seen.append(lines)
    differ = sorted(set().union(*seen) - set.intersection(*seen))
    if not differ or len(differ) > most:
        return ""
    by_file: dict[str, list[int]] = {}
    for name, line in differ:
        by_file.setdefault(name, []).append(line)
    return "; ".join(f"{name}:{', '.join(map(str, lines))}" for name, lines in by_file.items())


def family_first_types(recompilations) -> dict[str, str]:
    """Per family, the element type its first dtype change started from (``s64`` of ``s64[4] -> s32[4]``): the type
    the run began with, which every recompilation of the story casts back to."""
    found: dict[str, str] = {}
    for r in recompilations:
        if r.family.key in found:
            continue
        change = next((o for c in r.causes if c.kind == "dtype" for o in c.origins
                       if o.left is not None and o.right is not None), None)
        if change is not None:
            found[r.family.key] = device_cast(r, change) or change.left.shape.split("[", 1)[0].strip("(")
    return found


def device_cast(r, change) -> str:
    """The element type a torch_xla program casts a changed input to on the line that moved it to the device
    (``torch.from_numpy(b).to(dev).float()``), or "": on the side where the input has the other type, a ``convert``
    of the input's dimensions to exactly the type the input has on the other side appears on that side only, made
    at the input's own line. The program then works in that type, and the cast to keep is it, not the type the run
    happened to start with (round 5, noise_aug_float64: float64 NumPy noise on most batches, `.float()` on the device;
    the first graph's f64 made the advice "x.double()"). A promotion inside the computation (bf16 weights times an
    f32 rate) is made at another line and is not this."""
    if producer(r.graph) != "torch_xla" or change.left.opcode != "parameter" or change.right.opcode != "parameter":
        return ""
    changes = r.diff.changes if r.diff is not None else [o for c in r.causes for o in c.origins]
    one_sided = [o for o in changes if (o.left is None) != (o.right is None)]
    for mine, other, side in ((change.left, change.right, "left"), (change.right, change.left, "right")):
        target = other.shape.split("[", 1)[0].strip("(")
        for o in one_sided:
            ref = o.left if side == "left" else o.right
            if (ref is not None and ref.opcode == "convert" and ref.shape.split("[", 1)[0] == target
                    and _dims(mine.shape) is not None and _dims(ref.shape) == _dims(mine.shape) and ref.frames
                    and mine.frames
                    and (ref.frames[0].file, ref.frames[0].line) == (mine.frames[0].file, mine.frames[0].line)):
                return target
    return ""

