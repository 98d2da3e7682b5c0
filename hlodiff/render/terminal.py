"""Terminal reports with rich: verdict first, then causes with the user's source lines, details on request.

Every function takes a :class:`rich.console.Console` so tests and the CLI choose width and colour; output is a
pure function of the inputs (no timestamps, no dict-order surprises).
"""

from __future__ import annotations

import sys
from contextvars import ContextVar

from typing import Iterable

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from hlodiff.diff.fix_stance import NOTHING_TO_FIX
from hlodiff.diff.model import Cause, ModuleDiff
from hlodiff.errors import InputWarning, printable
from hlodiff.render.fit import Column, FitTable
from hlodiff.render.hanging import Hanging
from hlodiff.render.units import human_bytes
from hlodiff.hlo.model import SourceFrame

KIND_STYLE = {
    "reordered": "cyan", "shape": "magenta", "dtype": "magenta", "layout": "blue", "constant": "yellow",
    "attribute": "yellow", "inputs": "green", "outputs": "green", "ops": "red", "partial": "bright_red",
    "sharding": "blue", "aliasing": "cyan", "compile_options": "cyan", "weak_type": "magenta",
    "static_argument": "yellow", "cache_key": "cyan", "mode": "cyan",
}


class SafeConsole(Console):
    """A console that escapes control characters in what it prints (``\\x1b[31m`` shows as text).

    File names, module names and ``source_file`` metadata come from dumps; an ANSI sequence in one of them must not
    recolour, retitle or clear the user's terminal. Rich's own styling is added after this, so colours still work.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(printable(seg.text, keep_lines=True), seg.style, seg.control)
            for seg in buffer)

    def on_broken_pipe(self) -> None:
        """The reader closed the pipe (``| head``): stop printing, quietly. Rich's default exits with status 1, which
        a script would read as "something recompiled"; the command's own status must stand."""
        from hlodiff._runtime import silence_stdout

        self.quiet = True
        if _is_stdout(self.file):
            silence_stdout()


def _is_stdout(stream) -> bool:
    try:
        return stream.fileno() == sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return False


def frame_text(frame: SourceFrame | None) -> str:
    if frame is None:
        return "-"
    return f"{frame.where} ({frame.function})" if frame.function else frame.where


def render_warnings(console: Console, warnings: Iterable[InputWarning]) -> None:
    from hlodiff.errors import unique

    for warning in unique(warnings):
        console.print(Text(str(warning), style="yellow"), highlight=False)


# -- inspect -------------------------------------------------------------------------------------------------------


def render_inventory(console: Console, summaries) -> None:
    """The ``hlodiff inspect`` table: one row a graph, compilations marked (summarised past a few thousand)."""
    from hlodiff.render.inventory_rows import Elided, table_rows

    loaded = sum(1 for s in summaries if s.loaded)
    compiled = sum(1 for s in summaries if s.compiled) - loaded
    sources = sorted({s.record.source for s in summaries})
    one_source = len(sources) == 1
    where = f" in {escape(sources[0])}" if one_source else ""
    also = f", {loaded:,} loaded from the persistent cache" if loaded else ""
    console.print(f"[bold]{len(summaries):,} graph{'s' if len(summaries) != 1 else ''}[/]{where}, "
                  f"{compiled:,} compilation{'s' if compiled != 1 else ''}{also}", highlight=False)
    rows, summarised = table_rows(summaries)
    if summarised:
        console.print(Text("(summarised: runs of cache hits are one row; --json lists every graph)", style="dim"),
                      highlight=False)
    table = FitTable(INVENTORY_COLUMNS)
    for row in rows:
        if isinstance(row, Elided):
            table.add_row("...", "", "", f"{row.rows:,} rows ({row.graphs:,} graphs) not shown", "", "", "", "")
            continue
        s = row.first
        key = s.record.graph_hash or s.fingerprint
        ref = _short_ref(s.ref) if one_source else s.ref
        if row.count > 1:
            ref += f"-{_short_ref(row.last.ref)[1:]}"
        first = escape(_short_ref(s.first_ref))
        table.add_row(
            escape(ref),
            escape(s.name),
            key[:12],
            ("loaded" if s.loaded else "[green]yes[/]") if s.compiled else (f"{row.count:,} hits of {first}" if row.count > 1 else f"hit of {first}"),
            f"{s.instructions:,}",
            f"{s.parameters} ({human_bytes(s.parameter_bytes)})",
            f"{s.outputs} ({human_bytes(s.output_bytes)})",
            escape(_short_frame(s.call_site or s.trigger)),  # the user's call, not the bridge's line (review 13 F8)
        )
    table.print(console)


