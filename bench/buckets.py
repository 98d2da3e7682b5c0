"""Bucket planning time, beside the plain quadratic programme it replaced, on random runs of many distinct sizes.

    python bench/buckets.py [--runs 3]

Both find the least padded work for 1 .. 12 buckets over the same sorted sizes (hlodiff/explain/buckets.py fills
each row by divide and conquer; the baseline tries every start of the last bucket). Prints figures only; nothing
is asserted (tests/test_buckets.py checks the two agree).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, best_of, header  # noqa: E402

sys.path.insert(0, str(REPO))
from hlodiff.explain.buckets import MAX_BUCKETS, least_padding  # noqa: E402


def quadratic(values) -> list[int]:
    sizes = [v for v, _ in values]
    n = len(sizes)
    count, work = [0], [0]
    for v, c in values:
        count.append(count[-1] + c)
        work.append(work[-1] + v * c)

    def pad(i, j):
        return sizes[j] * (count[j + 1] - count[i]) - (work[j + 1] - work[i])

    row = [pad(0, j) for j in range(n)]
    ends = [row[-1]]
    for k in range(2, min(n, MAX_BUCKETS) + 1):
        row = [min((row[i - 1] + pad(i, j) for i in range(k - 1, j + 1)), default=float("inf")) for j in range(n)]
        ends.append(row[-1])
    return ends


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    header("bucket plans: divide and conquer vs the quadratic programme")
    rng = random.Random(1)
    for n in (100, 300, 1000, 3000):
        values = tuple((v, rng.randint(1, 5)) for v in sorted(rng.sample(range(1, 50_000), n)))
        fast, (curve, _) = best_of(lambda: least_padding(values), args.runs)
        slow, ends = best_of(lambda: quadratic(values), 1 if n > 1000 else args.runs)
        total = sum(v * c for v, c in values)
        same = all(abs(f - e / total) < 1e-12 for (_, f), e in zip(curve, ends))
        print(f"{n:5d} distinct sizes: {fast:7.3f} s   quadratic {slow:7.3f} s   same least padding: {same}")


if __name__ == "__main__":
    main()
