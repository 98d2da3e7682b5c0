"""From classified changes to causes in the user's terms.

A change in one place shows up in many: a new batch size changes the shape of every instruction downstream.
Only *origins* become causes: a change that its operands do not explain (a parameter whose shape changed, a
slice whose bounds changed, a convert whose target type changed). Changes downstream of an origin, the root
tuple's bookkeeping, and instructions added around an origin (the converts of a dtype change) are folded into it.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict

from hlodiff.diff.classify import ComputationDiff, ref
from hlodiff.diff.fix_stance import FixStance
from hlodiff.diff.shared_constants import split_constants
from hlodiff.diff.model import CAUSE_KINDS, Cause, Change, Region
from hlodiff.diff.autocast import lead_with_casts, matmul_precision
from hlodiff.diff.summaries import (absorb, callers, change_stacks, inputs_cause, key_sort, locations, new_work,
                                   ops_cause, origin_cause)
from hlodiff.hlo.attributes import CALL_KEYS
from hlodiff.hlo.literal import ratio, real, size

_CALL_KEYS = frozenset(CALL_KEYS)

_PROPAGATING = {"shape", "element_type", "layout"}


Key = tuple[str | None, str | None]


def derive_causes(cds: list[ComputationDiff]) -> tuple[list[Cause], list[tuple[int, int]], list[Region]]:
    """Causes over all compared computation pairs, the entry's output mapping (left index, right index), and
    the connected regions of change they were derived from."""
    causes: list[Cause] = []
    output_mapping: list[tuple[int, int]] = []
    regions: list[Region] = []
    for index, cd in enumerate(cds):
        context = "" if cd.caller is None else f" in %{cd.left.name} (called by %{cd.caller[1]})"
        absorbed: set[Key] = set()
        if index == 0:
            output_causes, output_mapping, absorbed = _outputs(cd)
            causes.extend(output_causes)
        causes.extend(_region_causes(cd, absorbed, context, regions))
    # Outputs or parameters in another order are secondary when the computation itself changed too.
    changed = any(c.kind != "reordered" for c in causes)
    causes.sort(key=lambda c: (changed and c.kind == "reordered", CAUSE_KINDS.index(c.kind), _first_location(c),
                               c.summary))
    _slice_length_leads(causes)
    return causes, output_mapping, regions


def _slice_length_leads(causes: list[Cause]) -> None:
    """A slice whose bounds changed its length (``x[:n]``) is where the new shapes come from: it leads, and the
    shape cause says it follows from it instead of pointing at the first op that consumed the slice."""
    resized = next((c for c in causes if c.kind == "attribute" and any(
        "shape" in o.kinds and any(k in o.kinds for k in _SLICE_KEYS) for o in c.origins)), None)
    shapes = [c for c in causes if c.kind == "shape"]
    if resized is None or not shapes:
        return
    causes.remove(resized)
    causes.insert(causes.index(shapes[0]), resized)
    for cause in shapes:
        cause.write_fix("follows from the slice change above: its new length sets these shapes", FixStance.FOLLOWS)
        cause.fix_is_final = True


_SLICE_KEYS = ("attribute:slice", "attribute:dynamic_slice_sizes")


def _first_location(cause: Cause) -> tuple:
    if cause.locations:
        f = cause.locations[0]
        return (f.file, f.line or 0)
    return ("~", 0)


# -- outputs ----------------------------------------------------------------------------------------------------


def _outputs(cd: ComputationDiff) -> tuple[list[Cause], list[tuple[int, int]], set[Key]]:
    m = cd.matching
    louts, routs = cd.left.outputs(), cd.right.outputs()
    rpos: dict[str, list[int]] = defaultdict(list)
    for j, name in enumerate(routs):
        rpos[name].append(j)
    mapping: list[tuple[int, int]] = []
    removed: list[int] = []
    for i, name in enumerate(louts):
        partner = m.l2r.get(name)
        if partner is not None and rpos.get(partner):
            mapping.append((i, rpos[partner].pop(0)))
        else:
            removed.append(i)
    paired_right = {j for _, j in mapping}
    added = [j for j in range(len(routs)) if j not in paired_right]
    for i, j in _extended_outputs(cd, louts, routs, removed, added):
        mapping.append((i, j))  # the same output with instructions added or removed on its path: ops, not outputs
        removed.remove(i)
        added.remove(j)
    mapping.sort()
    causes: list[Cause] = []
    absorbed: set[Key] = set()
    if cd.left.insts[cd.left.root].opcode == "tuple" and cd.right.insts[cd.right.root].opcode == "tuple":
        absorbed.add((cd.left.root, m.l2r.get(cd.left.root)))  # the output list itself: explained by the outputs
    if added or removed:
        cone_l = _exclusive_cone(cd.left, [louts[i] for i in removed], m.l2r)
        cone_r = _exclusive_cone(cd.right, [routs[j] for j in added], m.r2l)
        absorbed |= {(n, None) for n in cone_l} | {(None, n) for n in cone_r}
        causes.append(_outputs_cause(cd, [louts[i] for i in removed], [routs[j] for j in added], cone_l, cone_r,
                                     removed, added))
    moved = _moved_outputs(mapping)
    if moved:
        causes.append(Cause(
            "reordered",
            f"same computation, outputs in another order: {len(moved)} of {len(mapping)} moved (the rest keep "
            "their order): "
            + ", ".join(f"{i}->{j}" for i, j in moved[:8]) + (" ..." if len(moved) > 8 else ""),
            instructions=[(louts[i], routs[j]) for i, j in moved]))
    return causes, mapping, absorbed


def _extended_outputs(cd: ComputationDiff, louts: list[str], routs: list[str], removed: list[int],
                      added: list[int]) -> list[tuple[int, int]]:
    """Pairs (removed i, added j) where one output is computed from the other's value: ``x`` became ``x + 1``
    (or the reverse). Output positions are tried nearest first."""
    m = cd.matching
    pairs: list[tuple[int, int]] = []
    free = list(added)
    for i in removed:
        for j in sorted(free, key=lambda j: abs(j - i)):
            lp, rp = m.l2r.get(louts[i]), m.r2l.get(routs[j])
            if (lp is not None and _depends_on(cd.right, routs[j], lp)) or \
                    (rp is not None and _depends_on(cd.left, louts[i], rp)):
                pairs.append((i, j))
                free.remove(j)
                break
    return pairs


def _depends_on(cc, start: str, target: str, limit: int = 10_000) -> bool:
    """Whether ``start`` is computed from ``target`` (bounded walk over operands)."""
    return computed_from(cc, [start], {target}, limit)


def computed_from(cc, starts, targets: set[str], limit: int = 10_000) -> bool:
    """Whether one of ``starts`` is computed from one of ``targets``: a walk over operands, bounded to ``limit``
    instructions (a 35K-instruction graph must not be walked whole for one question)."""
    stack, seen = list(starts), set()
    while stack and len(seen) < limit:
        node = stack.pop()
        if node in targets:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(cc.operands.get(node, ()))
    return False


def _exclusive_cone(cc, outputs: list[str], partner: dict[str, str]) -> set[str]:
    """Unmatched instructions that exist only to compute ``outputs``: the work that came or went with them.

    Walks down from the outputs through unmatched operands, keeping an instruction once every one of its users
    is already in the cone (or is the root tuple).
    """
    cone: set[str] = {o for o in outputs if o not in partner}
    stack = [op for o in cone for op in cc.operands[o]]
    while stack:
        name = stack.pop()
        if name in cone or name in partner:
            continue
        users = cc.users(name)
        if users and all(u in cone or u == cc.root for u in users):
            cone.add(name)
            stack.extend(cc.operands[name])
    return cone


def _moved_outputs(mapping: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pairs outside the longest run kept in order (what a user would call "moved")."""
    if not mapping:
        return []
    js = [j for _, j in mapping]
    keep = _longest_increasing(js)
    return [pair for k, pair in enumerate(mapping) if k not in keep]


