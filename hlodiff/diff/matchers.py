"""Instruction matching between two canonical computations, in the order XLA's hlo_diff taught us works:

1. exact: identical subgraph hashes (the bulk of any two steps of one training loop);
2. top-down: from matched users to their operands at the same positions (finds what changed in place,
   including a parameter that became a baked constant);
3. bottom-up: from matched operands to their users (finds changed instructions whose inputs are known);
4. leftovers: parameters and constants by shape and use, other instructions by opcode, shape and source line.

Each matcher only adds pairs; an instruction is matched at most once. Where several candidates would do, the
choice is made by content, then metadata, then position (:mod:`hlodiff.diff.similarity`). The pairs live in a
:class:`~hlodiff.diff.mapping.Matching`.
"""

from __future__ import annotations

import re

import functools
from collections import defaultdict

from hlodiff.accel import native
from hlodiff.diff.mapping import Matching
from hlodiff.diff.similarity import _source_key, assign_by_content, root_has_better_partner, tie_break
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule
from hlodiff.graph.fingerprint import _postorder


def match_computations(left: CanonicalComputation, right: CanonicalComputation,
                       left_module: CanonicalModule | None = None,
                       right_module: CanonicalModule | None = None) -> Matching:
    m = Matching(left, right, left_module=left_module, right_module=right_module)
    left_order = _postorder(left)
    right_order = _postorder(right)
    roots_later = root_has_better_partner(m)
    if not roots_later:
        m.add(left.root, right.root, "root")
    match_exact(m, left_order, right_order)
    if roots_later:
        m.add(left.root, right.root, "root")  # only if exact matching found neither a better partner
    match_top_down(m, left_order)
    match_bottom_up(m, left_order, right_order)
    match_top_down(m, left_order)  # users paired bottom-up anchor their operands before any pairing by shape
    if match_leftovers(m, left_order, right_order):
        match_top_down(m, left_order)  # new pairs may anchor operands still unmatched
    unbake_moved_inputs(m)
    return m


def unbake_moved_inputs(m: Matching) -> None:
    """Undo a top-down pair of a parameter with a constant when the constant's side still has an unpaired
    parameter of the same shape made at the same source line: that parameter is the same input, moved to other
    users (a regulariser on some steps adds ``x * 1`` beside SGD's ``-lr``); the constant is new, not the input
    baked. Without this the report claims a value baked in (review 7: "the lr at the start of a warm-up") for a run
    whose lr never changed. The one place a pair is undone (:meth:`Matching.drop`): after every matcher ran, so
    nothing built on it."""
    for side, other, to, back in ((m.left, m.right, m.l2r, m.r2l), (m.right, m.left, m.r2l, m.l2r)):
        for param in side.parameters():
            const = to.get(param)
            if const is None or other.insts[const].opcode != "constant":
                continue
            twin = _same_input(side, other, param, back)
            if twin is None:
                continue
            left, right = (param, twin) if side is m.left else (twin, param)
            m.drop(param if side is m.left else const)
            m.add(left, right, "leftover")


def _same_input(side: CanonicalComputation, other: CanonicalComputation, param: str,
                back: dict[str, str]) -> str | None:
    """The one unpaired parameter of ``other`` with ``param``'s shape and source line, if exactly one."""
    where = _source_key(side, param)
    if where is None:
        return None
    shape = side.insts[param].shape
    twins = [p for p in other.parameters() if p not in back and other.insts[p].shape == shape
             and _source_key(other, p) == where]
    return twins[0] if len(twins) == 1 else None


def match_exact(m: Matching, left_order: list[str], right_order: list[str]) -> None:
    """Pair nodes with equal subgraph hashes, users first, then descend through equal subgraphs positionally."""
    by_hash, left_by_hash = _by_hash(right_order, m.right.anon), _by_hash(left_order, m.left.anon)
    partners: dict[str, str] = {}  # chosen among identical candidates, once per group

    def tied(name: str, h: str, rights: list[str]) -> None:
        """A hash several nodes share: pair the group by tie-breaking, once, then this node with its partner."""
        partner = partners.get(name)
        if partner is None or partner in m.r2l:
            rights = [r for r in _names(rights) if r not in m.r2l]
            lefts = [n for n in _names(left_by_hash[h]) if n not in m.l2r]
            if not rights or len(rights) != len(lefts):
                return
            partners.update(tie_break(m.left, m.right, lefts, rights))
            partner = partners[name]
        _match_equal_subgraphs(m, name, partner)

    if (pairs := m.positions()) is not None:
        m.made("exact")
        native.pairs_exact_walk(pairs, left_order, m.left.anon, by_hash, left_by_hash, tied)
    elif native is not None:
        m.made("exact")
        native.exact_walk(left_order, m.left.anon, by_hash, left_by_hash, m.l2r, m.r2l, m.left.operands,
                          m.right.operands, tied)
    else:
        for name in reversed(left_order):  # users before operands
            if name in m.l2r:
                continue
            h = m.left.anon[name]
            rights = by_hash.get(h)
            if not rights:
                continue
            if len(rights) == 1 and len(left_by_hash[h]) == 1:
                if rights[0] not in m.r2l:
                    _match_equal_subgraphs(m, name, rights[0])
                continue
            tied(name, h, rights)
    # The root pair may have equal hashes; descend through it too.
    if m.left.anon[m.left.root] == m.right.anon[m.right.root]:
        _match_equal_subgraphs(m, m.left.root, m.right.root, force=True)


