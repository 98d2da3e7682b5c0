"""Which rank the others are compared with, and whether the ranks given are one job at all.

The reference is the sequence most ranks share (ties: the one closest to all others, then the lowest rank); with
two ranks that differ there is no majority, so the one doing less is taken and why is said. Dumps of two different
programs given together would make every step a divergence: they are refused (:class:`NotOneJobError`).
:mod:`hlodiff.explain.ranks` builds the divergence section around these.
"""

from __future__ import annotations

import difflib
from collections import Counter

from hlodiff.errors import HlodiffError
from hlodiff.explain.families import family_key
from hlodiff.explain.inventory import GraphSummary
from hlodiff.explain.parallel import RankResult


class NotOneJobError(HlodiffError):
    """The dumps given together come from different programs: there is nothing to compare rank against rank."""


def reference_rank(keys: dict[int, tuple[str, ...]]) -> int:
    """The rank whose sequence most ranks share; ties go to the sequence closest to all others, then the lowest
    rank (rank 0 is where users look first)."""
    counts = Counter(keys.values())
    top = max(counts.values())
    tied = {seq for seq, n in counts.items() if n == top}
    if len(tied) == 1:
        (best,) = tied
        return min(r for r, seq in keys.items() if seq == best)

    def distance(seq: tuple[str, ...]) -> float:
        return sum(n * (1 - difflib.SequenceMatcher(None, seq, other, autojunk=False).ratio())
                   for other, n in counts.items())

    scores = {seq: distance(seq) for seq in tied}
    return min((r for r, seq in keys.items() if seq in tied), key=lambda r: (scores[keys[r]], r))


def same_sequence_as(keys: dict[int, tuple[str, ...]]) -> dict[int, int]:
    """Each rank whose sequence an earlier rank ran too -> the first such rank (the JSON's ``same_as``)."""
    first: dict[tuple[str, ...], int] = {}
    out = {}
    for rank in sorted(keys):
        owner = first.setdefault(keys[rank], rank)
        if owner != rank:
            out[rank] = owner
    return out


def check_one_job(results: list[RankResult], sequences: dict[int, list[GraphSummary]]) -> None:
    """Dumps of two different programs given together would make every step a divergence: refuse them."""
    kinds = {r.spec.rank: {g.record.kind for g in sequences[r.spec.rank]} for r in results}
    labels = {r.spec.rank: {family_key(g)[1] for g in sequences[r.spec.rank]} for r in results}
    prints = {r.spec.rank: {g.fingerprint for g in sequences[r.spec.rank]} for r in results}
    base = results[0]
    for other in results[1:]:
        a, b = base.spec.rank, other.spec.rank
        if kinds[a] != kinds[b]:
            raise NotOneJobError(
                f"these dumps do not look like one job: rank {b} is {_kinds(kinds[b])} and rank {a} is "
                f"{_kinds(kinds[a])}; give the dumps of one job's ranks", path=other.spec.paths[0])
        if not (prints[a] & prints[b]) and not (labels[a] & labels[b]):
            raise NotOneJobError(
                f"these dumps do not look like one job: rank {b} shares no graph and no function or sync line with "
                f"rank {a} ({base.spec.paths[0]}); give the dumps of one job's ranks, or explain each on its own",
                path=other.spec.paths[0])


def _kinds(kinds: set[str]) -> str:
    words = {"save_tensors": "a torch_xla save-tensors file", "xla_dump": "an XLA dump folder",
             "hlo_file": "an HLO file", "executions": "an XLA dump read with its PT_XLA_DEBUG log (hlodiff record, or the same flags)"}
    return " and ".join(words.get(k, k) for k in sorted(kinds)) or "empty"


def two_rank_reference(sequences: dict[int, list[GraphSummary]], tied: int) -> tuple[int, str]:
    """Of 2 ranks that differ, the one doing less (fewer instructions over its graphs) is the reference, so the rank
    named is the one that computes something more, or compiles graphs more (review F7: rank 0 alone computed a
    metric under ``if xm.is_master_ordinal()``, and "rank 1 diverged" sent the user to the wrong rank). Before the
    work, the compilations: a rank that compiled again where the other did not is the one whose program changed
    (round 3's spawn_uneven_shard: rank 1's short last batch is less work, and its own graph). Equal work (another
    size, the same ops): ``tied``, the lowest rank."""
    if len({len(graphs) for graphs in sequences.values()}) != 1:
        return tied, ""  # one rank ran more graphs (or stopped early): the sequences say who differs
    compiled = {rank: sum(1 for g in graphs if g.compiled) for rank, graphs in sequences.items()}
    if len(set(compiled.values())) > 1:  # one rank compiled again where the other did not: its program changed
        fewer = min(compiled, key=lambda r: (compiled[r], r))
        more = max(compiled, key=lambda r: (compiled[r], -r))
        return fewer, (f"rank {more} compiled more graphs than rank {fewer} ({compiled[more]} against "
                       f"{compiled[fewer]}): rank {more} is the one whose program changed")
    work = {rank: sum(g.instructions for g in graphs) for rank, graphs in sequences.items()}
    if len(set(work.values())) == 1:
        return tied, ""
    less = min(work, key=lambda r: (work[r], r))
    more = max(work, key=lambda r: (work[r], -r))
    return less, (f"rank {more} runs more than rank {less} ({work[more]} instructions over its graphs against "
                  f"{work[less]}): rank {more} is the one that does something the other does not")
