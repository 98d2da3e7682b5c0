"""How much compile time a run's recompilations cost, from the logs that record compile times.

JAX's ``jax_log_compiles`` gives each compilation's seconds, so the recompilations' share is exact. torch_xla's
metrics report gives only the ``CompileTime`` total and its sample count, so the summary says the total and how
many of the compilations were recompilations, without pretending to split it.
"""

from __future__ import annotations

from hlodiff.dumps.evidence import Run
from hlodiff.explain.inventory import GraphSummary


def seconds_text(seconds: float) -> str:
    """``1.23 s``, or ``12 ms`` below a tenth of a second (small JAX functions compile in milliseconds)."""
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    if seconds <= 0:
        return "0 s"
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.001 else f"{seconds * 1e3:.2f} ms"


def compile_time_note(graphs: list[GraphSummary], recompiled: list[GraphSummary], run: Run,
                      loaded: set[str] = frozenset()) -> str | None:
    """One clause for the run summary, or None when no log of the run has compile times. ``loaded``: refs of
    programs loaded from a persistent cache (:mod:`hlodiff.explain.cache_loads`): JAX logs a load's seconds as
    a compilation's, so they are told apart, never added to the compile time."""
    times = run.compile_times()
    if times is None:
        return None
    if times.compilations or times.by_hash:
        records = [g.record for g in graphs]
        seconds = run.compile_seconds(records, [g.compiled for g in graphs])
        if seconds:
            position = {g.ref: i for i, g in enumerate(graphs)}
            if sum(seconds.values()) <= 0:  # times logged as 0.0 (rounded, or normalized): nothing to say
                return None
            loading = sum(seconds.get(position[ref], 0.0) for ref in loaded if ref in position)
            total = sum(s for i, s in seconds.items() if graphs[i].ref not in loaded)
            recompiled = [g for g in recompiled if g.ref not in loaded]
            again = sum(seconds.get(position[g.ref], 0.0) for g in recompiled)
            n = len(recompiled)
            source = "jax_log_compiles" if times.compilations else "torch_xla CompileTime"
            unknown = [g for g in recompiled if position[g.ref] not in seconds]
            if unknown and not loaded:
                # review 8, T1: compile_times.tsv had no graph hash for 4 of 5 compilations; "recompilations cost
                # 0 s of 0.14 s" read as a measured zero. Say what is known, and that the rest is not.
                compiled = sum(1 for g in graphs if g.compiled)
                return (f"compile times known for {len(seconds)} of {compiled} compilations "
                        f"({seconds_text(total)}, {source}), not for {len(unknown)} of the "
                        f"{n} recompilation{'s' if n != 1 else ''}")
            load = (f"; loading {len(loaded)} program{'s' if len(loaded) != 1 else ''} from the persistent cache "
                    f"took {seconds_text(loading)}") if loaded else ""
            if n == 0 and loaded and total <= 0:
                return f"nothing compiled{load} ({source})"
            if n == 0:
                return f"compiling took {seconds_text(total)} ({source}){load}"
            return (f"recompilation{'s' if n != 1 else ''} cost {seconds_text(again)} of {seconds_text(total)} "
                    f"compiling ({source}){load}")
    if times.total_seconds is not None:
        count = times.total_count or 0
        n = len(recompiled)
        return (f"compiling took {seconds_text(times.total_seconds)} for {count} compilation{'s' if count != 1 else ''} "
                f"(torch_xla CompileTime metric, no per-graph times), {n} of them recompilation{'s' if n != 1 else ''}")
    return None
