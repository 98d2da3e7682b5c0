"""One recompilation (or one ``compare A B``): the causes with their fix and the user's line, the live tensors
behind added or removed outputs, then the two graphs side by side around each change.

Rendered from the JSON documents (``hlodiff.explain/1`` recompilation entries, ``hlodiff.compare/1``), so keys
other commands add (``fix`` on causes, ...) show up here as soon as they exist; the side-by-side view needs the
parsed graphs themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.dumps.page_source import SourceText
from hlodiff.graph.canonical import CanonicalModule
from hlodiff.render.html.page import badge, esc, frame_text, prose
from hlodiff.render.html.side_by_side import render_pair
from hlodiff.render.story_view import alike_text

@dataclass(slots=True)
class Pair:
    """The two graphs of a comparison, and the differ's matched computation pairs when already computed."""

    left: CanonicalModule
    right: CanonicalModule
    computations: list | None = None


def recompilation_anchor(rec: dict) -> str:
    return f"recompile-{rec.get('index', 0)}"


def _verb(rec: dict) -> str:
    """The first step's second graph, after an early read cut it, compiled for the first time (review 13, F5)."""
    return ("compiled as the first step's second graph (the step was cut short before its sync)"
            if rec.get("first_step_rest") else "recompiled")


def recompilation_section(rec: dict, pair: Pair | None, sources: SourceText, graph: dict | None) -> str:
    """``graph`` is the recompiled graph's entry of the explain document (step, trigger, sizes)."""
    anchor = recompilation_anchor(rec)
    graph = graph or {}
    step = graph.get("step")
    similarity = rec.get("similarity")
    alike = (f", {alike_text(similarity, bool(rec.get('hlo_identical')))}" if isinstance(similarity, (int, float))
             else "")
    at_step = f" at step {step}" if step is not None else ""
    out = [f"<section class='recompile' id='{anchor}'>",
           f"<h2>{esc(rec.get('graph'))} {_verb(rec)}{esc(at_step)}</h2>",
           f"<p class='dim'>family <b>{esc(rec.get('family'))}</b>; compared with the closest earlier graph "
           f"{esc(rec.get('closest') or '-')}{esc(alike)}"
           + (f"; the step ended at <code>{esc(frame_text(graph['trigger']))}</code>" if graph.get("trigger") else "")
           + "</p>"]
    out.append(causes_html(rec.get("causes") or [], sources))
    out.append(_tensors_html(rec.get("live_tensors") or []))
    debug = rec.get("debug")
    if debug and debug.get("cause"):
        out.append(f"<p class='small'><b>PT_XLA_DEBUG</b> (torch_xla's own record of this compilation): "
                   f"{esc(debug['cause'])}</p>")
    out.append(_ignored_html(rec.get("ignored") or []))
    out.append(graphs_html(pair, anchor))
    out.append("</section>")
    return "\n".join(p for p in out if p)


def causes_html(causes: list[dict], sources: SourceText) -> str:
    """Roots first; what follows from a root (``follows_from``) in a "with it:" block under it, and the layout-only
    consequences folded into it on one line."""
    if not causes:
        return "<p class='note'>No cause: the graphs are equal after normalization.</p>"
    if any("follows_from" in c for c in causes):
        return "<div class='causes'>" + _tree_html(causes, None, sources) + "</div>"
    return _list_html(causes, sources)


def _tree_html(causes: list[dict], root: int | None, sources: SourceText) -> str:
    out = []
    mine = [k for k, c in enumerate(causes) if [f.get("cause") for f in c.get("follows_from") or []][:1] ==
            ([] if root is None else [root])]
    for group in _alike([causes[k] for k in mine]):
        for cause in group[:1]:
            k = next(i for i in mine if causes[i] is cause)
            out.append(_cause_html(cause, sources, close=False, fix=root is None))  # a consequence's fix is its root's
            for folded in cause.get("folded") or []:
                out.append(f"<div class='loc lib'>with it (layout only): {esc(folded.get('summary'))}</div>")
            under = _tree_html(causes, k, sources)
            if under:
                out.append(f"<div class='with'><div class='dim small'>with it:</div>{under}</div>")
            out.append("</div>")
        if len(group) > 1:
            rest = "".join(_cause_html(c, sources) for c in group[1:])
            out.append(f"<details class='alike'><summary>and {len(group) - 1} more {esc(group[0].get('kind'))} "
                       f"cause{'s' if len(group) > 2 else ''} like it (the same change in other computations)"
                       f"</summary>{rest}</details>")
    return "\n".join(out)


