"""What a difference costs: figures of graph B minus graph A, and the copies and outputs that appeared or went.

Copies are told apart by what they copy and where (shape, innermost loop), not by instruction name: names change
with every recompilation.
"""

from __future__ import annotations

from collections import Counter

from hlodiff.cost.model import GraphCost
from hlodiff.hlo.shapes import byte_size_of


def _mb(n: int | None) -> str:
    """Binary units, as every hlodiff report prints sizes."""
    if n is None:
        return "unknown bytes"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _minus(b: int | float | None, a: int | float | None):
    if a is None or b is None:
        return None
    return round(b - a, 6) if isinstance(a, float) or isinstance(b, float) else b - a


def cost_delta(left: GraphCost, right: GraphCost) -> dict:
    """The ``cost`` object of ``compare --json``: ``left``/``right`` figures, ``delta`` (right - left), and
    ``changes``: one sentence per copy group, loop-buffer copy or output shape that appeared or disappeared (a
    copy is told once: as a whole-buffer loop copy when it is one)."""
    figures = ("parameter_bytes", "output_bytes", "aliased_bytes", "peak_bytes", "copy_bytes_per_step",
               "loop_buffer_copy_bytes_per_step", "compile_seconds")
    a, b = _figures(left), _figures(right)
    changes = _copy_changes(left, right) + _loop_buffer_changes(left, right) + _output_changes(left, right)
    return {"left": a, "right": b, "delta": {k: _minus(b[k], a[k]) for k in figures},
            "peak_source": {"left": left.peak_source, "right": right.peak_source},
            "aliased_source": {"left": left.aliased_source, "right": right.aliased_source},
            "unknowns": _unknowns(left, right), "changes": changes}


def _unknowns(left: GraphCost, right: GraphCost) -> list[dict]:
    """Figures one side cannot give (their delta is null): once each, with the capture that gives them."""
    seen = []
    for u in (*left.unknowns, *right.unknowns):
        if u.to_json() not in seen:
            seen.append(u.to_json())
    return seen


def _figures(g: GraphCost) -> dict:
    lbc = [c.bytes_per_step for c in g.loop_buffer_copies]
    return {"parameter_bytes": g.parameters.bytes, "output_bytes": g.outputs.bytes, "aliased_bytes": g.aliased_bytes,
            "aliased_rounding_bytes": g.aliased_rounding_bytes,
            "peak_bytes": g.peak_bytes, "peak_rounding_bytes": g.peak_rounding_bytes,
            "copy_bytes_per_step": g.copy_bytes_per_step(),
            "loop_buffer_copy_bytes_per_step": None if None in lbc else sum(lbc),
            "copies": len(g.copies), "loop_buffer_copies": sum(c.count for c in g.loop_buffer_copies),
            "compile_seconds": g.compile_seconds}


def _copy_key(c) -> tuple:
    return (c.shape, c.loop is not None)


def _plain_copies(g: GraphCost) -> list:
    """The copies not already told as whole-buffer loop copies (those get their own, more precise sentence)."""
    in_loop_buffers = {name for lbc in g.loop_buffer_copies for name in lbc.copies}
    return [c for c in g.copies if c.name not in in_loop_buffers]


def _copy_changes(left: GraphCost, right: GraphCost) -> list[str]:
    left_copies, right_copies = _plain_copies(left), _plain_copies(right)
    a = Counter(_copy_key(c) for c in left_copies)
    b = Counter(_copy_key(c) for c in right_copies)
    out = []
    for key in sorted(set(a) | set(b)):
        n = b[key] - a[key]
        if n == 0:
            continue
        shape, in_loop = key
        where = " per iteration in a loop" if in_loop else ""
        sample = next(c for c in (right_copies if n > 0 else left_copies) if _copy_key(c) == key)
        per_step = sample.bytes_per_step
        total = f" ({_mb(abs(n) * per_step)} per step)" if per_step is not None else ""
        out.append(f"{n:+d} cop{'y' if abs(n) == 1 else 'ies'} of {shape}{where}{total}")
    return out


def _loop_buffer_changes(left: GraphCost, right: GraphCost) -> list[str]:
    def group(g):
        counts = Counter()
        sample = {}
        for c in g.loop_buffer_copies:
            counts[c.shape] += c.count
            sample.setdefault(c.shape, c)
        return counts, sample

    a, sa = group(left)
    b, sb = group(right)
    out = []
    for shape in sorted(set(a) | set(b)):
        n = b[shape] - a[shape]
        if n == 0:
            continue
        c = sb.get(shape) if n > 0 else sa.get(shape)
        per_step = None if c.trip_count is None else abs(n) * c.buffer_bytes * c.trip_count
        where = f" at {c.location.where}" if c.location is not None else ""
        out.append(f"{n:+d} whole-buffer cop{'y' if abs(n) == 1 else 'ies'} of {shape} per iteration in "
                   f"%{c.loop} ({_mb(per_step)} per step){where}")
    return out


def _output_changes(left: GraphCost, right: GraphCost) -> list[str]:
    """Outputs counted by shape (output order is not identity); the ones listed as gone or new are described by
    the op computing them, preferring those whose op has no counterpart on the other side."""
    la, lb = _outputs(left), _outputs(right)
    a, b = Counter(s for s, _ in la), Counter(s for s, _ in lb)
    out = []
    for verb, extra, mine, theirs in (("added", b - a, lb, la), ("removed", a - b, la, lb)):
        n = sum(extra.values())
        if not n:
            continue
        other = Counter(theirs)
        items = []
        for shape in sorted(extra):
            same = sorted((o for o in mine if o[0] == shape), key=lambda o: (other[o] > 0, o[1]))
            items.extend(same[:extra[shape]])
        nbytes = sum(byte_size_of(shape) for shape, _ in items)
        listed = ", ".join(shape + (f" {op}" if op else "") for shape, op in items[:4]) + (", ..." if n > 4 else "")
        out.append(f"{n} output{'s' if n != 1 else ''} {verb} ({listed}; {_mb(nbytes)})")
    return out


def _outputs(g: GraphCost) -> list[tuple[str, str]]:
    ops = list(g.output_ops) + [None] * (len(g.output_shapes) - len(g.output_ops))
    return [(shape, op or "") for shape, op in zip(g.output_shapes, ops)]
