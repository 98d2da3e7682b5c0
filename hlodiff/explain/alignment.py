"""Align two runs' graph sequences step by step: which graph of one faces which graph of the other.

Used to line ranks up against the majority (:mod:`hlodiff.explain.divergence`): keys are canonical fingerprints, so two
ranks that ran the same graphs align one to one, and a rank that ran another graph, an extra one, or stopped early
shows up as a substitution, an insertion or a gap at the end.
"""

from __future__ import annotations

BAND = 32


def align(left: list[str], right: list[str]) -> list[tuple[int | None, int | None]]:
    """Edit-distance alignment of two key sequences: pairs (i, j), (i, None) for a left item with no partner,
    (None, j) for an extra right item.

    Unlike a longest-common-subsequence diff, a substitution costs one edit, so ``AAAAAA`` vs ``AAABAA`` pairs
    the B with the fourth A (the rank ran another graph at that step) instead of calling it an extra graph plus a
    missing one at the end. The search stays in a band around the diagonal (``BAND`` steps wider than the length
    difference): ranks of one job drift apart by a few graphs, not thousands, and the band keeps this linear.
    """
    head = 0
    while head < min(len(left), len(right)) and left[head] == right[head]:
        head += 1
    tail = 0
    while (tail < min(len(left), len(right)) - head and left[len(left) - 1 - tail] == right[len(right) - 1 - tail]):
        tail += 1
    if head or tail:  # equal ends pair up as they are; only the middle needs the search
        middle = _align(left[head:len(left) - tail], right[head:len(right) - tail])
        return ([(k, k) for k in range(head)]
                + [(None if i is None else i + head, None if j is None else j + head) for i, j in middle]
                + [(len(left) - tail + k, len(right) - tail + k) for k in range(tail)])
    return _align(left, right)


def _align(left: list[str], right: list[str]) -> list[tuple[int | None, int | None]]:
    n, m = len(left), len(right)
    band = abs(n - m) + BAND
    inf = n + m + 1
    # cost[(i, j)]: edits to align left[i:] with right[j:]; traced forward from the start, so that among equally
    # cheap alignments the earliest graphs pair up and a rank that stopped early has its gap at the end.
    cost: dict[tuple[int, int], int] = {(n, m): 0}
    for i in range(n, -1, -1):
        for j in range(min(m, i + band), max(0, i - band) - 1, -1):
            if i == n and j == m:
                continue
            best = inf
            if i < n and j < m:
                best = cost.get((i + 1, j + 1), inf) + (left[i] != right[j])
            if i < n:
                best = min(best, cost.get((i + 1, j), inf) + 1)
            if j < m:
                best = min(best, cost.get((i, j + 1), inf) + 1)
            cost[(i, j)] = best
    pairs: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n or j < m:
        here = cost[(i, j)]
        if i < n and j < m and cost.get((i + 1, j + 1), inf) + (left[i] != right[j]) == here:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif i < n and cost.get((i + 1, j), inf) + 1 == here:
            pairs.append((i, None))
            i += 1
        else:
            pairs.append((None, j))
            j += 1
    return pairs