INVENTORY_COLUMNS = [Column("graph", shrink_to=16), Column("module", shrink_to=10, drop=4), Column("hash", drop=1),
                     Column("compiled", wrap=True), Column("instr", "right", drop=5),
                     Column("inputs", "right", drop=2), Column("outputs", "right", drop=3),
                     Column("trigger", shrink_to=14)]
"""``inspect``'s columns; at 80 columns the hash goes first (``--json`` and ``fingerprint`` print it whole)."""


def _short_frame(frame: SourceFrame | None) -> str:
    if frame is None:
        return "-"
    return f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}" if frame.line is not None else frame.file


def _short_ref(ref: str) -> str:
    return "#" + ref.rsplit("#", 1)[-1]


# -- compare -------------------------------------------------------------------------------------------------------


def render_diff(console: Console, diff: ModuleDiff, left_ref: str, right_ref: str, *, verbose: bool = False) -> None:
    """Verdict, causes with locations, what normalization ignored; with ``verbose`` every change and mapping."""
    console.print(f"[bold]{escape(left_ref)}[/] -> [bold]{escape(right_ref)}[/]", highlight=False)
    if diff.equal and diff.causes:
        console.print("[yellow]same computation after normalization; the modules differ outside it[/]",
                      highlight=False)
    elif diff.equal:
        console.print("[green]equal after normalization[/]", highlight=False)
    else:
        n = len(diff.causes)
        console.print(f"[red]{n} difference{'s' if n != 1 else ''}[/]", highlight=False)
    render_causes(console, diff.causes)
    if diff.ignored:
        console.print(Text("ignored: " + "; ".join(i.summary for i in diff.ignored), style="dim"), highlight=False)
    if verbose:
        _render_details(console, diff)


_HEADLINE_FIX: ContextVar[str | None] = ContextVar("headline_fix", default=None)
_LOADED: ContextVar[frozenset] = ContextVar("loaded", default=frozenset())
"""Refs of the programs the run loaded from a persistent cache: told as loaded, never as compiled (review 15, F6)."""
"""The fix the run's headline already printed: a block below whose fix reads the same says so in three words
(review 13 F6: T2's ~80-word warm-up fix printed twice, once under the headline and once in its graph's block)."""


def render_causes(console: Console, causes: list[Cause], indent: str = "  ",
                  notes: dict[str, list] | None = None, fixes: bool = True) -> None:
    """``notes`` maps a cause kind to lines printed under that cause (live tensors under ``outputs``); without
    ``fixes`` the fix lines are left out (a consequence's fix is its root's)."""
    for cause in causes:
        style = KIND_STYLE.get(cause.kind, "")
        line = Text(indent)
        line.append(f"{cause.kind:<9} ", style=f"bold {style}")
        line.append(cause.summary)
        under = len(indent) + 10
        console.print(Hanging(line, under), highlight=False)
        for frame in cause.locations:
            console.print(Hanging(Text(f"{indent}{'':<10}at {frame_text(frame)}", style="bold"), under + 3),
                          highlight=False)
            if stack := cause.callers.get(frame):  # the calls that led there (a jitted function's call site)
                more = f" (+{len(stack) - 3} more)" if len(stack) > 3 else ""
                calls = " <- ".join(f"{f.where.rsplit('/', 1)[-1]} ({f.function})" for f in stack[:3])
                console.print(Hanging(Text(f"{indent}{'':<12}called from {calls}{more}"), under + 14),
                              highlight=False)
        if not cause.locations and cause.library_locations:
            for frame in cause.library_locations:
                console.print(Hanging(Text(f"{indent}{'':<10}in library code {frame_text(frame)}", style="dim"),
                                      under + 16), highlight=False)
        for note in (notes or {}).pop(cause.kind, ()):
            console.print(note, highlight=False)
        if cause.hint:
            console.print(Hanging(Text(f"{indent}{'':<10}line unknown: {cause.hint}", style="yellow"), under + 14),
                          highlight=False)
        if cause.fix and fixes:
            words = "the same as above" if cause.fix == _HEADLINE_FIX.get() else cause.fix
            console.print(Hanging(Text(f"{indent}{'':<10}fix: {words}", style="green"), under + 5),
                          highlight=False)
        if getattr(cause, "plan", None) is not None:
            from hlodiff.render.plan import plan_text

            console.print(Hanging(Text(f"{indent}{'':<10}{plan_text(cause.plan.to_json())}", style="green"),
                                  under + 6), highlight=False)


