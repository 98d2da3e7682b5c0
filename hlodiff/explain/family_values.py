"""The values a family went through over the run, read for the fix rules: the size that changed, chained over its
compilations (``7, 8, 9, 10``), the values a constant was baked in with, whether they grow by a fixed step (a cache
or a history built up), and the element type the family began with (or the one a torch_xla program casts an input
to on the line that moved it to the device).

Pure readers of the explanation's recompilations; :mod:`hlodiff.explain.fix_context` puts what they find into a
:class:`~hlodiff.diff.fixes.FixContext`.
"""

from __future__ import annotations

import math

from hlodiff.explain.producer import producer
from hlodiff.hlo.literal import real
from hlodiff.hlo.shapes import printed_dims


def family_sizes(recompilations) -> dict[str, tuple[str, ...]]:
    """Per family, the size that changed took over its latest run of chained compilations, in run order
    (``7, 8, 9, 10``: each recompilation starts from the size the one before ended at): read from the first changed
    parameter of each recompilation's shape cause, else from a slice whose length changed."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for r in recompilations:
        sizes = changed_sizes(r)
        if sizes is not None:
            pairs.setdefault(r.family.key, []).append(sizes)
    found = {}
    for key, seq in pairs.items():
        if len(seq) >= 2 and len({before for before, _ in seq}) == 1 and len({after for _, after in seq}) == len(seq):
            # every recompilation told against the same first graph (JAX's empty start, i32[0], which no later
            # graph resembles more): the sizes are that start and each one after it (crossings round 6)
            found[key] = (seq[0][0], *(after for _, after in seq))
            continue
        chain = [seq[-1]]
        for pair in reversed(seq[:-1]):
            if pair[1] != chain[0][0] and not (len(set(p for q in seq for p in q)) <= 4):
                break
            chain.insert(0, pair)
        found[key] = (chain[0][0], *(b for _, b in chain))
    return found


def changed_sizes(r) -> tuple[str, str] | None:
    """The size that changed in a recompilation, before and after: of the first changed parameter of its shape
    or attribute causes, else of a slice whose length changed, else of the first changed shape."""
    changes = [o for c in r.causes if c.kind in ("shape", "attribute") for o in c.origins
               if o.left is not None and o.right is not None]
    change = next((o for o in changes if o.left.opcode == "parameter"), None) or next(
        (o for o in changes if o.left.opcode == "slice"), None) or next(
        (o for o in changes if _changed_size(o) is not None), None)
    return _changed_size(change) if change is not None else None


def family_constants(recompilations) -> dict[str, tuple[str, ...]]:
    """Per family, the values its changing constant was baked in with, in run order (``0, 1``: the values an
    index offset or a learning rate took while torch_xla baked them; values passed in as inputs show no literal)."""
    found: dict[str, dict[str, None]] = {}  # values in first-seen order (a dict: membership in constant time)
    for r in recompilations:
        change = next((o for c in r.causes if c.kind == "constant" for o in c.origins
                       if o.left is not None and o.right is not None), None)
        if change is None:
            continue
        seq = found.setdefault(r.family.key, {})
        for key in ("literal", "value"):
            for v in change.details.get(key, ()):
                if v:
                    seq.setdefault(v.strip(), None)
    return {k: tuple(v) for k, v in found.items() if v}


def _changed_size(change) -> tuple[str, str] | None:
    a, b = printed_dims(change.left.shape), printed_dims(change.right.shape)
    if a is None or b is None or len(a) != len(b):
        return None
    axis = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    return None if axis is None else (str(a[axis]), str(b[axis]))


def grows(sizes: tuple[str, ...]) -> bool:
    """At least three compilations, each larger than the last by the same step: a cache or history built up.
    ``sizes`` are printed sizes or baked values (``1.2, 1.4, 1.6``: a ramped float, its steps equal to rounding);
    a value that is no ordered finite number (nan, inf, true, an array) is no growth."""
    if len(sizes) < 3:
        return False
    n = [real(x) for x in sizes]
    if any(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in n):
        return False
    steps = [b - a for a, b in zip(n, n[1:])]
    if all(isinstance(v, int) for v in n):  # exact, and no float conversion of a huge integer
        return steps[0] > 0 and len(set(steps)) == 1
    return steps[0] > 0 and all(abs(s - steps[0]) <= 1e-6 * abs(steps[0]) for s in steps)


def family_first_types(recompilations) -> dict[str, str]:
    """Per family, the element type its first dtype change started from (``s64`` of ``s64[4] -> s32[4]``): the type
    the run began with, which every recompilation of the story casts back to."""
    found: dict[str, str] = {}
    for r in recompilations:
        if r.family.key in found:
            continue
        change = next((o for c in r.causes if c.kind == "dtype" for o in c.origins
                       if o.left is not None and o.right is not None), None)
        if change is not None:
            found[r.family.key] = device_cast(r, change) or change.left.shape.split("[", 1)[0].strip("(")
    return found


def device_cast(r, change) -> str:
    """The element type a torch_xla program casts a changed input to on the line that moved it to the device
    (``torch.from_numpy(b).to(dev).float()``), or "": on the side where the input has the other type, a ``convert``
    of the input's dimensions to exactly the type the input has on the other side appears on that side only, made
    at the input's own line. The program then works in that type, and the cast to keep is it, not the type the run
    happened to start with (round 5, noise_aug_float64: float64 NumPy noise on most batches, `.float()` on the device;
    the first graph's f64 made the advice "x.double()"). A promotion inside the computation (bf16 weights times an
    f32 rate) is made at another line and is not this."""
    if producer(r.graph) != "torch_xla" or change.left.opcode != "parameter" or change.right.opcode != "parameter":
        return ""
    changes = r.diff.changes if r.diff is not None else [o for c in r.causes for o in c.origins]
    one_sided = [o for o in changes if (o.left is None) != (o.right is None)]
    for mine, other, side in ((change.left, change.right, "left"), (change.right, change.left, "right")):
        target = other.shape.split("[", 1)[0].strip("(")
        for o in one_sided:
            ref = o.left if side == "left" else o.right
            if (ref is not None and ref.opcode == "convert" and ref.shape.split("[", 1)[0] == target
                    and printed_dims(mine.shape) is not None and printed_dims(ref.shape) == printed_dims(mine.shape) and ref.frames
                    and mine.frames
                    and (ref.frames[0].file, ref.frames[0].line) == (mine.frames[0].file, mine.frames[0].line)):
                return target
    return ""
