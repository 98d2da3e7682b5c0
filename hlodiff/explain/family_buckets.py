"""The bucket plans of an explanation's families: which families' sizes follow the data, the verdict over each
family's sizes (read before any fix is chosen, so that the fix and the plan agree), and the plan set on the first
``shape`` cause of every family whose graphs differ by a size, with the compile seconds each graph cost. The plan
itself is computed by :mod:`hlodiff.explain.buckets`.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.diff.fix_stance import NOTHING_TO_FIX, FixStance
from hlodiff.explain.buckets import (BucketPlan, changed_dimension, grows_each_time, parameter_dimensions, plan_for,
                                     verdict)
from hlodiff.hlo.literal import size


def family_verdicts(recompilations) -> dict[str, str]:
    """Per family whose recompilations change a size: :func:`verdict` over its executions, from the sizes the
    changed parameter (or slice, or first changed dimension) took in each compiled graph. Read from the causes,
    before any fix or plan is chosen, so that both use it."""
    data_sized = data_sized_families(recompilations)
    grown = concatenated_families(recompilations)
    found = {}
    for key, (family, seen) in family_sizes_seen(recompilations).items():
        counts = Counter(seen)
        if len(counts) >= 2:
            found[key] = verdict(tuple(sorted(counts.items())), seen, counts_from_of(family),
                                 key in data_sized, key in grown)
    return found


def family_sizes_seen(recompilations) -> dict[str, tuple[object, list[int]]]:
    """Per family whose recompilations change a size: the family and the size each of its executions (or
    compilations) had, in run order."""
    from hlodiff.explain.family_values import changed_sizes

    by_family: dict[str, tuple[object, dict[str, int]]] = {}
    for r in recompilations:
        sizes = changed_sizes(r)
        if sizes is None or r.closest is None:
            continue
        family, size_of = by_family.setdefault(r.family.key, (r.family, {}))
        before, after = size(sizes[0]), size(sizes[1])
        if before is None or after is None:
            continue
        size_of.setdefault(r.closest.cache_key, before)
        size_of[r.graph.cache_key] = after
    return {key: (family, [size_of[g.cache_key] for g in family.members if g.cache_key in size_of])
            for key, (family, size_of) in by_family.items()}


def grown_in_graph(recompilations) -> set[str]:
    """Keys of the families whose graphs grow the changing size themselves (:func:`concatenated_families`) and
    whose sizes are new and larger at every compilation: growth, though a log of compilations cannot show it."""
    seen = family_sizes_seen(recompilations)
    return {key for key in concatenated_families(recompilations) if key in seen and grows_each_time(seen[key][1])}


def counts_from_of(family) -> str:
    from hlodiff.dumps.graph_record import TRACED_KINDS
    from hlodiff.dumps.executions import KIND as EXECUTIONS

    every = all(g.record.kind in (*TRACED_KINDS, EXECUTIONS) and g.record.hits_seen for g in family.members)
    return "executions" if every else "compilations"


PLANNED_KINDS = ("shape",)

UNPADDED_ROWS = frozenset({"shape_made_pieces_joined"})
"""Fix rows whose sizes are pieces joined into one tensor of fixed size (round 24: block_diag of a packed row's
documents): padding the pieces would change what they build, so no bucket plan is offered for their family."""


def attach_plans(explanation, run=None, skip=()) -> None:
    """Set ``plan`` on the ``shape`` cause of the first recompilation of every family whose graphs differ by a
    size (the plan covers the whole family). ``run``: the run's evidence, whose compile-time logs give the compile
    seconds per graph reported beside the plan (:meth:`hlodiff.dumps.evidence.Run.compile_seconds`). ``skip``: keys
    of families whose members cannot show how the sizes came (the bridge's graphs of Dynamo's compiles only:
    :mod:`hlodiff.explain.dynamo_compile_steps`), which get no plan of their own."""
    seconds = _compile_seconds(explanation.graphs, run)
    data_sized = data_sized_families(explanation.recompilations)
    by_family: dict[str, list] = {}
    for r in explanation.recompilations:
        if any(c.kind in PLANNED_KINDS for c in r.causes):
            by_family.setdefault(r.family.key, []).append(r)
    for family in explanation.families:
        if family.key in skip:
            continue
        recompilations = by_family.get(family.key)
        shaped = [c for r in recompilations or () for c in r.causes if c.kind in PLANNED_KINDS]
        if not shaped or all(_nothing_to_fix(c) for c in shaped) or any(c.fix_rule in UNPADDED_ROWS for c in shaped):
            continue
        plan = family_plan(family, recompilations, seconds, data_sized)
        if plan is None or plan.kind == "expected":
            # review 18, F5: the cause a plan goes on has a fix that asks for a change (drop_last, pad, one fixed
            # size); "already on buckets: one graph per bucket is expected" under it says do nothing: no plan
            continue
        cause = next(c for r in recompilations for c in r.causes  # once per family: the others would repeat it
                     if c.kind in PLANNED_KINDS and not _nothing_to_fix(c))
        cause.plan = plan


def _nothing_to_fix(cause) -> bool:
    """The fix already judged these compilations expected (JAX's eager ops, a warm-up), or the size follows from
    another cause (a static argument): no plan to offer for the size itself."""
    return cause.fix_stance in NOTHING_TO_FIX or cause.fix_stance is FixStance.FOLLOWS


def family_plan(family, recompilations, seconds: dict[str, float],
                data_sized: set[str] | None = None) -> BucketPlan | None:
    compiled = family.compiled
    modules = {g.cache_key: g._module for g in compiled if g._module is not None}
    dims = parameter_dimensions(modules) if len(modules) == len(compiled) else []
    if not dims:
        inner = changed_dimension(_shape_pairs(recompilations))
        dims = [inner] if inner is not None else []
    if not dims:
        return None
    dims.sort(key=lambda d: -len(set(d.by_key.values())))
    sequence = [g.cache_key for g in family.members]
    # review 13 F8: a plan saves recompilations, never the family's first compilation (T1: "recompilation cost
    # 0.69 s", then "saves 0.9 s ... at 0.86 s per graph", the first compile's 1.03 s in the mean)
    known = [seconds[g.ref] for g in compiled[1:] if g.ref in seconds] or \
        [seconds[g.ref] for g in compiled if g.ref in seconds]
    per_graph = round(sum(known) / len(known), 6) if known else None
    return plan_for(dims[0], sequence, counts_from=counts_from_of(family), compile_seconds=per_graph, others=dims[1:],
                    data_sized=family.key in (data_sized_families(recompilations) if data_sized is None
                                              else data_sized),
                    concatenated=family.key in concatenated_families(recompilations))


DATA_OPS = frozenset({"tensor_list", "nonzero", "compared_list"})
"""Producing ops (:func:`hlodiff.explain.producing_ops.family_ops`) whose output size follows the data: an index
list made on the host, a boolean mask's count, a 1-D list compared with every value of a batch (bucket edges or
the classes present, deduped on the host: round 29)."""


def data_sized_families(recompilations) -> set[str]:
    """Keys of the families whose changing size a data-dependent op made (an index list made on the host,
    ``torch.bincount``, a boolean mask)."""
    from hlodiff.explain.producing_ops import family_ops

    ops = family_ops(recompilations)
    return {r.family.key for r in recompilations if ops.get(id(r), frozenset()) & DATA_OPS}


GROWING_OPCODES = frozenset({"concatenate"})
"""Ops by which a graph grows the input whose size changed, handing it back one part longer."""


def concatenated_families(recompilations) -> set[str]:
    """Keys of the families where a changed parameter (a shape cause's origin) is read by a concatenation in the
    graph that takes it (the value each call returns one part longer and is passed back in)."""
    found = set()
    for r in recompilations:
        cm = getattr(r.graph, "_canonical", None)
        if cm is None or r.family.key in found:
            continue
        for cause in r.causes:
            if cause.kind != "shape":
                continue
            for change in cause.origins:
                ref = change.right
                if ref is None or ref.opcode != "parameter" or ref.computation not in cm.computations:
                    continue
                comp = cm.computations[ref.computation]
                if any(comp.insts[u].opcode in GROWING_OPCODES for u in comp.users(ref.name) if u in comp.insts):
                    found.add(r.family.key)
    return found


def _shape_pairs(recompilations) -> list[tuple]:
    from hlodiff.hlo.shapes import parse_shape
    from hlodiff.errors import HlodiffError

    pairs = []
    for r in recompilations:
        if r.closest is None:
            continue
        for cause in r.causes:
            if cause.kind != "shape":
                continue
            change = next((c for c in cause.origins if c.left is not None and c.right is not None
                           and "shape" in c.kinds), None)
            if change is None:
                continue
            try:
                pairs.append((r.closest.cache_key, r.graph.cache_key, parse_shape(change.left.shape),
                              parse_shape(change.right.shape)))
            except HlodiffError:
                continue
            break
    return pairs


def _compile_seconds(graphs, run) -> dict[str, float]:
    if run is None or not run.time_logs:
        return {}
    found = run.compile_seconds([g.record for g in graphs], [g.compiled for g in graphs])
    return {graphs[i].ref: s for i, s in found.items()}
