"""Compare two modules: normalize both, match, classify, derive causes."""

from __future__ import annotations

from hlodiff.accel import native
from hlodiff._runtime import paused_gc
from hlodiff.diff.causes import derive_causes
from hlodiff.diff.classify import ComputationDiff, classify_module
from hlodiff.diff.fixes import FixContext, apply_fixes
from hlodiff.diff.header import header_causes
from hlodiff.diff.hidden import hidden_changes, hidden_values_cause
from hlodiff.diff.model import Cause, Ignored, ModuleDiff
from hlodiff.graph.canonical import CanonicalModule, Normalization
from hlodiff.graph.fingerprint import canonicalize
from hlodiff.hlo.model import Module
from hlodiff.hlo.producer import producer_of


def diff_modules(left: Module, right: Module, options: Normalization = Normalization()) -> ModuleDiff:
    return diff_canonical(canonicalize(left, options), canonicalize(right, options))


def diff_canonical(lcm: CanonicalModule, rcm: CanonicalModule) -> ModuleDiff:
    with paused_gc():
        return _diff_canonical(lcm, rcm)


def _diff_canonical(lcm: CanonicalModule, rcm: CanonicalModule) -> ModuleDiff:
    equal = same_computation = lcm.fingerprint == rcm.fingerprint
    cds = classify_module(lcm, rcm)
    causes, output_mapping, regions = derive_causes(cds) if not equal else ([], _identity_outputs(cds[0]), [])
    hidden = hidden_changes(cds) if equal or not causes else []
    if hidden:  # equal as printed, not as compiled: never "equal" on values the dump hides
        equal = False
        causes = [hidden_values_cause(hidden)]
    if not equal and not causes:
        causes = [Cause("ops", "the normalized graphs differ, but no single change explains it")]
    entry = cds[0]
    causes += header_causes(lcm.module, rcm.module, same_computation=same_computation,
                            parameter_mapping=_parameter_mapping(entry))
    apply_fixes(causes, FixContext(producer=producer_of(rcm.module)))
    return ModuleDiff(
        left_name=lcm.module.name,
        right_name=rcm.module.name,
        left_fingerprint=lcm.fingerprint,
        right_fingerprint=rcm.fingerprint,
        equal=equal,
        causes=causes,
        changes=[c for cd in cds for _, c in sorted(cd.changes.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or ""))],
        ignored=_ignored(lcm, rcm, entry),
        parameter_mapping=_parameter_mapping(entry),
        output_mapping=output_mapping,
        stats=_stats(entry),
        regions=regions,
        computations=cds,
        hidden_constants=len(hidden),
    )


def _identity_outputs(cd: ComputationDiff) -> list[tuple[int, int]]:
    routs = cd.right.outputs()
    index = {name: j for j, name in enumerate(routs)}
    return [(i, index[cd.matching.l2r[n]]) for i, n in enumerate(cd.left.outputs())
            if cd.matching.l2r.get(n) in index]


def _parameter_mapping(cd: ComputationDiff) -> list[tuple[int, int]]:
    m = cd.matching
    pairs = []
    for lname in cd.left.parameters():
        rname = m.l2r.get(lname)
        if rname is not None and m.right.insts[rname].opcode == "parameter":
            pairs.append((m.left.insts[lname].parameter_number, m.right.insts[rname].parameter_number))
    return sorted(pairs)


def _ignored(lcm: CanonicalModule, rcm: CanonicalModule, cd: ComputationDiff) -> list[Ignored]:
    """What normalization hid from the comparison, stated only where the two sides actually differ."""
    ignored: list[Ignored] = []
    dead = [(side, r) for side, cm in (("left", lcm), ("right", rcm)) for r in cm.reports if r.name == "dead_code"]
    for side, report in dead:
        ignored.append(Ignored("dead_code", f"{side}: {report.summary}"))
    tuples = [(side, r) for side, cm in (("left", lcm), ("right", rcm)) for r in cm.reports
              if r.name == "tuple_plumbing"]
    lt = next((r.count for s, r in tuples if s == "left"), 0)
    rt = next((r.count for s, r in tuples if s == "right"), 0)
    if lt != rt:
        ignored.append(Ignored("tuple_plumbing", f"tuple plumbing: {lt} folded on the left, {rt} on the right"))
    moved = sum(1 for a, b in _parameter_mapping(cd) if a != b)
    if moved and lcm.options.parameter_order:
        ignored.append(Ignored("parameter_order",
                               f"parameter order: {moved} of {len(cd.left.parameters())} parameters numbered differently"))
    renamed, meta = _renamed_and_metadata(cd, lcm.options.metadata)
    if renamed and lcm.options.names:
        ignored.append(Ignored("names", f"names: {renamed} matched instruction{'s' if renamed != 1 else ''} named "
                                        "differently"))
    if meta:
        ignored.append(Ignored("metadata", f"metadata: differs on {meta} matched instruction{'s' if meta != 1 else ''}"))
    return ignored


def _renamed_and_metadata(cd: ComputationDiff, count_metadata: bool) -> tuple[int, int]:
    """How many matched pairs differ in name, and in metadata (when that is ignored): one walk over the pairs."""
    m = cd.matching
    linsts, rinsts = m.left.insts, m.right.insts
    if native is not None:
        counted = None
        if (mirror := m.mirror()) is not None:  # each instruction by position, not by a probe of its map
            counted = native.pairs_renamed_and_metadata(mirror, linsts, rinsts, count_metadata)
        return counted or native.renamed_and_metadata(m.l2r, linsts, rinsts, count_metadata)
    renamed = meta = 0
    for a, b in m.l2r.items():
        if a != b:
            renamed += 1
        if count_metadata and linsts[a].attrs.get("metadata") != rinsts[b].attrs.get("metadata"):
            meta += 1
    return renamed, meta


def _stats(cd: ComputationDiff) -> dict[str, int]:
    m = cd.matching
    changed = sum(1 for c in cd.changes.values() if c.side == "changed")
    return {
        "left_instructions": len(cd.left.insts),
        "right_instructions": len(cd.right.insts),
        "matched": len(m.l2r),
        "changed": changed,
        "unchanged": len(m.l2r) - changed,
        "only_left": len(cd.left.insts) - len(m.l2r),
        "only_right": len(cd.right.insts) - len(m.r2l),
        "left_outputs": len(cd.left.outputs()),
        "right_outputs": len(cd.right.outputs()),
    }


def unrelated(left: Module, right: Module) -> str | None:
    """Why two modules do not come from one program, when their producers say so (a torch_xla graph beside a JAX
    function): their diff is still printed, but it explains no recompilation."""
    a, b = producer_of(left), producer_of(right)
    if a is not None and b is not None and a != b:
        return (f"the two graphs come from different frameworks ({a} {left.name}, {b} {right.name}): their differences "
                "explain no recompilation")
    return None