def _by_hash(order: list[str], hashes: dict[str, str]) -> dict[str, list[str] | str]:
    """Names grouped by hash, each group in ``order``; the accelerator's groups of one name are that name (most
    nodes of a big graph have a hash of their own: no list made per node), read through :func:`_names`."""
    if native is not None:
        return native.group_by(order, hashes)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in order:
        groups[hashes[name]].append(name)
    return groups


def _names(group: list[str] | str) -> list[str]:
    """The names of a group of :func:`_by_hash`."""
    return [group] if isinstance(group, str) else group


def _match_equal_subgraphs(m: Matching, left: str, right: str, force: bool = False) -> None:
    if (pairs := m.positions()) is not None:
        m.made("exact")
        native.pairs_match_equal(pairs, left, right, force)
        return
    if native is not None:
        m.made("exact")
        native.match_equal(m.l2r, m.r2l, m.left.operands, m.right.operands, left, right, force)
        return
    stack = [(left, right)]
    while stack:
        lname, rname = stack.pop()
        if not m.add(lname, rname, "exact") and not (force and m.l2r.get(lname) == rname):
            continue
        force = False
        for lo, ro in zip(m.left.operands[lname], m.right.operands[rname]):
            if lo not in m.l2r and ro not in m.r2l:
                stack.append((lo, ro))


def _compatible(m: Matching, lname: str, rname: str) -> bool:
    lop, rop = m.left.insts[lname].opcode, m.right.insts[rname].opcode
    if lop == rop:
        return True
    return {lop, rop} == {"parameter", "constant"} or m.left.anon[lname] == m.right.anon[rname]


def match_top_down(m: Matching, left_order: list[str]) -> None:
    """For each matched pair, users first, pair unmatched operands at the same positions."""
    l2r, r2l, settled = m.l2r, m.r2l, m.settled
    left_operands, right_operands = m.left.operands, m.right.operands
    if (pairs := m.positions()) is not None:  # the same walk over positions (pairs.c)
        m.made("top_down")
        native.pairs_top_down(pairs, left_order, m.left.root, functools.partial(_pair_free_operands, m),
                              m.left.insts, m.right.insts, m.left.anon, m.right.anon, left_operands, right_operands)
        return
    if native is not None:
        # One free pair (most of them), or lists of other lengths: paired in C as _pair_free_operands would; the
        # callback decides where several operands may have traded places.
        m.made("top_down")
        native.top_down(left_order, l2r, r2l, settled, left_operands, right_operands, m.left.root,
                        functools.partial(_pair_free_operands, m), m.left.insts, m.right.insts, m.left.anon,
                        m.right.anon)
        return
    for lname in reversed(left_order):
        rname = l2r.get(lname)
        if rname is None or lname in settled:
            continue
        lops, rops = left_operands[lname], right_operands[rname]
        if len(lops) != len(rops) and lname == m.left.root:
            continue  # outputs were added or removed: positions mean nothing
        free = [(lo, ro) for lo, ro in zip(lops, rops) if lo not in l2r and ro not in r2l]
        if not free:
            settled.add(lname)
            continue
        _pair_free_operands(m, lname, rname, free)


def _pair_free_operands(m: Matching, lname: str, rname: str, free: list[tuple[str, str]]) -> None:
    """Pair a matched pair's operands that are free on both sides at equal positions (by content when several
    may have traded places), each when compatible."""
    if len(free) > 1 and len(m.left.operands[lname]) == len(m.right.operands[rname]):
        free = assign_by_content(m, [lo for lo, _ in free], [ro for _, ro in free])
    for lo, ro in free:
        if lo not in m.l2r and ro not in m.r2l and _compatible(m, lo, ro):
            m.add(lo, ro, "top_down")


