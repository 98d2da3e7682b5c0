"""The ``hlodiff cost`` terminal report: one row per graph, then loop-buffer copies, boundaries and growth."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from hlodiff.cost.carried_state import roles_state_only, state_only
from hlodiff.cost.donation import is_jax_own_module
from hlodiff.cost.model import GraphCost, RunCost
from hlodiff.explain.compile_cost import seconds_text
from hlodiff.render.cost_headline import render_headline
from hlodiff.render.fit import Column, FitTable
from hlodiff.render.terminal import Hanging
from hlodiff.render.units import human_bytes
from hlodiff.render.plural import counted, noun


def _b(n: int | None) -> str:
    return "?" if n is None else human_bytes(n)


def _compile_cell(g) -> str:
    """A cache hit, a program loaded from the persistent cache (with its load time), or its compile seconds."""
    if not g.compiled:
        return "hit"
    seconds = "?" if g.compile_seconds is None else f"{g.compile_seconds:.3f}"  # review 23 F9: "-" read as none
    return f"loaded {seconds}" if g.loaded else seconds


def render_cost(console: Console, run: RunCost) -> None:
    graphs = run.graphs
    loaded = sum(1 for g in graphs if g.loaded)
    compiled = sum(1 for g in graphs if g.compiled) - loaded
    head = f"[bold]{counted(len(graphs), 'graph')}[/], {compiled} compiled"
    if loaded:
        head += f", {loaded} loaded from the persistent cache"
    if run.compile_seconds is not None:
        head += f", {seconds_text(run.compile_seconds)} compiling ({escape(run.compile_seconds_source or '')})"
    if run.load_seconds is not None:
        head += f", {seconds_text(run.load_seconds)} loading"
    render_headline(console, run)
    console.print(head, highlight=False)
    table = FitTable(COST_COLUMNS)
    one_source = len({g.ref.rsplit("#", 1)[0] for g in graphs}) == 1
    if one_source and graphs:
        console.print(f"in {escape(graphs[0].ref.rsplit('#', 1)[0])}", highlight=False)
    for g in graphs:
        copies = _copies_cell(g)
        table.add_row(escape(_short(g.ref) if one_source else g.ref), escape(g.name), f"{g.instructions:,}",
                      f"{g.parameters.count} ({_b(g.parameters.bytes)})", f"{g.outputs.count} ({_b(g.outputs.bytes)})",
                      _aliased(g), _peak(g), copies,
                      _compile_cell(g))
    table.print(console)
    _aliasing_note(console, run)
    _eager_note(console, run)
    _sources(console, run)
    _loop_buffer_copies(console, run)
    _boundaries(console, run)
    _families(console, run)


_PEAK_MARK = {"xla": "xla", "torch_xla": "torch_xla", "estimate": "est."}
_PEAK_WORDS = {"xla": "XLA's memory-usage report", "torch_xla": "torch_xla's Post Compilation Analysis (PT_XLA_DEBUG)",
               "estimate": "hlodiff's estimate"}


def _plus_minus(n: int | None) -> str:
    return f" ±{human_bytes(n)}" if n else ""


def _peak(g: GraphCost) -> str:
    return f"{_b(g.peak_bytes)}{_plus_minus(g.peak_rounding_bytes)} ({_PEAK_MARK.get(g.peak_source, g.peak_source)})"


def _aliased(g: GraphCost) -> str:
    if g.aliased_bytes is None:
        return "?"
    return (_b(g.aliased_bytes) + _plus_minus(g.aliased_rounding_bytes)) if g.aliased_bytes else "-"


def _copies_cell(g: GraphCost) -> str:
    """``12: 194.2 KiB``; the copies XLA made for the in-place update marked (``12 aliasing: ...``, ``12: ... (8
    aliasing)``), as the note under the table says why (review 17, F6)."""
    if not g.copies:
        return "-"
    aliasing = sum(1 for c in g.copies if c.aliasing)
    figure = _b(g.copy_bytes_per_step())
    # review 21, F6: an operation JAX ran outside jit is no step: its copies are per call (the note says so)
    per = "/call" if is_jax_own_module(g.name) else ""
    if aliasing == len(g.copies):
        return f"{aliasing}{per} aliasing: {figure}"
    return f"{len(g.copies)}{per}: {figure}" + (f" ({aliasing} aliasing)" if aliasing else "")


def _eager_note(console: Console, run: RunCost) -> None:
    """What ``/call`` marks in the copies column: an eager op's copies each time it is called, not a step's."""
    if any(g.copies and is_jax_own_module(g.name) for g in run.graphs):
        console.print(Hanging(Text(
            "copies/step marked /call: an operation JAX ran outside jit (jax.random.normal, jnp.zeros_like at the top "
            "level) is no step of yours; its copies are counted each time it is called", style="dim"), 2),
            highlight=False)


def _aliasing_note(console: Console, run: RunCost) -> None:
    """Why copies beside "nothing to act on" are no fault: XLA made them to write the state back in place."""
    copies = {g.ref: [c for c in g.copies if c.aliasing] for g in run.graphs}
    copies = {ref: cs for ref, cs in copies.items() if cs}
    if not copies:
        return
    console.print(Hanging(Text(
        "copies/step marked aliasing: XLA's own copies for the outputs written back into their inputs' buffers "
        "(the aliased column: parameters and optimizer state updated in place); the old value is still read while "
        "the new one is made, so one of the two is copied. They are the in-place update's cost, not a copy the "
        "program makes: nothing to act on", style="dim"), 2), highlight=False)


def _sources(console: Console, run: RunCost) -> None:
    """Where the peak figures come from (XLA > torch_xla > estimate), and the figures no capture given holds."""
    counts: dict[str, int] = {}
    for g in run.graphs:
        if g.compiled:
            counts[g.peak_source] = counts.get(g.peak_source, 0) + 1
    if counts:
        order = list(_PEAK_WORDS)
        ranked = sorted(counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
        parts = [f"{_PEAK_WORDS.get(k, k)} for {n}" for k, n in ranked]
        console.print(f"peak memory: {escape(', '.join(parts))} compiled {noun(sum(counts.values()), 'graph')}",
                      highlight=False)
    unknown = {}
    for g in run.graphs:
        for u in g.unknowns:
            unknown.setdefault(u, []).append(g.ref)
    for u, refs in unknown.items():
        console.print(Hanging(Text(f"{u.figure.replace('_', ' ')} unknown (?) for {counted(len(refs), 'graph')}: "
                                   f"{u.reason}; given by {u.capture}"), 2),
                      highlight=False)
    untimed = sum(1 for g in run.graphs if g.compiled and g.compile_seconds is None)
    if untimed:  # review 23 F9: a blank compile time where the graph did compile read as "nothing to pay"
        console.print(Hanging(Text(f"compile s unknown (?) for {untimed} compiled graph{'s' if untimed != 1 else ''}: "
                                   "the capture holds no time per compilation (PT_XLA_DEBUG logs and XLA dumps carry "
                                   "none); given by `hlodiff record` (compile_times.tsv) or, JAX, by "
                                   "JAX_LOG_COMPILES=1"), 2), highlight=False)


COST_COLUMNS = [Column("graph", shrink_to=16), Column("module", shrink_to=12, drop=2), Column("instr", "right", drop=1),
                Column("params", "right", drop=4), Column("outputs", "right", drop=3),
                Column("aliased", "right", drop=5), Column("peak", "right"), Column("copies/step", "right"),
                Column("compile s", "right")]
"""``cost``'s columns; a module name is shortened from the left, never folded (``SyncTensorsGraph.2`` / ``58``
reads as two names). The instruction count goes first when the width is short, aliasing last of the droppable ones:
piped (120 columns) a step that donates nothing must still show ``-`` there (review 4, F7)."""


def _loop_buffer_copies(console: Console, run: RunCost) -> None:
    rows = [(g, c) for g in run.graphs if g.compiled for c in g.loop_buffer_copies]
    if not rows:
        return
    console.print("\n[bold]loop-buffer copies[/] (a loop-carried buffer updated in place, yet copied whole "
                  "every iteration)", highlight=False)
    for g, c in rows:
        where = f" at {escape(c.location.where)}" if c.location is not None else ""
        if c.reduced:
            console.print(Hanging(Text.from_markup(
                f"  {escape(g.ref)}: the stacked output {escape(c.shape)} of %{escape(c.loop)} ({_b(c.buffer_bytes)}) "
                f"holds every iteration's value and is only reduced after the loop{where}"), 4), highlight=False)
            continue
        per_step = _b(c.bytes_per_step) + " per step" if c.bytes_per_step is not None else "trip count unknown"
        console.print(Hanging(Text.from_markup(
            f"  {escape(g.ref)}: {c.count} whole cop{'y' if c.count == 1 else 'ies'} of {escape(c.shape)} per "
            f"iteration in %{escape(c.loop)}: {_b(c.bytes_per_iteration)} per iteration, {per_step}{where}"), 4),
            highlight=False)


def _boundaries(console: Console, run: RunCost) -> None:
    if not run.boundaries:
        return
    named = _b(sum(b.bytes for b in run.boundaries))
    # review 17 F6: "971.2 KiB named crossing (the total is not known)" was hard to parse
    crossing = f"{named} crosses them" if run.boundaries_exact else \
        f"{named} crosses them, counting the tensors the live-tensor reports name (the run's total may be more)"
    console.print(f"\n[bold]graph boundaries[/]: {len(run.boundaries)}; {crossing}", highlight=False)
    for u in run.unknowns:
        console.print(Hanging(Text(f"  {u.reason}; given by {u.capture}"), 4), highlight=False)
    labels = {g.ref: _phase_label(g) for g in run.graphs}
    for b, times in _runs_of_alike(run.boundaries):
        _boundary(console, b, times, labels)
    _pipeline(console, run)


def _phase_label(g: GraphCost) -> str | None:
    """What a graph is: a phase, or the whole training step (review 17 F6: every step graph was "(optimizer)")."""
    return "training step" if g.whole_step else g.phase


def _boundary_key(b) -> tuple:
    """What a reader compares between two boundaries: the programs, the tensors' shapes, roles and lines."""
    return (b.source_phase, b.target_phase, b.bytes,
            tuple((t.shape, t.role, t.user_line.short() if t.user_line else None) for t in b.tensors))