def _list_html(causes: list[dict], sources: SourceText) -> str:
    out = ["<div class='causes'>"]
    for group in _alike(causes):
        out.append(_cause_html(group[0], sources))
        if len(group) > 1:
            rest = "".join(_cause_html(c, sources) for c in group[1:])
            out.append(f"<details class='alike'><summary>and {len(group) - 1} more {esc(group[0].get('kind'))} "
                       f"cause{'s' if len(group) > 2 else ''} like it (the same change in other computations)"
                       f"</summary>{rest}</details>")
    out.append("</div>")
    return "\n".join(out)


_NAMES = re.compile(r"%[\w.\-]+")


def _alike(causes: list[dict]) -> list[list[dict]]:
    """Causes that say the same thing about different instructions (one per region computation): kind, fix
    and wording equal once instruction names are blanked."""
    groups: dict[tuple, list[dict]] = {}
    for cause in causes:
        key = (cause.get("kind"), str(cause.get("fix")), _NAMES.sub("%", cause.get("summary") or ""))
        groups.setdefault(key, []).append(cause)
    return list(groups.values())


def _cause_html(cause: dict, sources: SourceText, close: bool = True, fix: bool = True) -> str:
    out: list[str] = []
    kind = cause.get("kind", "?")
    out.append(f"<div class='cause' data-kind='{esc(kind)}'>{badge(kind)}<span class='what'>"
               f"{prose(cause.get('summary'))}</span>")
    fix = cause.get("fix") if fix else None
    if fix:
        text = fix if isinstance(fix, str) else fix.get("text") or fix.get("summary") or str(fix)
        out.append(f"<div class='fix'><b>fix:</b> {prose(text)}</div>")
    if cause.get("plan"):
        from hlodiff.render.html.plan_view import plan_html

        out.append(plan_html(cause["plan"]))
    locations = cause.get("locations") or []
    for frame in locations:
        out.append(f"<div class='loc'>at <code>{esc(frame_text(frame))}</code></div>")
        line = sources.line(frame.get("file"), frame.get("line"))
        if line is not None:
            out.append(f"<pre class='src'>{esc(frame.get('line'))}  {esc(line)}</pre>")
    if not locations:
        library = cause.get("library_locations") or []
        for frame in library[:3]:
            out.append(f"<div class='loc lib'>in library code <code>{esc(frame_text(frame))}</code></div>")
        if not library:
            out.append("<div class='loc lib'>no source line in the dump for this change</div>")
    if close:
        out.append("</div>")
    return "\n".join(out)


def _tensors_html(notes: list[dict]) -> str:
    if not notes:
        return ""
    items = []
    for note in notes:
        what = {"right": "new", "left": "gone"}.get(note.get("side"), note.get("side"))
        op = f" {note['ir_op']}" if note.get("ir_op") else ""
        items.append(f"<li>{esc(what)} output {esc(note.get('output'))}: live tensor id={esc(note.get('tensor_id'))} "
                     f"<code>{esc(note.get('shape'))}</code>{esc(op)} from <code>{esc(frame_text(note.get('frame')))}"
                     f"</code></li>")
    return ("<h3>Live tensors behind the outputs</h3><ul class='tensors'>" + "".join(items) + "</ul>")


def _ignored_html(ignored: list[dict]) -> str:
    if not ignored:
        return ""
    return ("<p class='dim small'>normalization ignored: " + esc("; ".join(i.get("summary", "") for i in ignored))
            + "</p>")


def graphs_html(pair: Pair | None, prefix: str) -> str:
    if pair is None:
        return "<p class='note'>The graphs themselves are not available to show side by side.</p>"
    return ("<h3>The two graphs around each change</h3>"
            "<p class='dim small'>left: the earlier graph, right: the one that compiled. Changed parts are marked; "
            "click an instruction's name to see its counterpart; unchanged runs are folded.</p>"
            + render_pair(pair.left, pair.right, prefix, pair.computations))
