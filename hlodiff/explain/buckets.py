"""Bucket plans for recompilations that follow a size: which sizes to pad to, computed from the run itself.

A family whose graphs differ by the size of one or more dimensions compiles one graph per size. The run holds every
size that occurred and how many executions had it (cache hits included: a save-tensors file or a ``record``
folder lists every execution; an XLA dump alone, only compilations), and the logs hold what each compilation cost.

Cost model (docs/buckets.md): padding every size up to the smallest bucket at or above it, a plan with buckets
``b_1 < ... < b_k`` (the largest size seen always one of them) costs ``k`` compilations plus the padded work
``W = sum over executions of (bucket(v) - v)``, in units of the dimension (work grows linearly with it).
Minimising ``k * C + T * W`` needs ``T``, the execution seconds per unit of size, which no capture hlodiff reads
records; so for each ``k`` a dynamic programme over the sorted sizes finds the buckets of least padded work, and
``k`` is taken at the knee of that curve (the point farthest below the chord from one bucket to one per size):
past it, each extra compilation buys little padding back. ``C``, the compile seconds per graph, is reported beside
the plan (what the plan saves). Powers of two are shown beside it.

Not planned as buckets: a size that grows every execution without bound (a cache that grows each step) gets
``preallocate``: allocate the largest size seen once and mask; sizes that already fall on a few buckets (every one
a multiple of 8, or spread apart and each reused, at most 8 of them: a run already padded to a plan's buckets)
get ``expected``: one graph per bucket is what bucketing gives.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hlodiff.hlo.model import Module

MAX_BUCKETS = 12
"""The dynamic programme tries up to this many buckets: more is not a plan a user would type in."""
ALIGNED = 8
MAX_ALIGNED_VALUES = 8
SPREAD = 1.3


@dataclass(frozen=True, slots=True)
class Dimension:
    """One size that varies: where it sits (parameter position and axis, or an instruction's shape) and its value
    in each graph of the family (keyed by cache key), with the other places that always take the same value."""

    label: str
    by_key: dict[str, int]
    together: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BucketPlan:
    """A plan for one size of one family (typed facts; the words are the renderers')."""

    kind: str
    """``buckets``, ``preallocate`` (growth without bound) or ``expected`` (already on a few buckets)."""
    dimension: str
    together: tuple[str, ...]
    values: tuple[tuple[int, int], ...]
    """(size, executions) in size order."""
    buckets: tuple[int, ...]
    graphs_now: int
    graphs_planned: int
    padded_fraction: float
    powers_of_two: dict
    counts_from: str
    """``executions`` (every execution of the family was seen) or ``compilations`` (an XLA dump alone)."""
    compile_seconds_per_graph: float | None = None
    curve: tuple[tuple[int, float], ...] = ()
    """Least padded fraction for each number of buckets the programme tried."""
    other_sizes: tuple[str, ...] = field(default=())
    """Other dimensions that vary independently (not bucketed by this plan; counted in ``graphs_planned``)."""

    def to_json(self) -> dict:
        return {
            "kind": self.kind, "dimension": self.dimension, "together": list(self.together),
            "values": [{"size": v, "executions": n} for v, n in self.values],
            "buckets": list(self.buckets), "graphs_now": self.graphs_now, "graphs_planned": self.graphs_planned,
            "padded_fraction": round(self.padded_fraction, 4), "powers_of_two": self.powers_of_two,
            "other_sizes": list(self.other_sizes),
            "cost_model": {"counts_from": self.counts_from, "compile_seconds_per_graph": self.compile_seconds_per_graph,
                           "execution_seconds_per_unit": None, "choice": "knee" if self.kind == "buckets" else None,
                           "curve": [{"buckets": k, "padded_fraction": round(f, 4)} for k, f in self.curve]},
        }


# -- the sizes of a family ---------------------------------------------------------------------------------------


def parameter_dimensions(modules: dict[str, Module]) -> list[Dimension]:
    """Dimensions of entry parameters that differ between the family's compiled graphs (cache key -> module),
    when every graph has the same parameters up to sizes; dimensions whose values always agree are one size."""
    shapes = {key: [p.shape for p in m.entry.parameters()] for key, m in modules.items()}
    first = next(iter(shapes.values()), None)
    if first is None or any(len(s) != len(first) for s in shapes.values()):
        return []
    names = [p.name for p in next(iter(modules.values())).entry.parameters()]  # as the causes name them: %p3.5
    groups: dict[tuple, list[str]] = {}
    for position, shape in enumerate(first):
        if shape.is_tuple or any(s[position].is_tuple or s[position].element_type != shape.element_type
                                 or len(s[position].dims) != len(shape.dims) for s in shapes.values()):
            return []
        for axis in range(len(shape.dims)):
            values = tuple((key, s[position].dims[axis]) for key, s in shapes.items())
            if len({v for _, v in values}) > 1:
                dims = ",".join("N" if a == axis else str(d) for a, d in enumerate(shape.dims))
                groups.setdefault(values, []).append(f"dim {axis} of parameter {position} %{names[position]} "
                                                      f"({shape.element_type}[{dims}])")
    return [Dimension(labels[0], dict(values), tuple(labels[1:])) for values, labels in groups.items()]


def changed_dimension(pairs: list[tuple[str, str, object, object]]) -> Dimension | None:
    """A size inside the graphs (not an input): from the shape causes, ``(left key, right key, left shape, right
    shape)`` of the first changed instruction of each recompilation; the first axis that differs. The same axis of
    a tensor of the same rank and type each time, or none: sizes of different tensors are no one dimension."""
    by_key: dict[str, int] = {}
    label = None
    kinds: set[tuple] = set()
    for left_key, right_key, left, right in pairs:
        if left is None or right is None or left.is_tuple or right.is_tuple or len(left.dims) != len(right.dims):
            continue
        axes = [a for a, (x, y) in enumerate(zip(left.dims, right.dims)) if x != y]
        if len(axes) != 1:
            continue
        what = (axes[0], len(right.dims), right.element_type)
        if kinds and what not in kinds:
            return None  # another axis of another tensor each time: no one size to plan (review 2, F11)
        kinds.add(what)
        by_key.setdefault(left_key, left.dims[axes[0]])
        by_key[right_key] = right.dims[axes[0]]
        label = label or f"dim {axes[0]} of {right.element_type}[...] inside the graph"
    return Dimension(label, by_key) if label and len(set(by_key.values())) > 1 else None


# -- the plan ----------------------------------------------------------------------------------------------------


def plan_for(dim: Dimension, sequence: list[str], *, counts_from: str, compile_seconds: float | None,
             others: list[Dimension] = (), data_sized: bool = False, concatenated: bool = False) -> BucketPlan | None:
    """The plan for ``dim`` over the family's executions (``sequence``: the cache key of each, in run order)."""
    seen = [dim.by_key[k] for k in sequence if k in dim.by_key]
    counts = Counter(seen)
    if len(counts) < 2:
        return None
    values = tuple(sorted(counts.items()))
    graphs_now = len({k for k in sequence if k in dim.by_key})
    common = dict(dimension=dim.label, together=dim.together, values=values, graphs_now=graphs_now,
                  counts_from=counts_from, compile_seconds_per_graph=compile_seconds,
                  powers_of_two=_powers_of_two(values, sequence, dim, others),
                  other_sizes=tuple(o.label for o in others))
    if verdict(values, seen, counts_from, data_sized, concatenated) == "preallocate":
        top = values[-1][0]
        everything = {v: top for v, _ in values}
        return BucketPlan(kind="preallocate", buckets=(top,), graphs_planned=_graphs(sequence, dim, others, everything),
                          padded_fraction=_padded(everything, values), **common)
    if verdict(values, seen, counts_from, data_sized, concatenated) == "expected":
        same = {v: v for v, _ in values}
        return BucketPlan(kind="expected", buckets=tuple(v for v, _ in values),
                          graphs_planned=_graphs(sequence, dim, others, same), padded_fraction=0.0, **common)
    curve, plans = least_padding(values)
    k = knee(curve, len(values))
    buckets = plans[k]
    mapping = _mapping(buckets, values)
    return BucketPlan(kind="buckets", buckets=buckets, graphs_planned=_graphs(sequence, dim, others, mapping),
                      padded_fraction=_padded(mapping, values), curve=tuple(curve), **common)


def verdict(values: tuple[tuple[int, int], ...], seen: list[int], counts_from: str, data_sized: bool = False,
            concatenated: bool = False) -> str:
    """What a size that varies over a family calls for, the one test the plan and the fix share (the fix says
    "expected: one graph per bucket" exactly when the plan would be ``expected``): ``preallocate`` when every
    execution brings a new, larger size, ``expected`` when the sizes are already on a few buckets, else
    ``buckets``. ``values``: (size, how many times it ran or compiled); ``seen``: the sizes in run order;
    ``data_sized``: the size comes from the data (an index list made on the host, a mask's count: 6 and 4 classes
    present), where sizes that recur are the data's, not buckets, unless every one is padded (a multiple of 8);
    ``concatenated``: the graphs grow the changing size themselves by a concatenation
    (:func:`hlodiff.explain.family_buckets.concatenated_families`), so a size new and larger at every compilation
    is growth even where only compilations are seen (JAX: a loop
    passing a jitted function its own ``jnp.concatenate``, 0, 8, ..., 40 all multiples of 8; crossings round 6)."""
    if grows_each_time(seen) and (counts_from == "executions" or concatenated):
        return "preallocate"
    if counts_from == "executions" and not comes_back(seen):
        return "buckets"  # sizes that never come back (8 then 6 for good) are no buckets, whatever their values
    if counts_from == "executions" and closes_each_round(seen, min(seen)):
        return "buckets"  # 32,32,32,4 every epoch: a short last batch that recurs, not a size chosen as a bucket
    if data_sized:  # a size a host list or the data sets (bincount, a mask's count): only padded sizes are buckets
        return "expected" if all(v % ALIGNED == 0 for v, _ in values) else "buckets"
    return "expected" if already_bucketed(values) else "buckets"


MIN_ROUND = 3
"""Shortest round (batches per epoch) read as an epoch whose last batch is short; two sizes that merely alternate
(A,B,A,B) may as well be two buckets or two tasks."""


def closes_each_round(seen: list, item) -> bool:
    """``item`` runs exactly at the end of every full round of a fixed length (at least :data:`MIN_ROUND`) and
    nowhere else, one other value filling the rest (32,32,32,4,32,32,32,4, a run cut mid-round included): the last
    batch of each epoch, the same evidence whether the run held one epoch or many."""
    if len(set(seen)) != 2 or item not in seen:
        return False
    at = [i for i, v in enumerate(seen) if v == item]
    period = at[0] + 1
    return (period >= MIN_ROUND and len(at) >= 2 and len(at) == len(seen) // period
            and all((i + 1) % period == 0 for i in at))


def comes_back(seen: list[int]) -> bool:
    """Some size is executed again after another size ran (8, 16, 8): the run itself shows the sizes recur. A size
    that changed once and stayed (8, 8, 8, 6, 6, 6) never comes back: one switch, not a set of buckets; "expected"
    needs the strongest evidence, the same values coming back."""
    runs = [v for i, v in enumerate(seen) if i == 0 or seen[i - 1] != v]
    return len(runs) > len(set(runs))


def already_bucketed(values: tuple[tuple[int, int], ...]) -> bool:
    """A few sizes (at most 8) that look chosen rather than raw: all multiples of 8, or spread apart (each at
    least 30 % above the one below) and each reused (executed more than once). What padding to a few buckets
    gives: one graph per bucket, reused. Raw sizes are dense (5, 6, 7, ...; :func:`consecutive`) or seen once (a
    short last batch)."""
    if len(values) > MAX_ALIGNED_VALUES:
        return False
    if all(v % ALIGNED == 0 for v, _ in values):
        return True
    sizes = [v for v, _ in values]
    if consecutive(sizes):
        return False
    spread = all(b >= SPREAD * a for a, b in zip(sizes, sizes[1:]))
    return spread and all(n >= 2 for _, n in values)


MIN_CONSECUTIVE = 3
"""Fewest sizes that, filling a range with no gap (2, 3, 4), read as counts the data set rather than a plan."""


def consecutive(sizes: list[int]) -> bool:
    """Round 32 (r32_tx_subbatch_count_stack: 2, 3 or 4 sub-batches stacked per step): at least
    :data:`MIN_CONSECUTIVE` sizes that fill a range of integers with no gap are the data's own counts (how many
    sub-batches, crops or items came), not sizes someone chose to pad to; small counts pass the "spread apart" test
    of :func:`already_bucketed` (3 is 1.5 times 2) only because they are small. Sorted, distinct sizes."""
    return len(sizes) >= MIN_CONSECUTIVE and sizes[-1] - sizes[0] == len(sizes) - 1


def least_padding(values: tuple[tuple[int, int], ...]) -> tuple[list[tuple[int, float]], dict[int, tuple[int, ...]]]:
    """For k = 1 .. min(n, MAX_BUCKETS): the buckets (a subset of the sizes, the largest always in) that leave the
    least padded work, by dynamic programming over the sorted sizes (divide and conquer over each row: O(k n log n),
    a run of thousands of distinct lengths plans in well under a second); and the padded fraction of each."""
    sizes = [v for v, _ in values]
    n = len(sizes)
    count_sum, work_sum = [0], [0]
    for v, c in values:
        count_sum.append(count_sum[-1] + c)
        work_sum.append(work_sum[-1] + v * c)
    total = work_sum[-1] or 1

    def pad(i: int, j: int) -> int:  # sizes i..j padded up to sizes[j]
        return sizes[j] * (count_sum[j + 1] - count_sum[i]) - (work_sum[j + 1] - work_sum[i])

    inf = float("inf")
    best = [[inf] * n for _ in range(min(n, MAX_BUCKETS) + 1)]
    cut = [[0] * n for _ in range(len(best))]
    for j in range(n):
        best[1][j] = pad(0, j)

    def fill(k: int, lo: int, hi: int, first: int, last: int) -> None:
        """best[k][j] for j in lo..hi, the last bucket's first size between first and last: that start never
        moves left as j grows (padding up to the right end is a Monge cost), so halving j bounds the search."""
        if lo > hi:
            return
        j = (lo + hi) // 2
        for i in range(max(first, k - 1), min(j, last) + 1):  # the last bucket covers sizes i..j
            cost = best[k - 1][i - 1] + pad(i, j)
            if cost < best[k][j]:
                best[k][j], cut[k][j] = cost, i
        fill(k, lo, j - 1, first, cut[k][j])
        fill(k, j + 1, hi, cut[k][j], last)

    for k in range(2, len(best)):
        fill(k, k - 1, n - 1, k - 1, n - 1)
    curve, plans = [], {}
    for k in range(1, len(best)):
        buckets, j, m = [], n - 1, k
        while m >= 1:
            buckets.append(sizes[j])
            j = cut[m][j] - 1 if m > 1 else -1
            m -= 1
        plans[k] = tuple(sorted(buckets))
        curve.append((k, best[k][n - 1] / total))
    return curve, plans


def knee(curve: list[tuple[int, float]], n: int) -> int:
    """The number of buckets farthest below the chord from (1 bucket, its padding) to (one per size, none)."""
    top = curve[0][1]
    if n <= 1 or top <= 0:
        return 1
    best_k, best_gap = 1, 0.0
    for k, fraction in curve:
        gap = (1 - (k - 1) / (n - 1)) - fraction / top
        if gap > best_gap + 1e-12:
            best_k, best_gap = k, gap
    return best_k


def _mapping(buckets: tuple[int, ...], values) -> dict[int, int]:
    return {v: next(b for b in buckets if b >= v) for v, _ in values}


def _padded(mapping: dict[int, int], values) -> float:
    work = sum(v * c for v, c in values) or 1
    return sum((mapping[v] - v) * c for v, c in values) / work


def _graphs(sequence: list[str], dim: Dimension, others: list[Dimension], mapping: dict[int, int]) -> int:
    """Graphs the run would compile with ``dim`` padded by ``mapping``: one per combination of the padded size and
    the other sizes, times the graphs that already differed at one size for another reason (those still differ
    once padded: the most of them at any size the bucket takes in)."""
    keys: dict[tuple, set[str]] = {}
    for key in sequence:
        if key in dim.by_key:
            keys.setdefault((dim.by_key[key], *(o.by_key.get(key) for o in others)), set()).add(key)
    planned: dict[tuple, int] = {}
    for (value, *rest), same in keys.items():
        combo = (mapping[value], *rest)
        planned[combo] = max(planned.get(combo, 0), len(same))
    return sum(planned.values())


def _powers_of_two(values, sequence, dim, others) -> dict:
    mapping = {v: v if v <= 1 else 1 << (v - 1).bit_length() for v, _ in values}
    return {"buckets": sorted(set(mapping.values())), "graphs": _graphs(sequence, dim, others, mapping),
            "padded_fraction": round(_padded(mapping, values), 4)}


def grows_each_time(seen: list[int]) -> bool:
    """Every execution a new, larger size: nothing repeats, so no bucket would be hit twice."""
    return len(seen) >= 3 and all(b > a for a, b in zip(seen, seen[1:]))