def _runs_of_alike(boundaries: list) -> list[tuple[list, int]]:
    """Consecutive boundaries that hand on the same tensors (a steady loop's step after step), each run once with
    its count: five identical 10-line blocks told as one, "x5" (review 17, F6)."""
    runs: list[tuple[list, int]] = []
    for b in boundaries:
        if runs and _boundary_key(runs[-1][0][-1]) == _boundary_key(b) and _next(runs[-1][0][-1], b):
            runs[-1][0].append(b)
        else:
            runs.append(([b], 1))
    return [(bs, len(bs)) for bs, _ in runs]


def _next(a, b) -> bool:
    """``b`` is the boundary after ``a`` in a loop: its source is ``a``'s target."""
    return a.target == b.source


def _boundary(console: Console, run_of: list, times: int, labels: dict) -> None:
    b, last = run_of[0], run_of[-1]
    same = b.source.rsplit("#", 1)[0] == last.target.rsplit("#", 1)[0]
    source, target = (_short(b.source), _short(last.target)) if same else (b.source, last.target)
    source_label, target_label = labels.get(b.source) or b.source_phase, labels.get(b.target) or b.target_phase
    if times > 1:
        head = f"{source} -> ... -> {target}"
        head += f" ({source_label} -> {target_label}, x{times})" if source_label and target_label else f" (x{times})"
        each = " each"
    else:
        head = f"{source} ({source_label}) -> {target} ({target_label})" if source_label and target_label \
            else f"{source} -> {target}"
        each = ""
    roles = ", ".join(f"{t.count} {role.replace('_', ' ')} {_b(t.bytes)}" for role, t in b.by_role().items()
                      if role != "unknown")
    state = STATE_NOTE if state_only(b) else ""  # review 15 F9: the weights and momentum are no problem
    console.print(Hanging(Text.from_markup(f"  {escape(head)}: {counted(len(b.tensors), 'tensor')}"
                                           f"{each}, {_b(b.bytes)}"
                                           + (f": {escape(roles)}" if roles else "") + state), 4),
                  highlight=False)
    for t in b.tensors[:SHOWN_TENSORS]:
        where = f" at {t.user_line.short()}" if t.user_line is not None else ""
        console.print(Hanging(Text(f"      id={t.id} {t.shape} {t.role or ''}{' (inferred)' if t.evidence == 'inferred' else ''}"
                                   f"{' ' + t.ir_op if t.ir_op else ''}{where}"
                                   + (" (the first step's ids)" if times > 1 and t is b.tensors[0] else "")), 8),
                      highlight=False)
    if len(b.tensors) > SHOWN_TENSORS:
        console.print(f"      and {len(b.tensors) - SHOWN_TENSORS} more (--json lists every one)", highlight=False)


