"""Whether a short leading dimension is a batch's: the evidence "the last batch is short" needs when the run's
executions are not seen (JAX logs compilations only, so the graph compiled last is no sign of the last step).

A batch is made of several arrays cut to the same rows (inputs and labels, ``x[i:i + B], y[i:i + B]``): on a short
batch they all lose the same rows together. One argument shrinking alone (negatives filtered on the host by label,
200 then 199 at a middle step: review 23, F1) has a size that follows the data; dropping that call would drop a
step, not an epoch's remainder.
"""

from __future__ import annotations

from collections import Counter


def _entry_shapes(graph) -> list | None:
    canonical = getattr(graph, "_canonical", None)
    if canonical is None:
        return None
    entry = canonical.entry
    params = [entry.insts[n] for n in entry.parameters()]
    params.sort(key=lambda i: i.parameter_number if i.parameter_number is not None else -1)
    return [i.shape for i in params]


def _shrank_rows(left, right) -> tuple[int, int] | None:
    """(rows before, rows after) when only the first dimension of a parameter shrank."""
    if left.is_tuple or right.is_tuple or len(left.dims) != len(right.dims) or not left.dims:
        return None
    if right.dims[0] < left.dims[0] and tuple(left.dims[1:]) == tuple(right.dims[1:]):
        return left.dims[0], right.dims[0]
    return None


def batch_rows(r) -> bool:
    """Two or more entry parameters of the recompiled graph lost the same leading rows against the graph it is
    compared with (``f32[16,8] -> f32[6,8]`` and ``f32[16,1] -> f32[6,1]``): the arguments of one batch."""
    if r.closest is None:
        return False
    before, after = _entry_shapes(r.closest), _entry_shapes(r.graph)
    if not before or not after or len(before) != len(after):
        return False
    shrank = Counter(s for s in (_shrank_rows(a, b) for a, b in zip(before, after)) if s is not None)
    return any(n >= 2 for n in shrank.values())
