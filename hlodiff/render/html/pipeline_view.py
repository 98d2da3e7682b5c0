"""What each graph hands the next, drawn (issue 32, pytorch/xla#6347): a training step as its graphs in the order they
ran (forward, backward, ..., optimizer), with the bytes crossing between them on the edges, coloured by what they
are (activations saved for backward, gradients, parameters, optimizer state). Built from the ``hlodiff.cost/1``
document alone (``graphs``, ``boundaries``, ``pipeline``), like the other views; inline SVG, so the page stays one
self-contained file.

Which step is drawn: each run's last complete step (every graph of it reported), the one ``pipeline.growth``
compares; tensors handed over from the step before (parameters from the previous optimizer step) come in from a
box standing for that step.
"""

from __future__ import annotations

from hlodiff.render.html.extras_view import cost_section
from hlodiff.render.html.page import esc, page
from hlodiff.render.units import human_bytes

ROLE_COLOUR = {"activation": "#c0392b", "gradient": "#8e44ad", "parameter": "#2457c5", "optimizer_state": "#16a085",
               "other": "#7f8c8d", "unknown": "#b0b6bf"}
"""One colour per role; the legend under each drawing names them."""

_BOX_W, _BOX_H, _GAP, _TOP = 92, 40, 46, 18


def render_cost_page(doc: dict) -> str:
    """``hlodiff cost ... --html``: the pipeline drawings, the single-graph alternative beside, then every graph's
    figures and the boundaries table."""
    pipeline = doc.get("pipeline") or {}
    run = doc.get("run") or {}
    held = run.get("boundary_bytes")
    summary = (f"{run.get('graphs', 0)} graphs, {run.get('compiled', 0)} compiled; "
               + (f"{human_bytes(held)} crossing between graphs" if held is not None else
                  f"{human_bytes(run.get('named_boundary_bytes'))} named crossing between graphs (the total is not "
                  "known)"))
    body = ["<h1>What each graph costs, and what it hands the next</h1>", f"<p class='summary'>{esc(summary)}</p>"]
    head = doc.get("headline")
    if head:  # the first finding, as the terminal opens with it (hlodiff/render/cost_headline.py)
        body.append(f"<p class='summary'><b>first:</b> {esc(head.get('summary'))}</p>"
                    f"<p class='summary'><b>fix:</b> {esc(head.get('fix'))}</p>")
    for u in doc.get("unknowns") or []:
        body.append(f"<p class='hint'>{esc(u.get('figure'))} unknown: {esc(u.get('reason'))}; given by "
                    f"{esc(u.get('capture'))}</p>")
    body.append(pipeline_section(doc))
    body.append(single_graph_html(pipeline.get("single_graph") or []))
    body.append(growth_html(pipeline.get("growth") or []))
    body.append(cost_section(doc))
    return page("hlodiff cost", [b for b in body if b])


def pipeline_section(doc: dict) -> str:
    runs = (doc.get("pipeline") or {}).get("runs") or []
    if not runs:
        return ""
    graphs = doc.get("graphs") or []
    boundaries = doc.get("boundaries") or []
    out = ["<h2 id='pipeline'>The step as graphs, with the bytes they hand each other</h2>"]
    for run in runs:
        done = [s for s in run.get("steps") or [] if s.get("complete")]
        if not done:
            out.append(f"<p class='note'>{esc(run.get('source'))}: no step with every graph reported</p>")
            continue
        step = done[-1]
        refs = _step_refs(graphs, step)
        out.append(f"<h3>{esc(run.get('source'))}: step {esc(step.get('step'))} ({len(refs)} graphs; "
                   f"{esc(human_bytes(step.get('bytes')))} held across boundaries in {esc(step.get('tensors'))} "
                   "tensors)</h3>")
        out.append(step_svg(refs, {g.get("ref"): g.get("phase") for g in graphs}, boundaries, step.get("step")))
        out.append(_edge_table(refs, boundaries))
    out.append(_legend())
    return "\n".join(out)