STATE_NOTE = " (the model's state, carried to the next step: expected)"
"""Said of a boundary or a step whose held tensors are all parameters and optimizer state
(:mod:`hlodiff.cost.carried_state`)."""

SHOWN_TENSORS = 8
"""Tensors listed per boundary in the terminal (a layer stack hands hundreds of gradients to the optimizer)."""


def _pipeline(console: Console, run: RunCost) -> None:
    """Per step: bytes held across boundaries by role (each tensor once); growth between runs."""
    if not run.pipeline.runs:
        return
    runs = run.pipeline.runs
    labels = {g.ref: _phase_label(g) for g in run.graphs}
    console.print("\n[bold]held across graph boundaries, per step[/] (each tensor once)", highlight=False)
    for r in runs:
        quiet = [s for s in r.steps if s.reported == 0]
        for s in r.steps:
            if s.reported == 0:  # after the run repeated itself: told once, below
                continue
            phases = _step_phases(s, labels)
            roles = ", ".join(f"{role.replace('_', ' ')} {_b(t.bytes)}" for role, t in s.roles.items())
            note = "" if s.complete else f" (only {s.reported} of {len(s.graphs)} graphs recorded: at least)"
            state = STATE_NOTE if roles_state_only(s.roles) else ""
            console.print(Hanging(Text(f"  {r.source} step {s.step} ({counted(len(s.graphs), 'graph')}: {phases}): "
                                       f"{_b(s.bytes)} in {s.tensors} tensors{note}" + (f": {roles}" if roles else "")
                                       + state), 4), highlight=False)
        if quiet:
            which = ("step " if len(quiet) == 1 else "steps ") + _spans([s.step for s in quiet])
            console.print(Hanging(Text(f"  {r.source} {which} ({sum(len(s.graphs) for s in quiet)} graphs): no report "
                                       "before them (the run had repeated itself: they repeat the steps above; "
                                       "HLODIFF_LIVE_TENSORS=every-sync, docs/commands.md, records every graph)",
                                       style="dim"), 4),
                          highlight=False)
    for g in run.pipeline.single_graph:
        held = _b(g["held_bytes"]) + ("" if g["held_exact"] else " named (at least)")
        peak = (f"; its largest graph's peak {_b(g['split_peak_bytes'])} ({g['split_peak_source']}"
                f"{_plus_minus(g['split_peak_rounding_bytes'])})" if g["split_peak_bytes"] is not None else "")
        console.print(Hanging(Text(
            f"  {g['split']} step {g['split_step']} ({g['split_graphs']} graphs): {held} held across boundaries"
            f"{peak}; beside it the single graph {g['single_graph']}: peak {_b(g['single_peak_bytes'])} "
            f"({g['single_peak_source']}{_plus_minus(g['single_peak_rounding_bytes'])})"), 4), highlight=False)
    for g in run.pipeline.growth:
        roles = ", ".join(f"{role.replace('_', ' ')} {_b(a)} -> {_b(b)}" for role, (a, b) in g["roles"].items())
        console.print(Hanging(Text(f"  {g['from']} -> {g['to']}: forward graphs per step {g['forward_graphs'][0]} -> "
                                   f"{g['forward_graphs'][1]}, held {_b(g['bytes'][0])} -> {_b(g['bytes'][1])}"
                                   + (f" (x{g['ratio']})" if g["ratio"] else "") + f": {roles}"), 4), highlight=False)


