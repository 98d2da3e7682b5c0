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
from hlodiff.diff.merged_scalars import merged_scalars
from hlodiff.diff.shared_constants import split_constants
from hlodiff.diff.model import CAUSE_KINDS, Cause, Change, Region
from hlodiff.diff.output_causes import outputs_causes
from hlodiff.diff.autocast import lead_with_casts, matmul_precision
from hlodiff.diff.summaries import (absorb, change_stacks, inputs_cause, key_sort, locations, new_work, ops_cause,
                                   origin_cause)
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
            output_causes, output_mapping, absorbed = outputs_causes(cd)
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


# -- origins and regions ------------------------------------------------------------------------------------


def _region_causes(cd: ComputationDiff, absorbed: set[Key], context: str, regions: list[Region]) -> list[Cause]:
    """Classify each connected region, then build one cause per kind: regions of one kind are one user-level cause."""
    changes = {k: c for k, c in cd.changes.items() if k not in absorbed}
    if not changes:
        return []
    origins: dict[str, list[Change]] = defaultdict(list)
    extras: dict[str, list[Change]] = defaultdict(list)  # one-sided instructions that came with an origin
    found = list(_regions(cd, changes))
    values = [_region_values(cd, {k: changes[k] for k in region}) for region in found]
    # baked scalars are told as values only where every region is a value: where other ops came or went
    # (rev7_loss_dict: an l2 term added, the backward's ``grad * 1`` beside SGD's lr), the rewiring between a 1 and
    # an input follows from the new code, and is no value of the user's (tests/test_matchers.py)
    scalars = all(whole for _, _, whole in values)
    for region, (splits, merged, _) in zip(found, values):
        members = [changes[k] for k in region]
        kinds = _classify_region(cd, {k: changes[k] for k in region}, origins, extras,
                                 splits + (merged if scalars else []))
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


def _region_values(cd: ComputationDiff, changes: dict[Key, Change]) -> tuple[list, list, bool]:
    """A region's changes that are values: shared constants split (:mod:`hlodiff.diff.shared_constants`), baked
    scalars now read from an input both graphs have (:mod:`hlodiff.diff.merged_scalars`, over what the splits leave),
    and whether the two explain the whole region. Worked out once per region."""
    ref = functools.partial(_side_ref, cd)
    splits = split_constants(cd, changes, ref)
    explained = {k for split in splits for k in split.explained}
    rest = {k: c for k, c in changes.items() if k not in explained}
    merged = merged_scalars(cd, rest, ref) if rest else []
    return splits, merged, not rest or bool(merged)


def _classify_region(cd: ComputationDiff, changes: dict[Key, Change], origins: dict[str, list[Change]],
                     extras: dict[str, list[Change]], values: list) -> None:
    """Sort a region's changes into origins by kind; one-sided instructions join the region's leading origin.
    ``values``: the region's changes told as a value (:func:`_region_values`), each one constant cause."""
    found: dict[str, list[Change]] = defaultdict(list)
    one_sided: list[Change] = []
    explained: set[Key] = set()
    for value in values:  # a shared constant changed in one block, a baked scalar now an input: a value, not new ops
        found["constant"].append(value.change)
        explained.update(value.explained)
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