def _longest_increasing(values: list[int]) -> set[int]:
    import bisect

    tails: list[int] = []
    tails_idx: list[int] = []
    prev = [-1] * len(values)
    for k, v in enumerate(values):
        pos = bisect.bisect_left(tails, v)
        if pos == len(tails):
            tails.append(v)
            tails_idx.append(k)
        else:
            tails[pos] = v
            tails_idx[pos] = k
        prev[k] = tails_idx[pos - 1] if pos else -1
    keep: set[int] = set()
    k = tails_idx[-1] if tails_idx else -1
    while k >= 0:
        keep.add(k)
        k = prev[k]
    return keep


def _outputs_cause(cd, louts, routs, cone_l, cone_r, removed, added) -> Cause:
    parts = []
    if added:
        shapes = ", ".join(str(cd.right.insts[n].shape) for n in routs[:4]) + (" ..." if len(routs) > 4 else "")
        parts.append(f"{len(added)} output{'s' if len(added) != 1 else ''} added ({shapes})")
    if removed:
        shapes = ", ".join(str(cd.left.insts[n].shape) for n in louts[:4]) + (" ..." if len(louts) > 4 else "")
        parts.append(f"{len(removed)} output{'s' if len(removed) != 1 else ''} removed ({shapes})")
    work = len(cone_l) + len(cone_r)
    summary = "; ".join(parts)
    if work:
        summary += f", with {work} instruction{'s' if work != 1 else ''} computing only them"
    # The output producers say where the values come from, whether or not they exist on the other side too.
    stacks = [cd.rcm.frames(cd.right.insts[n]) for n in routs] + [cd.lcm.frames(cd.left.insts[n]) for n in louts]
    if not any(stacks):
        stacks = [cd.rcm.frames(cd.right.insts[n]) for n in sorted(cone_r)]
        stacks += [cd.lcm.frames(cd.left.insts[n]) for n in sorted(cone_l)]
    pairs = [(n, None) for n in louts] + [(None, n) for n in routs]
    user, library = locations(stacks)
    return Cause("outputs", summary, user, sorted(set(pairs), key=key_sort), library, callers=callers(stacks),
                 added=bool(added), removed=bool(removed),
                 own_work=work, scalar_outputs=all(str(side.insts[n].shape).split("{", 1)[0].endswith("[]")
                                                   for side, names in ((cd.left, louts), (cd.right, routs))
                                                   for n in names))


