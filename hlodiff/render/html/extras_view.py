"""Sections that appear when other analyses ran: cost (``hlodiff.cost/1``, the ``cost`` deltas of a compare
document) and many ranks (``ranks`` / ``divergence`` in the explain document). Each renders whatever keys of
its schema are present and nothing when the analysis did not run."""

from __future__ import annotations

from hlodiff.dumps.page_source import SourceText
from hlodiff.render.html.page import esc, prose
from hlodiff.render.html.recompile_view import causes_html
from hlodiff.render.units import human_bytes
from hlodiff.render.plural import noun


def _num(value, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}{unit}"
    return f"{value:,}{unit}" if isinstance(value, int) else esc(value)


def cost_section(cost_doc: dict | None) -> str:
    if not cost_doc or not cost_doc.get("graphs"):
        return ""
    rows = ["<tr><th>graph</th><th class='num'>inputs</th><th class='num'>outputs</th><th class='num'>aliased</th>"
            "<th class='num'>peak memory</th><th class='num'>copies</th><th>loop-buffer copies</th>"
            "<th class='num'>compile</th></tr>"]
    for g in cost_doc["graphs"]:
        params, outs = g.get("parameters") or {}, g.get("outputs") or {}
        copies = g.get("copies") or []
        loops = g.get("loop_buffer_copies") or []
        loop_text = "; ".join(
            f"{c.get('shape')} in {c.get('loop')}: {human_bytes(c.get('bytes_per_iteration'))}/iteration, "
            f"{human_bytes(c.get('bytes_per_step'))}/step"
            + (f" at {c['location'].get('file', '')}:{c['location'].get('line', '')}"
               if isinstance(c.get("location"), dict) else "") for c in loops)
        seconds = g.get("compile_seconds")
        rows.append(
            f"<tr><td>{esc(g.get('ref'))}</td>"
            f"<td class='num'>{esc(params.get('count', '-'))} ({esc(human_bytes(params.get('bytes')))})</td>"
            f"<td class='num'>{esc(outs.get('count', '-'))} ({esc(human_bytes(outs.get('bytes')))})</td>"
            f"<td class='num'>{_figure(g, 'aliased')}</td>"
            f"<td class='num'>{_figure(g, 'peak')}</td>"
            f"<td class='num'>{len(copies)} ({esc(human_bytes(sum(c.get('bytes') or 0 for c in copies)))})</td>"
            f"<td>{esc(loop_text) or '-'}</td>"
            f"<td class='num'>{esc(f'{seconds:.2f} s' if isinstance(seconds, (int, float)) else '-')}</td></tr>")
    out = [f"<h2 id='cost'>Cost</h2><table class='data'>{''.join(rows)}</table>", _sources_note(cost_doc)]
    boundaries = cost_doc.get("boundaries") or []
    if boundaries:
        items = []
        for b in boundaries:
            tensors = b.get("tensors") or []
            shapes = ", ".join(str(t.get("shape")) for t in tensors[:8]) + (" …" if len(tensors) > 8 else "")
            items.append(f"<tr><td>{esc(b.get('from'))}</td><td>{esc(b.get('to'))}</td>"
                         f"<td class='num'>{len(tensors)}</td><td class='num'>{esc(human_bytes(b.get('bytes')))}</td>"
                         f"<td>{esc(shapes)}</td></tr>")
        out.append("<h3>Tensors crossing from one graph to the next</h3><table class='data'><tr><th>from</th>"
                   "<th>to</th><th class='num'>tensors</th><th class='num'>bytes</th><th>shapes</th></tr>"
                   + "".join(items) + "</table>")
    return "\n".join(out)


_SOURCE_WORDS = {"xla": "XLA's memory-usage report",
                 "torch_xla": "torch_xla's Post Compilation Analysis (PT_XLA_DEBUG log)", "estimate": "hlodiff's estimate", "hlo": "the module's input_output_alias"}


def _figure(g: dict, kind: str) -> str:
    """A byte figure with its rounding (±) and, where it is not the HLO's own, its source; ``?`` when unknown."""
    value = g.get(f"{kind}_bytes")
    source = g.get(f"{kind}_source")
    if value is None:
        return "<span title='not known from what was captured'>?</span>" if kind == "aliased" else "-"
    rounding = g.get(f"{kind}_rounding_bytes")
    text = esc(human_bytes(value)) + (f" ±{esc(human_bytes(rounding))}" if rounding else "")
    return text + (f" ({esc(source)})" if source and source != "hlo" else "")


def _sources_note(cost_doc: dict) -> str:
    """Which source gave the peak figures (XLA > torch_xla > estimate) and the figures no capture held."""
    counts: dict[str, int] = {}
    for g in cost_doc.get("graphs") or []:
        counts[g.get("peak_source")] = counts.get(g.get("peak_source"), 0) + 1
    parts = [f"{_SOURCE_WORDS.get(k, k)}: {n}" for k, n in counts.items() if k]
    unknowns = {(u.get("figure"), u.get("reason"), u.get("capture")) for g in cost_doc.get("graphs") or []
                for u in g.get("unknowns") or []}
    unknowns |= {(u.get("figure"), u.get("reason"), u.get("capture")) for u in cost_doc.get("unknowns") or []}
    items = "".join(f"<li>{esc(f)} unknown: {esc(r)}; given by {esc(c)}</li>" for f, r, c in sorted(unknowns))
    return (f"<p class='dim'>peak memory from {esc('; '.join(parts))}</p>" if parts else "") + \
        (f"<ul>{items}</ul>" if items else "")


