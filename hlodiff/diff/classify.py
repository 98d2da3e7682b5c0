"""Say what differs between two matched instructions, and list the instructions found on one side only.

Called computations are compared by their hashes; when a matched caller (a while loop, a reduce) calls
computations that differ, the callees are matched and classified too, so a change inside a loop body is
reported where it is rather than as "the while loop changed".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.accel import native
from hlodiff import progress
from hlodiff.diff.mapping import Matching
from hlodiff.diff.matchers import match_computations
from hlodiff.diff.model import Change, InstructionRef
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule, graph_index
from hlodiff.hlo.attributes import CALL_KEYS, parse_frontend_attributes
from hlodiff.errors import HloParseError
from hlodiff.hlo.literal import elided
from hlodiff.hlo.model import Instruction, Shape

_CALL_KEYS = frozenset(CALL_KEYS)
_SKIP_KEYS = frozenset({"metadata", "control-predecessors"})
# frontend_attributes entries that only say where a value is placed: JAX's Shardy (0.7+) writes each parameter's
# NamedSharding as `xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {}]>"` beside HLO's `sharding={...}`. A
# mesh whose axes are named otherwise changes only this entry (same devices, same HLO sharding): it is a sharding
# change, placed by the caller, never "an op attribute following a Python value" (round 16).
SHARDING_FRONTEND_KEYS = frozenset({"xla.sdy.sharding"})


@dataclass(slots=True)
class ComputationDiff:
    """One matched pair of computations: the matching, the changes, and the callee pairs that differ."""

    matching: Matching
    lcm: CanonicalModule
    rcm: CanonicalModule
    changes: dict[tuple[str | None, str | None], Change] = field(default_factory=dict)
    caller: tuple[str, str] | None = None  # (left computation, instruction) that calls this pair

    @property
    def left(self) -> CanonicalComputation:
        return self.matching.left

    @property
    def right(self) -> CanonicalComputation:
        return self.matching.right


def classify_module(lcm: CanonicalModule, rcm: CanonicalModule) -> list[ComputationDiff]:
    """Match and classify the entry computations and, recursively, differing callees of matched callers."""
    results: list[ComputationDiff] = []
    seen: set[tuple[str, str]] = set()
    queue: list[tuple[CanonicalComputation, CanonicalComputation, tuple[str, str] | None]] = [
        (lcm.entry, rcm.entry, None)]
    size = len(lcm.entry.insts) + len(rcm.entry.insts)
    with progress.stage("matching instructions", size, unit="computations") as bar:
        while queue:
            left, right, caller = queue.pop(0)
            if (left.name, right.name) in seen:
                continue
            seen.add((left.name, right.name))
            cd = ComputationDiff(match_computations(left, right, lcm, rcm), lcm, rcm, caller=caller)
            _classify(lcm, rcm, cd, queue)
            results.append(cd)
            bar.advance()
    return results


def ref(cm: CanonicalModule, cc: CanonicalComputation, inst: Instruction) -> InstructionRef:
    frames = cm.frames(inst)
    if not frames and inst.opcode in ("parameter", "constant") and inst.name in cc.insts:
        frames = _frames_from_users(cm, cc, inst.name)
    target = inst.attrs.get("custom_call_target", "").strip('"') if inst.opcode == "custom-call" else ""
    return InstructionRef(cc.name, inst.name, inst.opcode, str(inst.shape), tuple(frames), inst.line, target)


def _frames_from_users(cm: CanonicalModule, cc: CanonicalComputation, name: str) -> list:
    """Where an input or a literal without metadata enters the user's code, from the first user that knows.

    JAX puts no frames on parameters and constants; the first user's user frames stand for them, innermost
    first: the use inside the jitted function is the location, the call that passed the value in is on its stack.
    """
    queue, seen = sorted(cc.users(name)), {name}
    while queue and len(seen) < 64:  # nearest users first: broadcasts and converts often carry no metadata
        user = queue.pop(0)
        if user in seen:
            continue
        seen.add(user)
        mine = [f for f in cm.frames(cc.insts[user]) if not f.is_library]
        if mine:
            return mine
        queue.extend(sorted(cc.users(user)))
    return []


def _classify(lcm: CanonicalModule, rcm: CanonicalModule, cd: ComputationDiff, queue: list) -> None:
    m = cd.matching
    l2r_get = m.l2r.get
    linsts, rinsts, llabels, rlabels = m.left.insts, m.right.insts, m.left.labels, m.right.labels
    lops_of, rops_of = m.left.operands, m.right.operands
    by_number = not lcm.options.parameter_order
    if native is not None and not by_number:  # the pairs with equal labels and paired operands left out, in C
        # over the two graph indexes when both sides have one (positions instead of probes of name-keyed maps)
        # (and the instructions without a pair, read from a flag per position)
        if (mirror := m.mirror()) is not None:  # the matchers' pairs as positions: no table of names made again
            indexed = native.pairs_unsettled(mirror, llabels, rlabels, linsts, rinsts)
        else:
            lix, rix = graph_index(m.left), graph_index(m.right)
            indexed = native.index_unsettled(m.l2r, lix, rix, llabels, rlabels, linsts, rinsts) if lix and rix else None
        pairs = indexed[0] if indexed else native.unsettled_pairs(m.l2r, llabels, rlabels, lops_of, rops_of)
    else:
        indexed = None
        pairs = m.l2r.items()
    for lname, rname in pairs:
        li, ri = linsts[lname], rinsts[rname]
        numbered = by_number and li.parameter_number != ri.parameter_number
        if llabels[lname] == rlabels[rname] and not numbered:
            lops, rops = lops_of[lname], rops_of[rname]
            # Equal lengths (the common case): one tuple comparison instead of a generator per pair (operand lists
            # are tuples: tuple(rops) is rops itself).
            if tuple(map(l2r_get, lops)) == tuple(rops) if len(lops) == len(rops) else _operands_agree(m, lname, rname):
                continue
        kinds, details = compare_pair(lcm, rcm, m, lname, rname)
        if kinds:
            cd.changes[(lname, rname)] = Change(ref(lcm, m.left, li), ref(rcm, m.right, ri), kinds, details)
        for lc, rc in _differing_callees(lcm, rcm, li, ri):
            queue.append((lcm.computations[lc], rcm.computations[rc], (m.left.name, lname)))
    _mark_users_of_reshaped(lcm, rcm, cd)
    l2r, r2l = m.l2r, m.r2l
    lonly = indexed[1] if indexed else [(n, inst) for n, inst in linsts.items() if n not in l2r]
    ronly = indexed[2] if indexed else [(n, inst) for n, inst in rinsts.items() if n not in r2l]
    for lname, inst in lonly:
        cd.changes[(lname, None)] = Change(ref(lcm, m.left, inst), None)
    for rname, inst in ronly:
        cd.changes[(None, rname)] = Change(None, ref(rcm, m.right, inst))


_RESHAPING = frozenset(("shape", "element_type", "layout"))


def _mark_users_of_reshaped(lcm: CanonicalModule, rcm: CanonicalModule, cd: ComputationDiff) -> None:
    """A matched user whose operand changed shape, type or layout reads other values even when it looks the same
    (hlo_diff's MatchedDifferentShapeMarkAsChanged: ``add(p0, p1)`` is changed when ``p0`` went from f32 to f64).
    Kind ``operand_shape``: a consequence, never a cause of its own."""
    m = cd.matching
    reshaped = [(lname, c) for (lname, _), c in cd.changes.items() if lname is not None and _RESHAPING & set(c.kinds)]
    for lname, change in reshaped:
        for user in m.left.users(lname):
            ruser = m.l2r.get(user)
            if ruser is None or (user, ruser) in cd.changes:
                continue
            li, ri = m.left.insts[user], m.right.insts[ruser]
            detail = (f"{change.left.name}: {change.left.shape}", f"{change.right.name}: {change.right.shape}")
            cd.changes[(user, ruser)] = Change(ref(lcm, m.left, li), ref(rcm, m.right, ri), ("operand_shape",),
                                               {"operand_shape": detail})


INDEX_OPERANDS = {"dynamic-slice": 1, "dynamic-update-slice": 2}
"""Opcodes whose operands from this position on are start indices: a Python int there (``x[:, i]``,
``cache[:, pos] = k``) is baked for every value, not only torch_xla's special scalars 0 and 1."""


def _indexes(cc, name: str) -> str | None:
    """The opcode of a user that takes ``name`` as a start index (:data:`INDEX_OPERANDS`), else None."""
    for user in cc.users(name):
        first = INDEX_OPERANDS.get(cc.insts[user].opcode)
        if first is not None and name in cc.operands[user][first:]:
            return cc.insts[user].opcode
    return None


def _operands_agree(m: Matching, lname: str, rname: str) -> bool:
    return all(m.l2r.get(lo) == ro for lo, ro in zip(m.left.operands[lname], m.right.operands[rname]))


def compare_pair(lcm: CanonicalModule, rcm: CanonicalModule, m: Matching, lname: str, rname: str
                 ) -> tuple[tuple[str, ...], dict[str, tuple[str, str]]]:
    li, ri = m.left.insts[lname], m.right.insts[rname]
    kinds: list[str] = []
    details: dict[str, tuple[str, str]] = {}

    def note(kind: str, a: str, b: str) -> None:
        if kind not in kinds:
            kinds.append(kind)
        details[kind] = _short_pair(a, b)

    if li.opcode != ri.opcode:
        note("opcode", li.opcode, ri.opcode)
        for kind, inst in (("left", li), ("right", ri)):
            if inst.literal is not None:
                details["value"] = (li.literal or "", ri.literal or "")
    _compare_shapes(li.shape, ri.shape, ignore_layout=lcm.options.layouts, note=note)
    if li.opcode == ri.opcode and li.literal != ri.literal and not (elided(li.literal) or elided(ri.literal)):
        # (values hidden on a side are neither equal nor different: diff.hidden says so)
        note("literal", li.literal or "", ri.literal or "")
        if (user := _indexes(m.right, rname)) is not None:
            details["index_of"] = ("", user)  # a slice's start: baked whatever its value (review 4, F2)
    if li.opcode == ri.opcode == "parameter" and not lcm.options.parameter_order \
            and li.parameter_number != ri.parameter_number:
        note("parameter_number", str(li.parameter_number), str(ri.parameter_number))
    for key in sorted(set(li.attrs) | set(ri.attrs)):
        if key in _SKIP_KEYS and (key != "metadata" or lcm.options.metadata):
            continue
        a, b = li.attrs.get(key, ""), ri.attrs.get(key, "")
        if key in _CALL_KEYS:
            a, b = _callee_hashes(lcm, li), _callee_hashes(rcm, ri)
            if a != b:
                note("attribute:" + key, li.attrs.get(key, ""), ri.attrs.get(key, ""))
        elif " ".join(a.split()) != " ".join(b.split()):
            placement = key == "sharding" or (key == "frontend_attributes" and _placement_only(a, b))
            note("sharding" if placement else "attribute:" + key, a, b)
    lops, rops = m.left.operands[lname], m.right.operands[rname]
    if "attribute:slice" in details and li.opcode == ri.opcode == "slice" and lops and rops:
        # round 24: what the slice cuts from, on both sides (a head of 12 logits cut to n_seen: the full size kept)
        details["slice_of"] = tuple(_dims_text(cc.insts[ops[0]].shape) for cc, ops in ((m.left, lops), (m.right, rops)))
    if len(lops) != len(rops):
        note("operand_count", str(len(lops)), str(len(rops)))
    if any(m.l2r.get(lo) != ro for lo, ro in zip(lops, rops)):
        kinds.append("operands")
        mapped = [m.l2r.get(lo) for lo in lops]
        if len(lops) == len(rops) and sorted(map(str, mapped)) == sorted(rops):
            # The same values in another order (a list of gradients iterated the other way round).
            details["operands"] = (",".join(map(str, range(len(rops)))),
                                   ",".join(str(mapped.index(ro)) for ro in rops))
    return tuple(kinds), details


def _dims_text(shape: Shape) -> str:
    return ",".join(map(str, shape.dims))


def _placement_only(a: str, b: str) -> bool:
    """The two frontend_attributes differ only in entries naming a placement (SHARDING_FRONTEND_KEYS)."""
    try:
        left, right = parse_frontend_attributes(a) if a else {}, parse_frontend_attributes(b) if b else {}
    except HloParseError:
        return False
    differ = {k for k in set(left) | set(right) if left.get(k) != right.get(k)}
    return bool(differ) and differ <= SHARDING_FRONTEND_KEYS


def _compare_shapes(ls: Shape, rs: Shape, *, ignore_layout: bool, note) -> None:
    lleaves, rleaves = list(ls.leaves()), list(rs.leaves())
    texts: list[str] = []  # both shapes' text, made once (a root tuple of 1,700 outputs is long to print)

    def noted(kind: str) -> None:
        if not texts:
            texts.extend((str(ls), str(rs)))
        note(kind, *texts)

    if len(lleaves) != len(rleaves) or any(a.dims != b.dims or a.dynamic != b.dynamic
                                           for a, b in zip(lleaves, rleaves)):
        noted("shape")
    if any(a.element_type != b.element_type for a, b in zip(lleaves, rleaves)):
        noted("element_type")
    if not ignore_layout and any(a.layout != b.layout for a, b in zip(lleaves, rleaves)):
        noted("layout")


def _callee_hashes(cm: CanonicalModule, inst: Instruction) -> list[str]:
    return [cm.computation_hashes.get(c, c) for c in inst.called_computation_names()]


def _differing_callees(lcm: CanonicalModule, rcm: CanonicalModule, li: Instruction, ri: Instruction
                       ) -> list[tuple[str, str]]:
    lcs, rcs = li.called_computation_names(), ri.called_computation_names()
    if len(lcs) != len(rcs):
        return []
    return [(a, b) for a, b in zip(lcs, rcs) if a in lcm.computations and b in rcm.computations
            and lcm.computation_hashes[a] != rcm.computation_hashes[b]]


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_pair(a: str, b: str, limit: int = 120) -> tuple[str, str]:
    """Both sides of a change, each cut to ``limit``, keeping the place where they first differ in view: a tuple
    of forty shapes that changes in its thirtieth element shows that element, not only the first ones. The window
    starts at the element (after ", ") holding the first difference when one is near, else a little before it,
    and every cut is marked with "..."."""
    a, b = " ".join(a.split()), " ".join(b.split())
    if len(a) <= limit and len(b) <= limit:
        return a, b
    same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if same < limit - 40:
        return _short(a, limit), _short(b, limit)
    start = a.rfind(", ", 0, same) + 2
    if start < 2 or same - start > limit // 3:
        start = max(0, same - 20)
    return _window(a, start, limit), _window(b, start, limit)


def _window(text: str, start: int, limit: int) -> str:
    body = text[start:start + limit - 6]
    return "..." + body + ("..." if start + len(body) < len(text) else "")