def _step_phases(s, labels: dict) -> str:
    """``1 training step``, ``1 forward, 1 backward, 1 optimizer``: what a step's graphs are."""
    counts: dict[str, int] = {}
    for ref in s.graphs:
        label = labels.get(ref)
        if label is not None:
            counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{n} {p}" for p, n in counts.items()) if counts else \
        ", ".join(f"{n} {p}" for p, n in s.phases.items())


def _spans(numbers: list[int]) -> str:
    """``2-4, 6-9`` for [2, 3, 4, 6, 7, 8, 9]: a step told above is not inside a span said to have no report."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _families(console: Console, run: RunCost) -> None:
    if len(run.families) < 2 and not run.boundaries:
        return
    several = len({f.source for f in run.families}) > 1
    table = FitTable(([Column("dump", shrink_to=16)] if several else []) + FAMILY_COLUMNS)
    for f in run.families:
        cells = [escape(f.source)] if several else []
        table.add_row(*cells, escape(f.label), str(f.graphs), str(f.compiled), f"{f.instructions:,}",
                      _b(f.parameter_bytes), _b(f.output_bytes))
    console.print()
    table.print(console)


FAMILY_COLUMNS = [Column("where", wrap=True, shrink_to=20), Column("graphs", "right"), Column("compiled", "right"),
                  Column("instr", "right", drop=2), Column("param bytes", "right", wrap=True, drop=1),
                  Column("output bytes", "right", wrap=True, drop=1)]


def render_cost_delta(console: Console, cost: dict) -> None:
    """Under ``compare``: what the difference costs, when it costs anything."""
    delta = cost["delta"]
    figures = [(k, v) for k, v in delta.items() if v and k != "compile_seconds"]
    if not figures and not cost["changes"]:
        return
    parts = [f"{k.replace('_', ' ')} {'+' if v > 0 else '-'}{human_bytes(abs(v))}{_delta_note(cost, k)}"
             for k, v in figures]
    console.print(f"[bold]cost[/] (right - left): {escape('; '.join(parts)) or 'no byte change'}", highlight=False)
    for change in cost["changes"]:
        console.print(Hanging(Text(f"  {change}"), 4), highlight=False)
    for u in cost.get("unknowns") or ():
        console.print(Hanging(Text(f"  {u['figure'].replace('_', ' ')} unknown: {u['reason']}; given by "
                                   f"{u['capture']}"), 4), highlight=False)


def _delta_note(cost: dict, key: str) -> str:
    """`` (torch_xla ±2.1 KiB)`` after a figure that is not XLA's own exact count."""
    kind = key.removesuffix("_bytes")
    sources = cost.get(f"{kind}_source") or {}
    if kind not in ("peak", "aliased") or set(sources.values()) <= {"xla", "hlo"}:
        return ""
    rounding = sum((cost.get(side) or {}).get(f"{kind}_rounding_bytes") or 0 for side in ("left", "right"))
    names = "/".join(dict.fromkeys(_PEAK_MARK.get(v, v) or "?" for v in sources.values()))
    return f" ({names}{_plus_minus(rounding)})"


def _short(ref: str) -> str:
    return "#" + ref.rsplit("#", 1)[-1]