def _render_details(console: Console, diff: ModuleDiff) -> None:
    stats = diff.stats
    console.print(Text(
        f"instructions: {stats.get('left_instructions', 0):,} -> {stats.get('right_instructions', 0):,}; "
        f"matched {stats.get('matched', 0):,} ({stats.get('changed', 0):,} changed), "
        f"only left {stats.get('only_left', 0):,}, only right {stats.get('only_right', 0):,}"), highlight=False)
    moved = [(a, b) for a, b in diff.parameter_mapping if a != b]
    if moved:
        console.print(Text("parameters: " + ", ".join(f"left p{a} = right p{b}" for a, b in moved)), highlight=False)
    moved_out = [(a, b) for a, b in diff.output_mapping if a != b]
    if moved_out:
        console.print(Text("outputs: " + ", ".join(f"left {a} = right {b}" for a, b in moved_out)), highlight=False)
    for region in diff.regions:
        ops = ", ".join(f"{n} {op}" if n > 1 else op for op, n in region.opcodes.items())
        where = "; at " + ", ".join(f.where for f in region.locations) if region.locations else ""
        console.print(Text(f"region in %{region.computation}: {region.size} instructions ({ops}); "
                           f"shapes {', '.join(region.shapes)}; "
                           f"{'origin of ' + ', '.join(region.kinds) if region.kinds else 'consequences only'}{where}"),
                      highlight=False)
    if not diff.changes:
        return
    table = FitTable([Column("status", wrap=True), Column("left", wrap=True, shrink_to=16),
                      Column("right", wrap=True, shrink_to=16), Column("what", wrap=True, shrink_to=16)],
                     title="changes")
    for change in diff.changes:
        left = f"{change.left.opcode} %{change.left.name} {change.left.shape}" if change.left else ""
        right = f"{change.right.opcode} %{change.right.name} {change.right.shape}" if change.right else ""
        what = "; ".join(_change_detail(change, kind) for kind in change.kinds)
        table.add_row(change.side.replace("_", " "), escape(left), escape(right), escape(what))
    table.print(console)


def _change_detail(change, kind: str) -> str:
    if kind not in change.details:
        return kind
    before, after = change.details[kind]
    return f"{kind}: {before} -> {after}"


# -- explain-recompile ---------------------------------------------------------------------------------------------


def render_explanation(console: Console, explanation, *, verbose: bool = False) -> None:
    """Run summary first, then one block per recompilation: what it was compared with, causes, live tensors."""
    console.print(Text(explanation.summary, style="bold"), highlight=False)
    headline = getattr(explanation, "headline", None)
    if getattr(explanation, "dynamo", None) is not None:  # issue 31: Dynamo's guard leads, its fix with it
        from hlodiff.render.dynamo import render_dynamo

        render_dynamo(console, explanation.dynamo)
        headline = explanation.xla_headline
    if headline is not None and headline.causes and headline.causes[0].fix:
        console.print(Hanging(Text(f"fix: {headline.causes[0].fix}", style="green"), 5), highlight=False)
        from hlodiff.explain.headline_also import also_causes

        for other in also_causes(headline):  # review 14 F2: a cause that alone compiles again, with its fix
            where = other.locations[0] if other.locations else None
            at = f" at {where.file.rsplit('/', 1)[-1]}:{where.line}" if where is not None else ""
            console.print(Hanging(Text(f"also: {other.summary}{at}, which alone compiles again; fix: {other.fix}",
                                       style="green"), 6), highlight=False)
        if getattr(headline.causes[0], "plan", None) is not None:
            from hlodiff.render.plan import plan_text

            console.print(Hanging(Text(plan_text(headline.causes[0].plan.to_json()), style="green"), 6),
                          highlight=False)
    from hlodiff.render.story import story_patterns
    from hlodiff.render.story_view import render_stories

    patterns = story_patterns(explanation)
    if len(patterns) > 1:
        for pattern in patterns:
            console.print(Hanging(Text(f"  {pattern}"), 4), highlight=False)
    told = headline.causes[0].fix if headline is not None and headline.causes else None
    token = _HEADLINE_FIX.set(told)
    loaded = _LOADED.set(frozenset(getattr(explanation, "loaded", ()) or ()))
    try:
        render_stories(console, explanation, render_recompilation, verbose=verbose)
    finally:
        _HEADLINE_FIX.reset(token)
        _LOADED.reset(loaded)
    for hint in explanation.hints:
        console.print()
        console.print(Hanging(Text(f"hint: {hint}", style="yellow"), 6), highlight=False)


