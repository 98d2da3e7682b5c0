"""The shape of a run at a glance: a step-by-family timeline with compilations marked and each family's pattern
named, then the compiled graphs with their sizes, each linked to its recompilation.

Built from the ``hlodiff.explain/1`` document alone (graphs carry ``step``, ``cache_key``, sizes), plus the
``hlodiff.cost/1`` graphs for compile time and peak memory when that analysis ran.
"""

from __future__ import annotations

import string

from hlodiff.render.html.page import esc, frame_text, prose, short_frame
from hlodiff.render.html.recompile_view import recompilation_anchor
from hlodiff.render.plural import counted
from hlodiff.render.units import human_bytes

MAX_STEPS = 400
"""Timeline columns; a longer run shows its first steps and says how many more there were."""


def run_header(doc: dict) -> str:
    out = ["<h1>Why did this run compile again?</h1>", f"<p class='summary' id='summary'>{prose(doc.get('summary'))}</p>"]
    headline = doc.get("headline") or {}
    if headline.get("fix"):
        where = f" (at <code>{esc(frame_text(headline['location']))}</code>)" if headline.get("location") else ""
        out.append(f"<p class='fix head'><b>fix:</b> {prose(headline['fix'])}{where}</p>")
    inputs = doc.get("inputs") or {}
    if inputs.get("dumps"):
        out.append("<p class='dim small'>read: " + esc(", ".join(inputs["dumps"]))
                   + (f"; live-tensor reports: {esc(', '.join(inputs['tensors_reports']))}"
                      if inputs.get("tensors_reports") else "")
                   + (f"; PT_XLA_DEBUG log: {esc(', '.join(inputs['debug_logs']))}" if inputs.get("debug_logs")
                      else "") + "</p>")
    for hint in doc.get("hints") or []:
        out.append(f"<p class='hint'>hint: {prose(hint)}</p>")
    for warning in doc.get("warnings") or []:
        out.append(f"<p class='hint'>warning: {esc(warning)}</p>")
    return "\n".join(out)


def toc(doc: dict, extra: list[tuple[str, str]]) -> str:
    links = [("timeline", "timeline"), ("graphs", "compiled graphs")]
    recs = doc.get("recompilations") or []
    links += [(recompilation_anchor(r), f"recompilation {short_ref(r.get('graph'))}") for r in recs[:20]]
    links += extra
    return "<nav class='toc'>" + "".join(f"<a href='#{esc(a)}'>{esc(t)}</a>" for a, t in links) + "</nav>"


def short_ref(ref: str | None) -> str:
    return "#" + ref.rsplit("#", 1)[-1] if ref and "#" in ref else (ref or "-")


def _letters(keys: list[str]) -> dict[str, str]:
    names: dict[str, str] = {}
    for key in keys:
        if key not in names:
            i = len(names)
            names[key] = string.ascii_uppercase[i] if i < 26 else f"G{i}"
    return names


def timeline(doc: dict) -> str:
    all_graphs = doc.get("graphs") or []
    graphs = {g["ref"]: g for g in all_graphs}
    recompiled = {r["graph"]: r for r in doc.get("recompilations") or []}
    families = doc.get("families") or []
    patterns = doc.get("patterns") or []
    steps = [g.get("step", i) for i, g in enumerate(doc.get("graphs") or [])]
    n_steps = max(steps, default=-1) + 1
    shown = min(n_steps, MAX_STEPS)
    dumped = bool(all_graphs) and all(not g.get("graph_hash") for g in all_graphs)
    head = f"<tr><th class='fam'>family \\ {'compilation' if dumped else 'step'}</th>" + "".join(
        f"<th class='step'>{s}</th>" for s in range(shown)) + "<th></th></tr>"
    rows = [head]
    for k, family in enumerate(families):
        members = [graphs[r] for r in family.get("graphs") or [] if r in graphs]
        key = _letter_key(members)
        letters = _letters([key(g) for g in members])
        cells: dict[int, list[dict]] = {}
        for g in members:
            cells.setdefault(g.get("step", 0), []).append(g)
        pattern = patterns[k] if k < len(patterns) else ""
        label = esc(family.get("label"))
        row = [f"<tr><th class='fam' tabindex='0'>{label}<span class='tip' role='tooltip'>{label}: "
               f"{esc(pattern)}</span></th>"]
        for s in range(shown):
            row.append(_cell(s, cells.get(s), letters, recompiled, key))
        word = (family.get("pattern") or {}).get("name") or ""
        word = "" if word in ("compilations", "dump") else word  # no name of its own: the row's tip says it
        row.append(f"<td class='dim pattern'>{esc(word)}</td></tr>")
        rows.append("".join(row))
    legend = ("<p class='legend small dim'><span style='background:#c7302b'></span>recompiled (links to why)"
              "<span style='background:#2457c5'></span>first compilation of its family"
              "<span style='background:#dfe6f3'></span>cache hit; letters name each family's distinct graphs</p>")
    more = (f"<p class='cap'>{n_steps - shown} more steps not drawn (timeline cap {MAX_STEPS}); the JSON output "
            "lists every graph.</p>" if n_steps > shown else "")
    pats = "".join(f"<li>{prose(p)}</li>" for p in patterns)
    # An XLA dump holds compilations only: a column is a compilation of its function, not a training step.
    unit = "compilation" if dumped else "step"
    return (f"<h2 id='timeline'>Timeline: {counted(n_steps, unit)}, "
            f"{counted(len(families), 'family', 'families')}</h2><ul class='small'>{pats}</ul>"
            f"<div class='timeline'><table class='tl'>{''.join(rows)}</table></div>{legend}{more}")


