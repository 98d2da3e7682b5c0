"""What the whole graphs after a family's early reads (a value read on the host, which cuts the step) show: how
many distinct graphs follow a read, whether they use the same sizes (the value read chose which ops run, not a
length), and the user's lines traced after the read on some steps only (where the branch it chose differs). Read
by :mod:`hlodiff.explain.fix_context` for the read-branch fixes.
"""

from __future__ import annotations

from hlodiff.hlo.shapes import PRINTED_DIMS


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
        dims.append({d for comp in cm.computations.values() for inst in comp.instructions()
                     for group in PRINTED_DIMS.findall(str(inst.shape)) for d in group.split(",") if d})
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
            for inst in comp.instructions():
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