def render_recompilation(console: Console, r, *, verbose: bool = False) -> None:
    """One recompilation in full: what it was compared with, its causes as a graph (roots first), live tensors."""
    from hlodiff.render.story_view import alike_text, render_graph_causes

    closest = _short_ref(r.closest.ref) if r.closest else "-"
    head = Text(f"{r.graph.ref}", style="bold")
    # an eager op outside jit compiles once per shape: the headline calls these "not steps" (review 4, F8)
    from hlodiff.explain.run_summary import first_rest_title

    verb = "compiled for another shape" if r.causes and all(c.fix_rule == "eager_op" for c in r.causes) \
        else first_rest_title(r) or "recompiled"
    if r.graph.ref in _LOADED.get():  # review 15 F6: JAX logged a persistent-cache hit: nothing compiled here
        verb = "loaded from the persistent cache" + (
            " for another shape" if verb == "compiled for another shape" else "") + ", not compiled in this run"
    unrelated_eager = not verbose and _unrelated_eager_op(r)
    head.append(f" {verb} ({r.family.label})" + ("" if unrelated_eager else f"; closest earlier graph {closest}"),
                style="")
    if r.diff is not None and not unrelated_eager:
        head.append(f", {alike_text(r.diff.similarity, r.diff.equal, [c.kind for c in r.causes])}", style="dim")
    if r.causes and r.causes[0].fix_stance in NOTHING_TO_FIX:  # review 5 F6: says so before its cause does
        head.append("; expected", style="")
    console.print(head, highlight=False)
    kinds = [c.kind for c in r.causes]
    under = "outputs" if "outputs" in kinds or "reordered" not in kinds else "reordered"
    notes = {under: [_tensor_note(note) for note in r.tensors]}
    hidden = _eager_rest(r) if not verbose else []
    if not verbose and _unrelated_bridge_graph(r):
        # review 8 F11: the bridge's sync of a call's inputs compared with the unrelated graph that made
        # torch.randn (2 % alike) listed 15 lines of false differences under a Dynamo story already told
        alike = alike_text(r.diff.similarity, r.diff.equal)
        console.print(Hanging(Text(
            f"  {'unlike':<10}this graph shares almost nothing with {closest} ({alike}), so their differences need "
            "not be a change of one program; Dynamo's recompilation above says what changed (-v lists the "
            "differences)"), 14), highlight=False)
        if r.causes[0].fix:
            console.print(Hanging(Text(f"  {'':<10}fix: {r.causes[0].fix}", style="green"), 17), highlight=False)
    elif not verbose and _bridge_own_graph(r):
        # review 16 F1: four 12-line blocks of the bridge's own graphs (a forward against the input sync, 7 % alike,
        # told "dtype at your torch.randn line") under a report whose answer was "nothing unexpected"
        alike = alike_text(r.diff.similarity, r.diff.equal) if r.diff is not None else "not compared"
        console.print(Hanging(Text(
            f"  {'bridge':<10}one of the graphs torch_xla's Dynamo bridge compiles on its own (Dynamo's first graph, "
            f"its backward, the sync of the call's inputs), each once: expected; its differences from {closest} "
            f"({alike}) are no change of yours (-v lists them)", style="dim"), 14), highlight=False)
    elif unrelated_eager:
        # review 17 F5: the device_put staging of x, then of y (two arrays), compared as "0% alike ... shape changed":
        # an eager op called for another array shares nothing with the closest graph to tell
        lead = next((c for c in r.causes if c.locations), None)
        where = (f"at {lead.locations[0].short()}" if lead is not None
                 else "JAX wrote no source line into this module")
        console.print(Hanging(Text(
            f"  {'eager op':<10}an operation JAX ran outside your jitted functions (jnp.asarray, a device_put's "
            f"staging; {where}) called for an array of another shape: "
            f"{'loaded from the cache' if r.graph.ref in _LOADED.get() else 'compiled once per shape'}, expected, "
            f"not a step; it shares almost nothing with {closest} ({alike_text(r.diff.similarity, r.diff.equal)}), so "
            "their differences are no change of yours (-v lists them)", style="dim"), 14), highlight=False)
    elif hidden:  # an eager op: its first cause says it all; the rest are inside JAX's own code (review 6 F9)
        render_causes(console, [c for c in r.causes if all(c is not h for h in hidden)], notes=notes)
        console.print(Hanging(Text(
            f"  {'':<10}and {len(hidden)} more cause{'s' if len(hidden) != 1 else ''} inside the op's own code (JAX "
            "keeps no line of yours there): the same new shape, the same expected compilation (-v lists them)",
            style="dim"), 14), highlight=False)
    else:
        render_graph_causes(console, r, render_causes, notes)  # live tensors under the outputs they explain
    for line in notes.get(under, ()):  # no cause about outputs took them: after the causes
        console.print(line, highlight=False)
    if r.debug is not None and r.debug.cause:
        console.print(Hanging(Text(f"  {'':<10}PT_XLA_DEBUG: {r.debug.cause}", style="dim"), 26), highlight=False)
    if verbose and r.diff is not None:
        _render_details(console, r.diff)