_FIGURES = (("parameter_bytes", "inputs", True), ("output_bytes", "outputs", True),
            ("aliased_bytes", "aliased", True), ("peak_bytes", "peak memory", True),
            ("copy_bytes_per_step", "copied per step", True),
            ("loop_buffer_copy_bytes_per_step", "loop-buffer copies per step", True), ("copies", "copies", False),
            ("loop_buffer_copies", "loop-buffer copies", False), ("compile_seconds", "compile seconds", False))


def _rounding(side: dict, key: str) -> str:
    rounding = side.get(key.replace("_bytes", "_rounding_bytes")) if key in ("peak_bytes", "aliased_bytes") else None
    return f" ±{esc(human_bytes(rounding))}" if rounding else ""


def cost_delta_section(delta) -> str:
    """The ``cost`` object of a compare document: what appeared or disappeared, then left, right and B - A."""
    if not isinstance(delta, dict) or not (delta.get("left") or delta.get("changes")):
        return ""
    out = ["<h2 id='cost'>Cost of the difference</h2>"]
    changes = delta.get("changes") or []
    if changes:
        out.append("<ul>" + "".join(f"<li>{esc(c if isinstance(c, str) else c.get('summary', c))}</li>"
                                    for c in changes) + "</ul>")
    left, right, diff = delta.get("left") or {}, delta.get("right") or {}, delta.get("delta") or {}
    peak = delta.get("peak_source") or {}
    rows = []
    for key, label, is_bytes in _FIGURES:
        if key not in left and key not in right:
            continue
        show = human_bytes if is_bytes else _num
        change = diff.get(key)
        sign = "+" if isinstance(change, (int, float)) and change > 0 else ""
        shown = "-" if change is None else sign + (show(change) if not is_bytes or change >= 0
                                                   else "-" + human_bytes(-change))
        note = f" ({peak.get('left')} / {peak.get('right')})" if key == "peak_bytes" and peak else ""
        aliased = delta.get("aliased_source") or {}
        if key == "aliased_bytes" and set(aliased.values()) - {"hlo"}:
            note = f" ({aliased.get('left') or 'unknown'} / {aliased.get('right') or 'unknown'})"
        cells = [esc(show(side.get(key))) + _rounding(side, key) for side in (left, right)]
        rows.append(f"<tr><th>{esc(label)}{esc(note)}</th><td class='num'>{cells[0]}</td>"
                    f"<td class='num'>{cells[1]}</td><td class='num'>{esc(shown)}</td></tr>")
    table = ("<table class='data'><tr><th></th><th class='num'>left</th><th class='num'>right</th>"
             f"<th class='num'>change</th></tr>{''.join(rows)}</table>") if rows else ""
    if not changes and not any(v for v in diff.values() if isinstance(v, (int, float))):
        return (f"<details class='alike'><summary>cost: no change in inputs, outputs, memory or copies</summary>"
                f"{table}</details>")
    out.append(table)
    out.append("".join(f"<p class='dim'>{esc(u.get('figure'))} unknown: {esc(u.get('reason'))}; given by "
                       f"{esc(u.get('capture'))}</p>" for u in delta.get("unknowns") or []))
    return "\n".join(out)


def ranks_section(doc: dict, sources: SourceText) -> str:
    ranks = doc.get("ranks") or []
    divergence = doc.get("divergence")
    if not ranks and not divergence:
        return ""
    out = ["<h2 id='ranks'>Ranks</h2>"]
    if ranks:
        rows = "".join(f"<tr><td>{esc(r.get('rank'))}</td><td>{esc(', '.join(map(str, r.get('paths') or [])))}</td>"
                       f"<td class='num'>{_num(r.get('graphs'))}</td><td class='num'>{_num(r.get('compilations'))}"
                       "</td></tr>" for r in ranks)
        out.append("<table class='data'><tr><th>rank</th><th>dumps</th><th class='num'>graphs</th>"
                   f"<th class='num'>compilations</th></tr>{rows}</table>")
    for note in doc.get("rank_notes") or []:
        out.append(f"<p class='hint'>{prose(note)}</p>")
    if divergence is not None and not divergence:
        out.append(f"<p>All {len(ranks)} ranks compiled the same graphs.</p>")
    for d in divergence or []:
        which = ", ".join(map(str, d.get("ranks") or []))
        out.append(f"<h3>step {esc(d.get('step'))}: {noun(len(d.get('ranks') or []), 'rank')} "
                   f"{esc(which)} ran {esc(d.get('ref'))}; the majority ran {esc(d.get('majority_ref'))}</h3>")
        if d.get("summary"):
            out.append(f"<p>{prose(d['summary'])}</p>")
        out.append(causes_html(d.get("causes") or [], sources))
    return "\n".join(out)
