"""Tensors the program made before its loop that the first step's graph computed: the second step reads them as
inputs the first graph had as outputs (a KV cache, a weight's random init, a token made before a decode loop).

:func:`materialized` and :func:`first_step_made` are the evidence :func:`hlodiff.explain.fix_context.fix_context`
reads into ``FixContext.materialized`` / ``first_step_made`` (the second step's graph: expected once, nothing to
fix); :func:`place_made_tensors` puts the line that made such a tensor before the line that first read it.
"""

from __future__ import annotations

from hlodiff.explain.family_order import family_runs
from hlodiff.diff.origin_makers import user_made_inputs
from hlodiff.hlo.model import SourceFrame
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


CREATED_ROWS = frozenset({"inputs_user_warmup"})
"""Rows whose story is a tensor the first step's graph created (its ops: a constant, its broadcast) that later steps
read as device data: its line is where those ops were traced, the user line of the instructions the cause
removed, not the new parameter's (torch_xla writes on it the first op that read it after the sync: crossings round
6, x6c_window_cat_control, `torch.zeros(8)` at :14 told at the read :21). A test per row:
tests/test_leftovers14.py."""


def place_created_tensors(recompilations) -> None:
    """A :data:`CREATED_ROWS` cause whose removed instructions name one user line: that line goes first, and the
    fix's "(file:line)" of the creation names it."""
    for r in recompilations:
        cm = r.closest._canonical if r.closest is not None else None
        if cm is None:
            continue
        for cause in r.causes:
            if cause.fix_rule not in CREATED_ROWS:
                continue
            made = _removed_user_lines(cm, cause)
            if len(made) != 1 or (cause.locations and (cause.locations[0].file, cause.locations[0].line) == made[0]):
                continue
            file, line = made[0]
            old = cause.locations[0] if cause.locations else None
            new = next((f for f in cause.locations if (f.file, f.line) == (file, line)), None) or SourceFrame(
                file, line, old.function if old is not None else None)
            cause.locations = [new] + [f for f in cause.locations if f is not new]
            told = user_made_inputs(cause)  # the row's "({made})": the new inputs' own lines
            if told and cause.fix:
                cause.fix = cause.fix.replace(f"({told})", f"({new.short()})")


def _removed_user_lines(cm, cause) -> list[tuple[str, int]]:
    """The distinct innermost user lines of the instructions ``cause`` removed, in the closest graph ``cm``."""
    insts = cm.entry.insts
    found: list[tuple[str, int]] = []
    for a, b in cause.instructions:
        if a is None or b is not None or a not in insts:
            continue
        mine = next((f for f in cm.frames(insts[a]) if not f.is_library and f.line is not None), None)
        if mine is not None and (mine.file, mine.line) not in found:
            found.append((mine.file, mine.line))
    return found


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

