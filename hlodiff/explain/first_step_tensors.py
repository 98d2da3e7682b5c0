"""Tensors the program made before its loop that the first step's graph computed: the second step reads them as
inputs the first graph had as outputs (a KV cache, a weight's random init, a token made before a decode loop).

:func:`materialized` and :func:`first_step_made` are the evidence :func:`hlodiff.explain.fix_context.fix_context`
reads into ``FixContext.materialized`` / ``first_step_made`` (the second step's graph: expected once, nothing to
fix); :func:`place_made_tensors` puts the line that made such a tensor before the line that first read it.
"""

from __future__ import annotations

from hlodiff.explain.family_order import family_runs
from hlodiff.hlo.shapes import without_layout_text


def place_made_tensors(recompilations) -> None:
    """A tensor made before the loop and computed by the first step's graph (``FixContext.materialized``: the
    second step's graph, :func:`materialized`): the new input's first line is where the tensor was made (the removed
    output's line), before the line that first read it, since that is where the sync goes. Run before the patterns
    name each family's leading line."""
    runs = family_runs(recompilations)
    for r in recompilations:
        members = runs[id(r.family)][0]  # the family's whole graphs: the step after the first is members[1]
        if len(members) > 1 and members[1] is r.graph and materialized(r):
            _made_before_the_loop(r.causes)


def _made_before_the_loop(causes) -> None:
    made = [f for c in causes if c.kind == "outputs" for f in c.locations]
    for cause in causes:
        if cause.kind == "inputs" and made:
            seen = {(f.file, f.line) for f in made}
            cause.locations = made + [f for f in cause.locations if (f.file, f.line) not in seen]


def materialized(r) -> bool:
    """Every output the closest graph had and this one lacks is an input this one added, shape for shape."""
    cm = r.closest._canonical if r.closest is not None else None
    if cm is None:
        return False
    insts = cm.entry.insts
    removed = [without_layout_text(str(insts[a].shape)) for c in r.causes if c.kind == "outputs"
               for a, b in c.instructions if a is not None and b is None and a in insts]
    added = [without_layout_text(o.right.shape) for c in r.causes if c.kind == "inputs" for o in c.origins
             if o.left is None and o.right is not None and o.right.opcode == "parameter"]
    if not removed or not added:
        return False
    left = list(added)
    for shape in removed:
        if shape not in left:
            return False
        left.remove(shape)
    return True


def first_step_made(r) -> bool:
    """Every input this graph added is shaped like an output the closest (first) graph computed, shape for shape,
    and that output was no parameter passed through: the first step computed those tensors (review 4, F3: a KV cache
    and a token made before the decode loop; a weight's random init), which the later steps read as data."""
    cm = r.closest._canonical if r.closest is not None else None
    if cm is None:
        return False
    insts = cm.entry.insts
    made = [without_layout_text(str(insts[n].shape)) for n in cm.entry.outputs()
            if n in insts and insts[n].opcode != "parameter"]
    added = [without_layout_text(o.right.shape) for c in r.causes if c.kind == "inputs" for o in c.origins
             if o.left is None and o.right is not None and o.right.opcode == "parameter"]
    if not added:
        return False
    for shape in added:
        if shape not in made:
            return False
        made.remove(shape)
    return True