def _unrelated_bridge_graph(r) -> bool:
    """A graph of torch_xla's Dynamo bridge, told by Dynamo's story (every cause's row a ``dynamo_bridge`` one),
    that shares almost nothing with the closest earlier graph (``dynamo_xla.UNRELATED``): another program, not a
    changed one."""
    from hlodiff.explain.dynamo_xla import UNRELATED

    return (r.diff is not None and r.diff.similarity < UNRELATED and bool(r.causes)
            and all((c.fix_rule or "").startswith("dynamo_bridge") for c in r.causes))


def _unrelated_eager_op(r) -> bool:
    """A JAX eager op outside jit (every cause told ``eager_op``) whose closest earlier graph shares almost nothing
    with it (``dynamo_xla.UNRELATED``): the staging of another array, not the same op at a new size."""
    from hlodiff.explain.dynamo_xla import UNRELATED

    return (r.diff is not None and r.diff.similarity < UNRELATED and bool(r.causes)
            and all(c.fix_rule == "eager_op" for c in r.causes))


def _bridge_own_graph(r) -> bool:
    """A graph the bridge compiles on its own (every cause told ``dynamo_bridge_own``: expected, nothing to fix):
    its differences from another program are no story (a new size or branch of the bridge's graph has its own rows,
    whose differences are the story: dyn_kv_cat, dyn_break_then_float)."""
    return bool(r.causes) and all(c.fix_rule == "dynamo_bridge_own" for c in r.causes)


def _eager_rest(r) -> list:
    """Of an eager op's causes (every one told ``eager_op``), all but the first with a line of the user's (else the
    first): the others repeat the same expected compile at instructions inside the op (``jax.random.normal``'s
    threefry and uniform calls), each with "line unknown" and the same fix."""
    if len(r.causes) < 2 or not all(c.fix_rule == "eager_op" for c in r.causes):
        return []
    lead = next((c for c in r.causes if c.locations), r.causes[0])
    return [c for c in r.causes if c is not lead]


def _tensor_note(note) -> Hanging:
    t = note.tensor
    roots = t.roots()
    op = f" {roots[-1].op}" if roots else ""
    return Hanging(Text(f"  {'':<10}{'new' if note.side == 'right' else 'gone'} output {note.output}: live tensor "
                        f"id={t.id} {t.shape_text}{op}{_tensor_frame(t)}", style="dim"), 14)


def _tensor_frame(tensor) -> str:
    """`` from train.py:20 (f)``; nothing when the report has no stack (source lines were off)."""
    from hlodiff.hlo.model import user_frame

    frame = user_frame(tensor.frames) or (tensor.frames[0] if tensor.frames else None)
    return f" from {frame_text(frame)}" if frame is not None else " (no stack: source lines were off)"
