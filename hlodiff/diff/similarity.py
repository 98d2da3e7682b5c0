"""How alike two unmatched instructions are, for the choices the matchers make between several candidates.

Three questions, each answered the way XLA's hlo_diff answers it:

* Where two operand subgraphs trade places (``sub(a, b)`` became ``sub(b', a')`` with both sides edited), which
  operand goes with which? By content: the values each one computes from (looking through ``bitcast`` and ``copy``,
  which move a value without computing), and for fusions what their bodies compute. Position only breaks ties.
* Among candidates that are otherwise identical (unused parameters of one shape, repeated layers), which pairs?
  The ones with the same ``op_name`` and source line. Metadata only breaks ties between equal candidates; it
  never makes two different instructions a pair.
* Is the right root really the left root's partner? Not when it is identical to some other left instruction.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.diff.mapping import Matching
from hlodiff.errors import HlodiffError
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule
from hlodiff.hlo.attributes import parse_metadata

_MOVES = frozenset(("bitcast", "copy"))
_MAX_THROUGH = 64


def through_moves(cc: CanonicalComputation, name: str) -> str:
    """The instruction whose value ``name`` carries, past ``bitcast``/``copy`` chains."""
    for _ in range(_MAX_THROUGH):
        inst = cc.insts[name]
        ops = cc.operands[name]
        if inst.opcode not in _MOVES or len(ops) != 1:
            return name
        name = ops[0]
    return name


def score(m: Matching, lname: str, rname: str) -> int:
    """Content agreement of two candidates: same value (anonymous hash) past moves, inputs already paired,
    same opcode and shape, and for fusions the same body."""
    lv, rv = through_moves(m.left, lname), through_moves(m.right, rname)
    if m.left.anon[lv] == m.right.anon[rv]:
        return 100
    li, ri = m.left.insts[lv], m.right.insts[rv]
    points = 0
    if li.opcode == ri.opcode:
        points += 4
        if li.opcode == "fusion":
            points += _body_agreement(m, li, ri)
    ls, rs = li.shape, ri.shape
    if ls == rs or ls.without_layout() == rs.without_layout():  # equal shapes first: no layout-free copies made
        points += 2
    rops = {through_moves(m.right, o) for o in m.right.operands[rv]}
    for lo in m.left.operands[lv]:
        partner = m.l2r.get(through_moves(m.left, lo))
        if partner is not None and through_moves(m.right, partner) in rops:
            points += 8
    return points


def _body_agreement(m: Matching, li, ri) -> int:
    """Fusions: the same root opcode and a similar mix of opcodes in the fused computations."""
    lbody, rbody = _body(m.left_module, li), _body(m.right_module, ri)
    if lbody is None or rbody is None:
        return 0
    lroot = lbody.insts[through_moves(lbody, lbody.root)].opcode
    rroot = rbody.insts[through_moves(rbody, rbody.root)].opcode
    lmix = Counter(i.opcode for i in lbody.insts.values())
    rmix = Counter(i.opcode for i in rbody.insts.values())
    shared = sum((lmix & rmix).values())
    total = max(sum(lmix.values()), sum(rmix.values()), 1)
    return (3 if lroot == rroot else 0) + (3 * shared) // total


def _body(cm: CanonicalModule | None, inst) -> CanonicalComputation | None:
    if cm is None:
        return None
    names = inst.called_computation_names()
    return cm.computations.get(names[0]) if names else None


_MAX_SCORED = 16


def assign_by_content(m: Matching, lefts: list[str], rights: list[str]) -> list[tuple[str, str]]:
    """Pair two operand lists (same length) by best content score; position breaks ties.

    Greedy over all candidate pairs, best first, when the lists are a handful (an instruction's unmatched
    operands). A long list (a root tuple of hundreds of outputs, all edited by one changed constant) would cost
    its length squared in scores: there only operands computing the same value trade places, found by hash, and
    the rest keep their positions.
    """
    if len(lefts) == 1:
        return [(lefts[0], rights[0])]
    if len(lefts) > _MAX_SCORED:
        return _assign_by_value(m, lefts, rights)
    candidates = sorted(((score(m, lo, ro), -abs(i - j), -i, lo, ro) for i, lo in enumerate(lefts)
                         for j, ro in enumerate(rights)), reverse=True)
    pairs: list[tuple[str, str]] = []
    used_l: set[str] = set()
    used_r: set[str] = set()
    for _, _, _, lo, ro in candidates:
        if lo not in used_l and ro not in used_r:
            used_l.add(lo)
            used_r.add(ro)
            pairs.append((lo, ro))
    return pairs


def _assign_by_value(m: Matching, lefts: list[str], rights: list[str]) -> list[tuple[str, str]]:
    """Pair operands that compute the same value (anonymous hash past moves), the rest by position."""
    by_value: dict[str, list[str]] = {}
    for ro in rights:
        by_value.setdefault(m.right.anon[through_moves(m.right, ro)], []).append(ro)
    pairs: list[tuple[str, str]] = []
    used_r: set[str] = set()
    rest: list[str] = []
    for lo in lefts:
        same = by_value.get(m.left.anon[through_moves(m.left, lo)])
        if same:
            ro = same.pop(0)
            used_r.add(ro)
            pairs.append((lo, ro))
        else:
            rest.append(lo)
    pairs.extend(zip(rest, [ro for ro in rights if ro not in used_r]))
    return pairs


def _meta_key(cc: CanonicalComputation, name: str) -> tuple | None:
    raw = cc.insts[name].attrs.get("metadata")
    if not raw:
        return None
    try:
        meta = parse_metadata(raw)
    except HlodiffError:  # damaged metadata (a bad escape): the instruction is matched without it
        return None
    if meta.op_name is None and meta.source_line is None:
        return None
    return meta.op_name, meta.source_file, meta.source_line


def _op_name_key(cc: CanonicalComputation, name: str) -> str | None:
    raw = cc.insts[name].attrs.get("metadata")
    return parse_metadata(raw).op_name if raw else None


def _source_key(cc: CanonicalComputation, name: str) -> tuple | None:
    raw = cc.insts[name].attrs.get("metadata")
    if not raw:
        return None
    meta = parse_metadata(raw)
    return (meta.source_file, meta.source_line) if meta.source_line is not None else None


def _sharding_key(cc: CanonicalComputation, name: str) -> str | None:
    raw = cc.insts[name].attrs.get("sharding")
    return " ".join(raw.split()) if raw else None


def _param_key(cc: CanonicalComputation, name: str) -> int | None:
    return cc.insts[name].parameter_number


_TIE_KEYS = (_meta_key, _op_name_key, _source_key, _sharding_key, _param_key)
"""The properties equal candidates are paired by, most telling first: all of the metadata, then the op_name, the
source line, the sharding alone (hlo_diff pairs a computation's parameters by these properties, not by position:
its MatchComputationParams test), then the parameter number."""


def tie_break(lcc: CanonicalComputation, rcc: CanonicalComputation, lefts: list[str],
              rights: list[str]) -> list[tuple[str, str]]:
    """Pair equally good candidates by the properties of :data:`_TIE_KEYS`, then in order. A property decides
    as soon as either side has a choice to make (one left parameter and three right ones of its shape)."""
    pairs: list[tuple[str, str]] = []
    for key_of in _TIE_KEYS:
        if not lefts or not rights or (len(lefts) < 2 and len(rights) < 2):
            break
        by_key: dict = {}
        for r in rights:
            key = key_of(rcc, r)
            if key is not None:
                by_key.setdefault(key, []).append(r)
        if not by_key:
            continue
        taken: set[str] = set()
        rest: list[str] = []
        for lname in lefts:
            key = key_of(lcc, lname)
            options = [r for r in by_key.get(key, ()) if r not in taken] if key is not None else []
            if options:
                taken.add(options[0])
                pairs.append((lname, options[0]))
            else:
                rest.append(lname)
        lefts, rights = rest, [r for r in rights if r not in taken]
    pairs.extend(zip(lefts, rights))
    return pairs


def root_has_better_partner(m: Matching) -> bool:
    """One root is identical to a non-root instruction of the other side (and the roots differ): exact matching
    pairs it there, and forcing the roots together would hide that."""
    lroot, rroot = m.left.root, m.right.root
    lhash, rhash = m.left.anon[lroot], m.right.anon[rroot]
    if lhash == rhash:
        return False
    # Each root's own hash differs from the other root's, so searching all values is searching the non-roots
    # (a containment test runs in C: 217K hashes a side on the 300K pair).
    return rhash in m.left.anon.values() or lhash in m.right.anon.values()
