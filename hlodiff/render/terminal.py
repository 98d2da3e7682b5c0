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

from hlodiff.diff.model import Cause, ModuleDiff
from hlodiff.errors import InputWarning, printable
from hlodiff.render.fit import Column, FitTable
from hlodiff.render.hanging import Hanging
from hlodiff.render.units import human_bytes
from hlodiff.hlo.model import SourceFrame
from hlodiff.render.plural import counted

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
    console.print(f"[bold]{counted(len(summaries), 'graph', grouped=True)}[/]{where}, "
                  f"{counted(compiled, 'compilation', grouped=True)}{also}", highlight=False)
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
        console.print(f"[red]{counted(n, 'difference')}[/]", highlight=False)
    render_causes(console, diff.causes)
    if diff.ignored:
        console.print(Text("ignored: " + "; ".join(i.summary for i in diff.ignored), style="dim"), highlight=False)
    if verbose:
        _render_details(console, diff)


_HEADLINE_FIX: ContextVar[str | None] = ContextVar("headline_fix", default=None)
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
        if cause.hint:  # a hint says where a line would be; under a line told, it is no "line unknown" (review 21, F5)
            label = "hint" if cause.locations else "line unknown"
            console.print(Hanging(Text(f"{indent}{'':<10}{label}: {cause.hint}", style="yellow"),
                                  under + len(label) + 2), highlight=False)
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
