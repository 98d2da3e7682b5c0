"""torch_xla's side of :mod:`hlodiff.explain.across_runs`: each graph B compiled, paired with A's graph of the same
hash, else with an unmatched graph of A that is the same program or was synced from the same line.

A graph hash is torch_xla's persistent cache key, so the same hash compiled again is ``miss_same_key`` (an entry
not loadable, missing, or unknown), and when the two programs under that one hash differ (a setting the hash does
not cover: the matmul precision) the difference is kept beside the verdict: a device that loads entries would run
run A's program.
"""

from __future__ import annotations

from hlodiff.dumps.cached_run import Run
from hlodiff.dumps.compile_cache import CacheFolder
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import InputWarning
from hlodiff.explain.program_pairs import counterpart, first_sightings
from hlodiff.explain.program_differences import SAME_KEY_PROGRAM, donation_difference, precision_differences
from hlodiff.explain.run_differences import KeyDifference
from hlodiff.explain.run_settings import donors_dropped
from hlodiff.explain.run_verdicts import CANNOT_DESERIALIZE, Verdict, miss_hlo_differs, miss_key_differs
from hlodiff.hlo.model import user_frame


def torch_verdicts(run_a: Run, run_b: Run, cache: CacheFolder | None,
                    warnings: list[InputWarning]) -> list[Verdict]:
    first_a = first_sightings(run_a.records)
    first_b = first_sightings(run_b.records)
    hashes_a = {r.graph_hash: r for r in first_a}
    unmatched_a = [r for r in first_a if r.graph_hash not in {b.graph_hash for b in first_b}]
    fingerprints: dict[int, str] = {}

    def fingerprint(rec: GraphRecord) -> str:  # each program normalized once, however many it is paired against
        if id(rec) not in fingerprints:
            from hlodiff.graph import canonicalize

            fingerprints[id(rec)] = canonicalize(rec.module()).fingerprint
        return fingerprints[id(rec)]

    verdicts = []
    for position, rec in enumerate(first_b):
        v = Verdict(rec.graph_hash or f"#{rec.index}", "new", b=rec, b_record=rec, called_at=user_frame(rec.frames))
        if cache is not None and rec.graph_hash:
            v.entry_in_cache = cache.has(rec.graph_hash)
        compiled = run_b.compiled_hashes is None or rec.graph_hash in run_b.compiled_hashes
        if rec.graph_hash in hashes_a:
            v.a = v.a_record = hashes_a[rec.graph_hash]
            if not compiled:
                v.verdict = "hit"
            else:
                v.verdict = "miss_same_key"
                failures = run_b.torch.deserialize_failures if run_b.torch else []
                if failures or (run_b.torch and run_b.torch.counter("PersistentCacheDeserializeFailure")):
                    v.reason = "not_loadable"
                    v.detail = failures[0][2] if failures else None
                elif looked_nothing_up(run_b):
                    v.reason = "no_cache"
                elif v.entry_in_cache is False:
                    v.reason = "entry_missing"
                    v.cache_empty = not cache.entries  # the listing after run A is empty: nothing written
                elif v.entry_in_cache and found_nothing(run_b):  # A wrote it, B looked and found nothing there
                    v.reason, v.detail = "entry_missing", LOOKED_ELSEWHERE
                elif v.entry_in_cache and (run_b.framework, run_b.platform) in CANNOT_DESERIALIZE:
                    v.reason = "not_loadable"
                    v.detail = CANNOT_DESERIALIZE[(run_b.framework, run_b.platform)]
                else:
                    v.reason = "unknown"
                if v.a_record is not rec and fingerprint(v.a_record) != fingerprint(rec):  # one key, two programs
                    v.differences = precision_differences(v.a_record, rec) or [
                        KeyDifference(SAME_KEY_PROGRAM, "HLO", v.a_record.ref, rec.ref)]
        elif compiled and unmatched_a:
            v.a = v.a_record = unmatched_a.pop(counterpart(rec, unmatched_a, fingerprint))
            if fingerprint(v.a_record) == fingerprint(rec):  # another hash, one program: what else it covers differs
                if (donation := donation_difference(v.a_record, rec)) is not None:  # the header is the program too
                    v.verdict, v.reason, v.cause = "miss_hlo_differs", "aliasing", donation
                    v.differences = donors_dropped(v.a_record, rec)
                else:
                    miss_key_differs(v, run_a, run_b, [], [])
            else:
                miss_hlo_differs(v, warnings, jax=False)
        elif not compiled:
            v.verdict = "hit"
        verdicts.append(v)
    return verdicts


PERSISTENT_COUNTERS = ("PersistentCacheHit", "PersistentCacheMiss", "PersistentCacheDeserializeFailure")
"""torch_xla's counters of a persistent-cache lookup: with a cache configured, every compilation counts one of them
(a hit, a miss, an entry it could not load; observed with torch_xla 2.9), and a metrics report leaves out the
counters that stayed 0."""


LOOKED_ELSEWHERE = "looked_elsewhere"
"""``Verdict.detail`` of an ``entry_missing`` whose entry run A wrote (the listing after run A holds it) while run B
counted misses and no failed load (:func:`found_nothing`): run B read another folder, or the entry went away."""


def found_nothing(run: Run) -> bool:
    """The run's counters (a metrics report, or the program's own prints of ``counter_value``) count persistent-cache
    misses and no failed load: torch_xla counts a graph whose entry it finds and cannot load as a
    ``PersistentCacheDeserializeFailure``, not a miss (observed with torch_xla 2.9 on the CPU: `runs_torch_identical`,
    `runs5_torch_matmul_precision`), so each miss looked its hash up in the run's folder and found no file."""
    facts = run.torch
    return bool(facts and facts.counter("PersistentCacheMiss")) and not facts.counter(
        "PersistentCacheDeserializeFailure") and not facts.deserialize_failures


def looked_nothing_up(run: Run) -> bool:
    """A metrics report of the run counts compilations (``UncachedCompile``) and no persistent-cache lookup at all:
    the run had no persistent cache (no ``xr.initialize_cache``, no ``XLA_PERSISTENT_CACHE_PATH``)."""
    facts = run.torch
    return bool(facts and facts.counter("UncachedCompile")) and not any(
        facts.counter(name) for name in PERSISTENT_COUNTERS)