def _step_refs(graphs: list[dict], step: dict) -> list[str]:
    refs = [g.get("ref") for g in graphs]
    try:
        first, last = refs.index(step.get("first")), refs.index(step.get("last"))
    except ValueError:
        return []
    return refs[first:last + 1]


def _edges_into(refs: list[str], boundaries: list[dict]) -> list[dict]:
    inside = set(refs)
    return [b for b in boundaries if b.get("to") in inside]


def step_svg(refs: list[str], phases: dict, boundaries: list[dict], step) -> str:
    """Boxes left to right in the order the graphs ran; an arc above them for each boundary inside the step, one
    from the "earlier" box for what the step before handed over; stroke width grows with the bytes."""
    edges = _edges_into(refs, boundaries)
    position = {ref: k + 1 for k, ref in enumerate(refs)}  # 0: the step before
    spans = [abs(position[b["to"]] - position.get(b.get("from"), 0)) for b in edges]
    height = _TOP + 16 * (max(spans) if spans else 1) + 14
    width = (len(refs) + 1) * (_BOX_W + _GAP)
    top = height
    biggest = max((b.get("bytes") or 0 for b in edges), default=1) or 1

    def x(k: int) -> float:
        return 4 + k * (_BOX_W + _GAP) + _BOX_W / 2

    parts = []
    for b in sorted(edges, key=lambda b: -(b.get("bytes") or 0)):
        a, z = position.get(b.get("from"), 0), position[b["to"]]
        role = _dominant(b)
        rise = 16 * abs(z - a) + 10
        x1, x2 = x(a) + 6, x(z) - 6
        mid = (x1 + x2) / 2
        stroke = 1.5 + 5 * (b.get("bytes") or 0) / biggest
        label = f"{human_bytes(b.get('bytes'))}"
        title = (f"{b.get('from')} -> {b.get('to')}: {b.get('count', len(b.get('tensors') or []))} tensors, "
                 f"{human_bytes(b.get('bytes'))}: " + ", ".join(f"{r.replace('_', ' ')} {human_bytes(v.get('bytes'))}"
                                                                for r, v in (b.get("roles") or {}).items()))
        parts.append(f"<path d='M{x1:.0f},{top} Q{mid:.0f},{top - 2 * rise:.0f} {x2:.0f},{top}' fill='none' "
                     f"stroke='{ROLE_COLOUR.get(role, '#7f8c8d')}' stroke-width='{stroke:.1f}' opacity='.8'>"
                     f"<title>{esc(title)}</title></path>"
                     f"<text x='{mid:.0f}' y='{top - rise - 3:.0f}' font-size='10' text-anchor='middle'>"
                     f"{esc(label)}</text>")
    boxes = [(0, f"step {int(step) - 1}" if isinstance(step, int) and step > 0 else "earlier", "")]
    boxes += [(position[ref], "#" + ref.rsplit("#", 1)[-1], phases.get(ref) or "") for ref in refs]
    for k, name, phase in boxes:
        left = 4 + k * (_BOX_W + _GAP)
        fill = "#f5f6f8" if k == 0 else "#ffffff"
        dash = " stroke-dasharray='4,3'" if k == 0 else ""
        parts.append(f"<rect x='{left}' y='{top}' width='{_BOX_W}' height='{_BOX_H}' rx='4' fill='{fill}' "
                     f"stroke='#5d6675'{dash}/><text x='{left + _BOX_W / 2:.0f}' y='{top + 16}' font-size='11' "
                     f"text-anchor='middle' font-weight='600'>{esc(name)}</text><text x='{left + _BOX_W / 2:.0f}' "
                     f"y='{top + 31}' font-size='10' text-anchor='middle' fill='#5d6675'>{esc(phase)}</text>")
    return (f"<div class='timeline'><svg class='pipeline' width='{width}' height='{top + _BOX_H + 4}' role='img' "
            f"aria-label='graphs of the step and the bytes crossing between them'>{''.join(parts)}</svg></div>")