# -- origins and regions ------------------------------------------------------------------------------------


def _region_causes(cd: ComputationDiff, absorbed: set[Key], context: str, regions: list[Region]) -> list[Cause]:
    """Classify each connected region, then build one cause per kind: regions of one kind are one user-level cause."""
    changes = {k: c for k, c in cd.changes.items() if k not in absorbed}
    if not changes:
        return []
    origins: dict[str, list[Change]] = defaultdict(list)
    extras: dict[str, list[Change]] = defaultdict(list)  # one-sided instructions that came with an origin
    for region in _regions(cd, changes):
        members = [changes[k] for k in region]
        kinds = _classify_region(cd, {k: changes[k] for k in region}, origins, extras)
        regions.append(_region(cd.left.name, members, kinds))
    causes: dict[str, Cause] = {}
    for kind in CAUSE_KINDS:
        items = origins.get(kind)
        if not items:
            continue
        if kind == "inputs":
            causes[kind] = inputs_cause(items, context)
        elif kind == "ops" and (all(c.side != "changed" for c in items) or new_work(items)):
            causes[kind] = ops_cause(items, context)
        else:
            causes[kind] = origin_cause(kind, items, context)
        if extras.get(kind):
            absorb(causes[kind], extras[kind])
            if kind == "dtype":
                lead_with_casts(causes[kind], extras[kind])
        if kind == "dtype":
            matmul_precision(causes[kind], cd.left, cd.right)
    if "inputs" not in causes and extras.get("inputs"):
        causes["inputs"] = inputs_cause(origins.get("inputs", []), context)
    _fold_derived_constants(causes)
    return list(causes.values())


