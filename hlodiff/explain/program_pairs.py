"""One program of run A beside one of run B: which of A's programs a new one of B stands for, whether the two are
one program after normalization, and, when they are not, the graph diff's leading cause with its line and fix.

:mod:`hlodiff.explain.across_runs` gives each compilation of B its verdict; these are the program-level facts it
asks for, the same whether the runs are JAX's or torch_xla's.
"""

from __future__ import annotations

import dataclasses

from hlodiff.diff.model import Cause
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.errors import InputWarning
from hlodiff.hlo.model import SourceFrame, user_frame


def first_sightings(records: list[GraphRecord]) -> list[GraphRecord]:
    """Each program of a run once, the first time it ran (by graph hash; a record without one is its own)."""
    seen: set = set()
    out = []
    for r in records:
        key = r.graph_hash or r.index
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def program_frame(rec: GraphRecord) -> SourceFrame | None:
    """The first user line the program's instructions name (their metadata's stack), in entry order."""
    from hlodiff.graph import canonicalize

    module = rec.module()
    canonical = canonicalize(module)
    for inst in module.entry.instructions:
        frame = user_frame(canonical.frames(inst))
        if frame is not None:
            return frame
    return user_frame(rec.frames)


def counterpart(rec: GraphRecord, candidates: list[GraphRecord], fingerprint) -> int:
    """Which of A's graphs not seen in B a new graph of B stands for: the first that is the same program (the hash
    covers more than the HLO: XLA_FLAGS), else the first synced from the same user line (the same graph family),
    else the first left."""
    for i, candidate in enumerate(candidates):
        if fingerprint(candidate) == fingerprint(rec):
            return i
    where = _sync_line(rec)
    for i, candidate in enumerate(candidates):
        if where is not None and _sync_line(candidate) == where:
            return i
    return 0


def _sync_line(rec: GraphRecord) -> tuple[str, int | None] | None:
    """The user line that synced the graph (the family it belongs to), as (file, line)."""
    frame = user_frame(rec.frames)
    return None if frame is None else (frame.file, frame.line)


def same_program(a: GraphRecord | None, b: GraphRecord | None) -> bool | None:
    """Whether the two modules are one program after normalization; None when one is not dumped."""
    if a is None or b is None:
        return None
    from hlodiff.graph import canonicalize

    return canonicalize(a.module()).fingerprint == canonicalize(b.module()).fingerprint


def graph_cause(a: GraphRecord | None, b: GraphRecord | None, warnings: list[InputWarning]) -> Cause | None:
    """The leading cause of the graph diff between A's program and B's, with its line and fix, from the same
    analysis ``explain-recompile`` runs (B's program is put in A's family, as the next compilation of it)."""
    if a is None or b is None:
        return None
    from hlodiff.explain.recompile import explain_records

    # One family needs one source; the module number keeps B's program a compilation of its own (XLA numbers
    # each run's modules from 0, and a dump folder's compilations are told apart by their numbers).
    number = None if b.module_number is None else 1_000_000 + b.module_number
    moved = dataclasses.replace(b, source=a.source, index=a.index + 1, module_number=number)
    explanation = explain_records([a, moved], warnings=warnings)
    for r in explanation.recompilations:
        if r.causes:
            return _count_consequence(r.causes)
    return _pair_diff_cause(a, b)


def _count_consequence(causes: list[Cause]) -> Cause:
    """The leading cause, or, when it is the device count (a mesh resized: a sharding with reason
    ``device_count``), the first one told within it: compare-runs names the count from the two headers itself
    (:func:`hlodiff.explain.program_differences.device_count_differences`), and the sharding that follows from it
    keeps the line of the call."""
    lead = causes[0]
    if lead.reason == "device_count":
        for c in causes[1:]:
            if c.kind == "sharding" and c.locations and c.reason != "device_count":
                return c
    return lead


def _pair_diff_cause(a: GraphRecord, b: GraphRecord) -> Cause | None:
    """The leading cause of the two programs' diff as ``compare`` tells two runs' graphs, when the run analysis
    put them in two families (new-user review 22, F3: run B's script was a copy under another file name, so its
    function was "another function of this name" and no recompilation was read, though the HLO differs and
    ``compare`` on the same pair names the slice at the user's line). compare-runs already decided the two stand
    for one program; its HLO difference is the answer."""
    from hlodiff.diff import diff_canonical
    from hlodiff.diff.fixes import FixContext, apply_fixes
    from hlodiff.hlo.producer import producer_of
    from hlodiff.graph import canonicalize

    lcm, rcm = canonicalize(a.module()), canonicalize(b.module())
    causes = diff_canonical(lcm, rcm).causes
    for cause in causes:  # decided knowing the graphs are two runs', not two steps of one (as compare does)
        if cause.fix_rule is not None and not cause.fix_is_final:
            cause.fix = cause.fix_rule = None
    apply_fixes(causes, FixContext(producer=producer_of(rcm.module), two_runs=True))
    return causes[0] if causes else None