def _letter_key(members: list[dict]):
    """What a letter stands for, as in the terminal's patterns: the cache key where the dump shows cache hits
    (torch_xla's graph hash), the normalized computation where it shows compilations only (XLA dump folders,
    which have no graph hash), so the same computation compiled again repeats its letter (A,A)."""
    if members and all(not g.get("graph_hash") for g in members):
        return lambda g: g.get("fingerprint") or g["ref"]
    return lambda g: g.get("cache_key") or g["ref"]


def _cell(step: int, graphs: list[dict] | None, letters: dict[str, str], recompiled: dict[str, dict], key) -> str:
    if not graphs:
        return "<td class='empty'></td>"
    text = "".join(letters[key(g)] for g in graphs)
    rec = next((recompiled[g["ref"]] for g in graphs if g["ref"] in recompiled), None)
    compiled = any(g.get("compiled") for g in graphs)
    cls = "recompiled" if rec else "compiled" if compiled else "hit"
    title = "; ".join(
        f"step {step}: {g['ref']} {g.get('name') or ''} "
        f"{'compiled' if g.get('compiled') else 'cache hit of ' + short_ref(g.get('cache_hit_of'))}, "
        f"{g.get('instructions', 0):,} instructions" for g in graphs)
    if rec:
        kinds = ", ".join(dict.fromkeys(c.get("kind", "") for c in rec.get("causes") or []))
        title += f" (recompiled: {kinds})"
        text = f"<a href='#{recompilation_anchor(rec)}'>{esc(text)}</a>"
    else:
        text = esc(text)
    # the details show on hover, click or keyboard focus (a bar at the foot of the window), not only in a tooltip
    focus = "" if rec else " tabindex='0'"
    return (f"<td class='{cls}' data-step='{step}' data-ref='{esc(graphs[0]['ref'])}'{focus}>{text}"
            f"<span class='tip' role='tooltip'>{esc(title)}</span></td>")


def graph_table(doc: dict, cost_doc: dict | None) -> str:
    graphs = doc.get("graphs") or []
    recompiled = {r["graph"]: r for r in doc.get("recompilations") or []}
    cost = {g.get("ref"): g for g in (cost_doc or {}).get("graphs") or []}
    hits: dict[str, int] = {}
    for g in graphs:
        if g.get("cache_hit_of"):
            hits[g["cache_hit_of"]] = hits.get(g["cache_hit_of"], 0) + 1
    with_cost = bool(cost)
    sources = {g["ref"].rsplit("#", 1)[0] for g in graphs}
    one = next(iter(sources)) if len(sources) == 1 else None  # then #N names a graph; the path is said once
    # at 800 px the module name and the hit count give way (class opt), so the trigger and the why stay in view
    head = ("<tr><th>graph</th><th class='num'>step</th><th class='opt'>module</th><th class='num'>instructions</th>"
            "<th class='num'>inputs</th><th class='num'>outputs</th><th class='num opt'>cache hits</th>"
            + ("<th class='num opt'>compile</th><th class='num'>peak memory</th>" if with_cost else "")
            + "<th>trigger</th><th>why</th></tr>")
    rows = [head]
    for g in graphs:
        if not g.get("compiled"):
            continue
        params, outs = g.get("parameters") or {}, g.get("outputs") or {}
        rec = recompiled.get(g["ref"])
        why = (f"<a href='#{recompilation_anchor(rec)}'>" + esc(", ".join(dict.fromkeys(
            c.get("kind", "") for c in rec.get("causes") or []))) + "</a>") if rec else "<span class='dim'>first</span>"
        row = (f"<tr><td class='nw'>{esc(short_ref(g['ref']) if one else g['ref'])}</td><td class='num'>{esc(g.get('step', ''))}</td>"
               f"<td class='opt'>{esc(g.get('name'))}</td>"
               f"<td class='num'>{g.get('instructions', 0):,}</td>"
               f"<td class='num'>{esc(params.get('count', '-'))} ({esc(human_bytes(params.get('bytes')))})</td>"
               f"<td class='num'>{esc(outs.get('count', '-'))} ({esc(human_bytes(outs.get('bytes')))})</td>"
               f"<td class='num opt'>{hits.get(g['ref'], 0)}</td>")
        if with_cost:
            c = cost.get(g["ref"]) or {}
            seconds = c.get("compile_seconds")
            peak = c.get("peak_bytes")
            row += (f"<td class='num opt'>{esc(f'{seconds:.2f} s' if isinstance(seconds, (int, float)) else '-')}</td>"
                    f"<td class='num'>{esc(human_bytes(peak) if peak is not None else '-')}"
                    f"{' ±' + esc(human_bytes(c['peak_rounding_bytes'])) if c.get('peak_rounding_bytes') else ''}"
                    f"{' (' + esc(c.get('peak_source')) + ')' if peak is not None and c.get('peak_source') else ''}"
                    "</td>")
        row += f"<td class='nw'>{esc(short_frame(g.get('trigger')))}</td><td>{why}</td></tr>"
        rows.append(row)
    where = f"<p class='dim small'>in <code>{esc(one)}</code></p>" if one else ""
    return f"<h2 id='graphs'>Compiled graphs</h2>{where}<table class='data'>{''.join(rows)}</table>"
