"""The words of a bucket plan (``plan`` on a cause, :mod:`hlodiff.explain.buckets`), for the terminal and HTML."""

from __future__ import annotations

from hlodiff.render.plural import counted


def _pct(fraction: float) -> str:
    return f"{fraction * 100:.0f} %" if fraction >= 0.01 or fraction == 0 else f"{fraction * 100:.1f} %"


def _sizes(plan: dict) -> tuple[list[int], int]:
    values = plan.get("values") or []
    return [v["size"] for v in values], sum(v["executions"] for v in values)


def plan_text(plan: dict) -> str:
    """One line: what the run saw and what to pad to, beside powers of two."""
    sizes, runs = _sizes(plan)
    what = plan.get("dimension") or "a size"
    together = plan.get("together") or []
    if together:  # the same size in other inputs: name them, the cause above may name one of those
        what += f" (and {', '.join(together[:2])}{', ...' if len(together) > 2 else ''}, always the same)"
    executions = (plan.get("cost_model") or {}).get("counts_from") == "executions"
    unit = "executions" if executions else "compilations (cache hits not captured)"
    seen = f"{what} took {len(sizes)} values ({min(sizes)}–{max(sizes)}) over {runs} {unit}"
    buckets = ", ".join(str(b) for b in plan.get("buckets") or [])
    now, planned = plan.get("graphs_now"), plan.get("graphs_planned")
    kind = plan.get("kind")
    if kind == "preallocate":
        return (f"plan: {seen}, a new larger one every time: preallocate the largest size seen ({buckets}) and "
                f"mask → {counted(planned, 'graph')} instead of {now}")
    if kind == "expected":
        return f"plan: {seen}: already on {now} buckets ({buckets}): one graph per bucket is expected"
    p2 = plan.get("powers_of_two") or {}
    seconds = (plan.get("cost_model") or {}).get("compile_seconds_per_graph")
    saves = f"; saves {(now - planned) * seconds:.2f} s of compiling at {seconds:.2f} s per graph" \
        if seconds and now and planned is not None and now > planned else ""
    if kind == "buckets" and executions and _two_sizes(sizes, plan):
        return _two_sizes_text(plan, sizes, runs, saves)
    # one bucket: "pad up to 4"; several: each size to the next bucket, which "pad up to 7, 12" did not say (review 6)
    several = len(plan.get("buckets") or []) > 1
    target = f"pad each size up to the next of {buckets}" if several else f"pad up to {buckets}"
    graphs = f"{target} → {counted(planned, 'graph')} instead of {now}"
    p2_graphs = f"powers of two: {counted(p2.get('graphs'), 'graph')}"
    one = _one_size(plan, sizes, executions) if several else ""
    if not executions:
        # review 13 F7: each size counted once per compilation is no share of the work (T1's dump: "60 %" for
        # 2 compilations, 12 % over the run's 14 executions): the share needs the executions
        return (f"plan: {seen}: {graphs}; {p2_graphs}{one}{saves} (the padded share of the work needs the "
                "executions: PT_XLA_DEBUG_LEVEL=2 beside the dump, or `hlodiff record`, counts them)")
    return (f"plan: {seen}: {graphs}, {_pct(plan.get('padded_fraction') or 0.0)} padded work; {p2_graphs}, "
            f"{_pct(p2.get('padded_fraction') or 0.0)}{one}{saves}")


def _one_size(plan: dict, sizes: list[int], executions: bool) -> str:
    """Beside a plan of several buckets, the one size every batch pads to (the largest seen): one graph for this
    size, the most padding (review 16, F4: three small sizes, and the plan never gave "pad all to 12")."""
    curve = (plan.get("cost_model") or {}).get("curve") or []
    one = next((c["padded_fraction"] for c in curve if c.get("buckets") == 1), None)
    share = f", {_pct(one)}" if executions and one is not None else ""
    return f"; one size ({max(sizes)}): 1 graph for it{share}"


def _two_sizes(sizes: list[int], plan: dict) -> bool:
    """Two sizes padded to the larger: one graph, and powers of two would make no fewer graphs than now."""
    p2 = plan.get("powers_of_two") or {}
    return len(sizes) == 2 and plan.get("buckets") == [max(sizes)] and (p2.get("graphs") or 0) >= (
        plan.get("graphs_now") or 0)


def _two_sizes_text(plan: dict, sizes: list[int], runs: int, saves: str) -> str:
    """The plan of a two-size case (a short last batch) in a few words: the fix line above it already names the
    fix; the parameters that carry the size and powers of two (no fewer graphs) only made it dense (review 17, F8:
    "took 2 values (2–4) ... pad up to 4 → 1 graph instead of 2, 20 % padded work; powers of two: 2 graphs, 0 %").
    Counted from compilations alone, the plan keeps its long form: it says what would count the executions."""
    big, small = max(sizes), min(sizes)
    return (f"plan: sizes {big} and {small} over {runs} executions: pad {small} up to {big} → 1 graph instead of 2, "
            f"{_pct(plan.get('padded_fraction') or 0.0)} padded work{saves}")
