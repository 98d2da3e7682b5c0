"""A self-contained HTML report of a run's recompilations (no scripts, no fonts, no network).

For each recompilation: the causes with their source lines, then the two graphs side by side around each
instruction a cause names (the earlier graph on the left), with the named lines marked.
"""

from __future__ import annotations

import html
import re

from hlodiff.render.write import Inputs, write_text

CONTEXT = 3
"""Lines shown above and below each marked instruction."""

MAX_EXCERPTS = 6
"""Excerpts per cause; the JSON output lists every instruction."""

_METADATA = re.compile(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1400px;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em;border-bottom:1px solid #ccc}
.kind{display:inline-block;min-width:6em;font-weight:bold}
.loc{color:#555;margin-left:6.5em}.pattern{color:#444}
table.side{border-collapse:collapse;width:100%;table-layout:fixed;margin:.5em 0 1em}
table.side td{vertical-align:top;width:50%;padding:0 .5em}
pre{margin:0;font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;background:#f7f7f7}
.hit{background:#ffe9a8;display:block}.ln{color:#999}
.dim{color:#777}
"""


def write_html(path: str, explanation, inputs: Inputs | None = None) -> None:
    """Write the report atomically, refusing a path that is one of the run's ``inputs``."""
    write_text(path, render_html(explanation), inputs or Inputs(), what="HTML report")


def render_html(explanation) -> str:
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>hlodiff: recompilations</title>",
             f"<style>{_CSS}</style></head><body>", "<h1>Why did this run compile again?</h1>",
             f"<p><b>{e(explanation.summary)}</b></p>"]
    if len(explanation.patterns) > 1:
        parts.extend(f"<p class='pattern'>{e(p)}</p>" for p in explanation.patterns)
    parts.extend(f"<p class='dim'>hint: {e(h)}</p>" for h in explanation.hints)
    for r in explanation.recompilations:
        parts.append(_recompilation(r))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _recompilation(r) -> str:
    e = html.escape
    closest = r.closest.ref if r.closest else "-"
    out = [f"<h2>{e(r.graph.ref)} recompiled</h2>",
           f"<p class='dim'>family: {e(r.family.label)}; compared with {e(closest)}"
           + (f", {r.diff.similarity:.0%} alike" if r.diff else "") + "</p>"]
    left_text = r.closest.record.text().splitlines() if r.closest else []
    right_text = r.graph.record.text().splitlines()
    for cause in r.causes:
        out.append(f"<p><span class='kind'>{e(cause.kind)}</span>{e(cause.summary)}</p>")
        for frame in cause.locations or cause.library_locations:
            out.append(f"<div class='loc'>at {e(frame.where)}{' (' + e(frame.function) + ')' if frame.function else ''}"
                       "</div>")
        for lname, rname in _excerpt_pairs(cause):
            left = _excerpt(left_text, r.closest, lname, "added in this graph") if r.closest else ""
            right = _excerpt(right_text, r.graph, rname, "removed in this graph")
            out.append(f"<table class='side'><tr><td>{left}</td><td>{right}</td></tr></table>")
        if len(cause.instructions) > MAX_EXCERPTS:
            out.append(f"<p class='dim'>… and {len(cause.instructions) - MAX_EXCERPTS} more instructions</p>")
    for note in r.tensors:
        t = note.tensor
        out.append(f"<p class='dim'>{'new' if note.side == 'right' else 'gone'} output {note.output}: live tensor "
                   f"id={t.id} {e(t.shape_text)}</p>")
    return "\n".join(out)


def _excerpt_pairs(cause) -> list[tuple[str | None, str | None]]:
    """The instructions where the cause originates first (what changed), then the rest, up to MAX_EXCERPTS."""
    pairs = [(c.left.name if c.left else None, c.right.name if c.right else None) for c in cause.origins]
    pairs += [p for p in cause.instructions if p not in pairs]
    return pairs[:MAX_EXCERPTS]


def _excerpt(lines: list[str], graph, name: str | None, missing: str) -> str:
    """Lines around instruction ``name`` of ``graph`` (the module's text as the dump holds it, metadata elided:
    the cause lists the source lines)."""
    if name is None or graph is None or graph._module is None:
        return f"<pre class='dim'>({missing})</pre>"
    inst = next((i for _, i in graph._module.instructions() if i.name == name), None)
    if inst is None or not inst.line:
        return "<pre class='dim'>(not found)</pre>"
    at = inst.line - graph.record.start_line
    lo, hi = max(0, at - CONTEXT), min(len(lines), at + CONTEXT + 1)
    rows = []
    for k in range(lo, hi):
        text = f"<span class='ln'>{k + graph.record.start_line:>6}</span> {html.escape(_METADATA.sub('', lines[k]))}"
        rows.append(f"<span class='hit'>{text}</span>" if k == at else text)
    return "<pre>" + "\n".join(rows) + "</pre>"
