"""The longest run of a sequence kept in order: what a matching calls unmoved. Outputs paired across two graphs
(the rest were "moved"), and the side-by-side view's anchors (the instructions printed on one row) both ask it.
"""

from __future__ import annotations

import bisect


def longest_increasing(values: list[int]) -> list[int]:
    """The positions, in order, of a longest strictly increasing subsequence of ``values`` (patience sorting,
    O(n log n): a graph's thousands of pairs stay cheap)."""
    tails: list[int] = []
    tail_at: list[int] = []
    prev = [-1] * len(values)
    for k, v in enumerate(values):
        i = bisect.bisect_left(tails, v)
        if i == len(tails):
            tails.append(v)
            tail_at.append(k)
        else:
            tails[i] = v
            tail_at[i] = k
        prev[k] = tail_at[i - 1] if i else -1
    chain = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(k)
        k = prev[k]
    return chain[::-1]