def _classify_region(cd: ComputationDiff, changes: dict[Key, Change], origins: dict[str, list[Change]],
                     extras: dict[str, list[Change]]) -> None:
    """Sort a region's changes into origins by kind; one-sided instructions join the region's leading origin."""
    found: dict[str, list[Change]] = defaultdict(list)
    one_sided: list[Change] = []
    explained: set[Key] = set()
    for split in split_constants(cd, changes, functools.partial(_side_ref, cd)):
        found["constant"].append(split.change)  # a shared constant changed in one block: a value, not new ops
        explained.update(split.explained)
    for key, change in changes.items():
        if key in explained:
            continue
        if change.side != "changed":
            one_sided.append(change)
            continue
        kind = _origin_kind(cd, key, change, changes)
        if kind is not None:
            found[kind].append(change)
    found["inputs"] = [c for c in one_sided if (c.left or c.right).opcode == "parameter"]
    others = [c for c in one_sided if (c.left or c.right).opcode != "parameter"]
    leading = next((k for k in CAUSE_KINDS if found.get(k) and k != "inputs"), None)
    if leading is None and found["inputs"] and _replaced_by_inputs(found["inputs"], others):
        leading = "inputs"  # values the graph computed itself now come in as inputs (or the reverse)
    if others and leading is not None:
        extras[leading].extend(others)
    elif others:
        found["ops"].extend(others)
    for kind, items in found.items():
        origins[kind].extend(items)
    return [k for k in CAUSE_KINDS if found.get(k)]


def _side_ref(cd: ComputationDiff, side: str, name: str):
    cm, cc = (cd.lcm, cd.left) if side == "left" else (cd.rcm, cd.right)
    return ref(cm, cc, cc.insts[name])


def _region(computation: str, members: list[Change], kinds: list[str]) -> Region:
    """What a user scans a region for: its size, op types, shapes and where in their code it is."""
    sides = [c.right or c.left for c in members]
    opcodes = Counter(s.opcode for s in sides)
    shapes = sorted({s.shape for s in sides}, key=lambda t: (len(t), t))[:5]
    user, _ = locations(change_stacks(members))
    return Region(computation, len(members), kinds, dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))),
                  shapes, user[:4])


def _fold_derived_constants(causes: dict[str, Cause]) -> None:
    """Fold constants that merely follow a shape change (a mean's 1/N, a count N) into the shape cause.

    torch_xla bakes such scalars into the graph, so a new batch size changes them too; reporting them as
    separate baked constants would send the user looking for a Python scalar that is not there.
    """
    shape, constant = causes.get("shape"), causes.get("constant")
    if shape is None or constant is None:
        return
    ratios = set()
    for change in shape.origins:
        a, b = _elements(change.left.shape), _elements(change.right.shape)
        if a and b:
            ratios |= {round(a / b, 9), round(b / a, 9)}
        ratios |= {round(x / y, 9) for x, y in zip(_dims(change.left.shape), _dims(change.right.shape)) if x and y}
    derived = [c for c in constant.origins
               if (r := _value_ratio(c)) is not None and any(abs(r - x) <= 1e-6 * abs(x) for x in ratios)]
    if not derived or len(derived) != len(constant.origins):
        return
    del causes["constant"]
    shape.summary += f" (and {len(derived)} constant{'s' if len(derived) != 1 else ''} derived from the size)"
    shape.instructions = sorted(set(shape.instructions) | set(constant.instructions), key=key_sort)


def _elements(shape_text: str) -> int:
    n = 1
    for d in _dims(shape_text):
        n *= d
    return n


def _dims(shape_text: str) -> list[int]:
    inner = shape_text.partition("[")[2].partition("]")[0]
    return [n for x in inner.split(",") if (n := size(x)) is not None]


def _value_ratio(change: Change) -> float | None:
    a, b = change.details.get("literal", ("", ""))
    x, y = real(a), real(b)
    r = ratio(x, y) if x is not None and y is not None else None
    return round(r, 9) if r is not None else None