def _dominant(boundary: dict) -> str:
    roles = boundary.get("roles") or {}
    if not roles:
        return "unknown"
    return max(roles, key=lambda r: (roles[r].get("bytes") or 0, r))


def _edge_table(refs: list[str], boundaries: list[dict]) -> str:
    edges = _edges_into(refs, boundaries)
    if not edges:
        return "<p class='note'>nothing crosses into this step's graphs</p>"
    rows = ["<tr><th>from</th><th>to</th><th class='num'>tensors</th><th class='num'>bytes</th><th>by role</th></tr>"]
    for b in edges:
        roles = ", ".join(f"{v.get('count')} {r.replace('_', ' ')} {human_bytes(v.get('bytes'))}"
                          for r, v in (b.get("roles") or {}).items())
        phases = f" ({b.get('from_phase')} → {b.get('to_phase')})" if b.get("from_phase") and b.get("to_phase") else ""
        rows.append(f"<tr><td>{esc(b.get('from'))}</td><td>{esc(b.get('to'))}{esc(phases)}</td>"
                    f"<td class='num'>{esc(b.get('count', len(b.get('tensors') or [])))}</td>"
                    f"<td class='num'>{esc(human_bytes(b.get('bytes')))}</td><td>{esc(roles)}</td></tr>")
    return "<table class='data'>" + "".join(rows) + "</table>"


def _legend() -> str:
    items = "".join(f"<span style='border-bottom:3px solid {c};margin-right:1.2em'>{esc(r.replace('_', ' '))}</span>"
                    for r, c in ROLE_COLOUR.items())
    return f"<p class='small'>edges, by the role holding most of their bytes: {items}</p>"


def single_graph_html(rows: list[dict]) -> str:
    if not rows:
        return ""
    items = []
    for g in rows:
        held = human_bytes(g.get("held_bytes")) + ("" if g.get("held_exact") else " named (at least)")
        split_peak = (f"{human_bytes(g.get('split_peak_bytes'))} ({g.get('split_peak_source')}) in "
                      f"{g.get('split_peak_graph')}" if g.get("split_peak_bytes") is not None else "not known")
        items.append(f"<tr><td>{esc(g.get('split'))} step {esc(g.get('split_step'))} ({esc(g.get('split_graphs'))} "
                     f"graphs)</td><td class='num'>{esc(held)}</td><td>{esc(split_peak)}</td>"
                     f"<td>{esc(g.get('single_graph'))}</td><td class='num'>{esc(human_bytes(g.get('single_peak_bytes')))}"
                     f" ({esc(g.get('single_peak_source'))})</td></tr>")
    return ("<h2 id='single-graph'>Beside the single-graph alternative</h2><table class='data'><tr><th>split run</th>"
            "<th class='num'>held across boundaries</th><th>largest peak of its graphs</th><th>single graph</th>"
            "<th class='num'>its peak</th></tr>" + "".join(items) + "</table>")


def growth_html(rows: list[dict]) -> str:
    if not rows:
        return ""
    items = []
    for g in rows:
        roles = ", ".join(f"{r.replace('_', ' ')} {human_bytes(a)} → {human_bytes(b)}"
                          for r, (a, b) in (g.get("roles") or {}).items())
        fw = g.get("forward_graphs") or [None, None]
        total = g.get("bytes") or [None, None]
        items.append(f"<tr><td>{esc(g.get('from'))} → {esc(g.get('to'))}</td><td class='num'>{esc(fw[0])} → "
                     f"{esc(fw[1])}</td><td class='num'>{esc(human_bytes(total[0]))} → {esc(human_bytes(total[1]))}"
                     f"</td><td>{esc(roles)}</td></tr>")
    return ("<h2 id='growth'>How it grows from run to run</h2><table class='data'><tr><th>runs</th>"
            "<th class='num'>forward graphs per step</th><th class='num'>held per step</th><th>by role</th></tr>"
            + "".join(items) + "</table>")