def match_bottom_up(m: Matching, left_order: list[str], right_order: list[str]) -> None:
    """Pair unmatched users of matched operands when opcodes agree; best operand agreement wins."""
    position = None  # right_order's positions, built once a tie needs them (most calls pair nothing)
    # Only the names unpaired at the start: a pass pairs each left name only when it reaches it.
    for lname in _unpaired_of(m, left_order, 0):
        linst = m.left.insts[lname]
        candidates: dict[str, int] = {}
        for pos, lo in enumerate(m.left.operands[lname]):
            ro = m.l2r.get(lo)
            if ro is None:
                continue
            for ruser in m.right.users(ro):
                if ruser in m.r2l or m.right.insts[ruser].opcode != linst.opcode:
                    continue
                rops = m.right.operands[ruser]
                score = candidates.get(ruser, 0) + (2 if pos < len(rops) and rops[pos] == ro else 1)
                candidates[ruser] = score
        if candidates:
            if position is None:
                position = {name: i for i, name in enumerate(right_order)}
            best = max(candidates, key=lambda r: (candidates[r] + (m.right.insts[r].shape == linst.shape),
                                                  -position[r]))
            m.add(lname, best, "bottom_up")


def match_leftovers(m: Matching, left_order: list[str], right_order: list[str]) -> int:
    """Remaining parameters and constants by shape (and use), other instructions by opcode, shape and source.

    Returns how many pairs it added.
    """
    added = 0
    # The unmatched, in order, once: each key's pass then walks these few, not both whole computations.
    left_free = _unpaired_of(m, left_order, 0)
    right_free = None
    for key in (_param_key, _param_dims_key, _param_argument_key, _constant_key, _op_key):
        lefts: dict[tuple, list[str]] = defaultdict(list)
        rights: dict[tuple, list[str]] = defaultdict(list)
        for name in left_free:
            if name not in m.l2r and (k := key(m.left, name)) is not None:
                lefts[k].append(name)
        if not lefts:
            continue
        if right_free is None:
            right_free = _unpaired_of(m, right_order, 1)
        for name in right_free:
            if name not in m.r2l and (k := key(m.right, name)) is not None:
                rights[k].append(name)
        for k, names in lefts.items():
            others = rights.get(k, [])
            if key is _op_key and (len(names) != 1 or len(others) != 1):
                continue
            for lname, rname in tie_break(m.left, m.right, names, others):
                added += m.add(lname, rname, "leftover")
    return added


def _unpaired_of(m: Matching, order: list[str], side: int) -> list[str]:
    """The names of ``order`` without a pair on ``side`` (0: left, 1: right), in order: read by position when the
    accelerator mirrors the pairs."""
    if (pairs := m.positions()) is not None:
        return native.pairs_unpaired(pairs, order, side)
    return _unpaired(order, m.r2l if side else m.l2r)


def _unpaired(order: list[str], paired: dict[str, str]) -> list[str]:
    """The names of ``order`` not in ``paired``, in order."""
    if native is not None:
        return native.unpaired(order, paired)
    return [name for name in order if name not in paired]


def _param_key(cc: CanonicalComputation, name: str) -> tuple | None:
    inst = cc.insts[name]
    return ("parameter", inst.shape) if inst.opcode == "parameter" else None


def _param_dims_key(cc: CanonicalComputation, name: str) -> tuple | None:
    """Parameters whose element type changed (a float64 batch where float32 was) still pair by their dims."""
    inst = cc.insts[name]
    return ("parameter", inst.shape.dims, inst.shape.dynamic) if inst.opcode == "parameter" else None


def _param_argument_key(cc: CanonicalComputation, name: str) -> tuple | None:
    """Parameters of one JAX argument (its name, ``op_name="preds"``, and element type) whose length changed still
    pair when nothing in one graph reads it: ``jnp.concatenate([preds, new])`` drops an empty ``preds``, so the
    first call's i32[0] argument has no users to pair it by (crossings round 6, ``x6c_jx_preds_concat_eval``)."""
    inst = cc.insts[name]
    if inst.opcode != "parameter":
        return None
    argument = _argument_name(inst.attrs.get("metadata"))
    return ("parameter", argument, inst.shape.element_type, len(inst.shape.dims)) if argument else None


def _argument_name(metadata: str | None) -> str | None:
    """The Python argument name JAX writes as a parameter's only metadata (``{op_name="preds"}``); None for any
    other metadata (a path of ops, a source line: torch_xla's parameters carry the line of an op that read them)."""
    if not metadata or "source_file" in metadata or "op_type" in metadata:
        return None
    found = re.fullmatch(r'\{\s*op_name="([A-Za-z_][A-Za-z0-9_.\[\]\'"]*)"\s*\}', metadata.strip())
    if found is None or found.group(1).startswith("jit("):
        return None
    return found.group(1)


def _constant_key(cc: CanonicalComputation, name: str) -> tuple | None:
    inst = cc.insts[name]
    return ("constant", inst.shape.dims, inst.literal) if inst.opcode == "constant" else None


def _op_key(cc: CanonicalComputation, name: str) -> tuple | None:
    inst = cc.insts[name]
    if inst.opcode in ("parameter", "constant"):
        return None
    return (inst.opcode, inst.shape, inst.attrs.get("metadata"))