def _regions(cd: ComputationDiff, changes: dict[Key, Change]) -> list[list[Key]]:
    """Connected groups of changes, neighbours by operand edges on either side. A union-find over the changes
    (the groups are sorted afterwards, so the order edges are found in does not matter): networkx's connected
    components gave the same groups, and importing it cost 0.1 s of a large ``compare``."""
    by_left = {k[0]: k for k in changes if k[0] is not None}
    by_right = {k[1]: k for k in changes if k[1] is not None}
    parent: dict[Key, Key] = {key: key for key in changes}

    def find(key: Key) -> Key:
        root = key
        while parent[root] != root:
            root = parent[root]
        while parent[key] != root:  # path compression
            parent[key], key = root, parent[key]
        return root

    for key in changes:
        lname, rname = key
        for names, cc, by in ((lname, cd.left, by_left), (rname, cd.right, by_right)):
            if names is None:
                continue
            for nb in _neighbours(cc, names):
                other = by.get(nb)
                if other is not None:
                    a, b = find(key), find(other)
                    if a != b:
                        parent[a] = b
    groups: dict[Key, list[Key]] = {}
    for key in changes:
        groups.setdefault(find(key), []).append(key)
    regions = [sorted(c, key=key_sort) for c in groups.values()]
    regions.sort(key=lambda r: key_sort(r[0]))
    return regions


def _neighbours(cc, name: str):
    yield from cc.operands[name]
    yield from cc.users(name)


def _replaced_by_inputs(inputs: list[Change], others: list[Change]) -> bool:
    """Inputs added where instructions were removed (or removed where added): e.g. an optimizer's state that the
    first step creates in the graph (zeros, broadcasts) and later steps receive as inputs."""
    added_inputs = any(c.right is not None for c in inputs)
    removed_inputs = any(c.left is not None for c in inputs)
    removed_ops = all(c.left is not None for c in others)
    added_ops = all(c.right is not None for c in others)
    return bool(others) and ((added_inputs and not removed_inputs and removed_ops)
                             or (removed_inputs and not added_inputs and added_ops))


def _origin_kind(cd: ComputationDiff, key: Key, change: Change, changes: dict[Key, Change]) -> str | None:
    """The cause kind this change originates, or ``None`` when its operands explain it."""
    kinds = set(change.kinds)
    if "opcode" in kinds:
        ops = {change.left.opcode, change.right.opcode}
        return "constant" if ops == {"parameter", "constant"} else "ops"
    if "sharding" in kinds:
        return "sharding"
    attrs = [k for k in kinds if k.startswith("attribute:")]
    callee_only = attrs and all(k.split(":", 1)[1] in _CALL_KEYS for k in attrs)
    if attrs and not callee_only:
        if {"shape", "*"} & _upstream_kinds(cd, key[0], changes):
            # Bounds, dimensions and sizes follow the operands' new shapes (slicing n rows of a longer batch):
            # the shape's origin explains them.
            return None
        return "attribute"
    if "literal" in kinds:
        return "constant"
    if "parameter_number" in kinds:
        return "reordered"
    upstream = _upstream_kinds(cd, key[0], changes)
    if "operand_count" in kinds or ("operands" in kinds and "*" not in upstream):
        return "ops"
    for kind, cause in (("shape", "shape"), ("element_type", "dtype"), ("layout", "layout")):
        if kind in kinds and kind not in upstream and "*" not in upstream:
            return cause
    return None


def _upstream_kinds(cd: ComputationDiff, lname: str, changes: dict[Key, Change]) -> set[str]:
    """Kinds of change among an instruction's operands; ``*`` when an operand exists on one side only."""
    m = cd.matching
    found: set[str] = set()
    for lo in cd.left.operands[lname]:
        ro = m.l2r.get(lo)
        if ro is None:
            found.add("*")
            continue
        change = changes.get((lo, ro)) or cd.changes.get((lo, ro))
        if change is not None:
            found |= set(change.kinds) & _PROPAGATING
            if "opcode" in change.kinds or "attribute" in " ".join(change.kinds):
                found |= _PROPAGATING
    rname = m.l2r[lname]
    for ro in cd.right.operands[rname]:
        if ro not in m.r2l:
            found.add("*")
    return found
