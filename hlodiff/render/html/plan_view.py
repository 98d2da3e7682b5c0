"""A bucket plan under its fix: the sentence, and a small chart of the sizes seen (bars: executions per size) with
the plan's bucket edges (lines). Inline SVG: the report stays one self-contained file."""

from __future__ import annotations

from hlodiff.render.html.page import esc
from hlodiff.render.plan import plan_text

_W, _H, _PAD = 360, 70, 4


def plan_html(plan: dict | None) -> str:
    if not isinstance(plan, dict) or not plan.get("values"):
        return ""
    return (f"<div class='fix plan'>{esc(plan_text(plan))}</div>" + _chart(plan))


def _chart(plan: dict) -> str:
    values = plan["values"]
    low, high = values[0]["size"], max(values[-1]["size"], *(plan.get("buckets") or [0]))
    span = max(high - low, 1)
    tallest = max(v["executions"] for v in values)

    def x(size: int) -> float:
        return _PAD + (size - low) / span * (_W - 2 * _PAD)

    bar = max(1.5, (_W - 2 * _PAD) / (span + 1) * 0.8)
    parts = [f"<rect x='{x(v['size']) - bar / 2:.1f}' y='{_H - 12 - v['executions'] / tallest * (_H - 20):.1f}' "
             f"width='{bar:.1f}' height='{v['executions'] / tallest * (_H - 20):.1f}' fill='#6a9fb5'>"
             f"<title>size {v['size']}: {v['executions']}</title></rect>" for v in values]
    for b in plan.get("buckets") or []:
        parts.append(f"<line x1='{x(b):.1f}' x2='{x(b):.1f}' y1='2' y2='{_H - 12}' stroke='#c0392b' "
                     f"stroke-dasharray='3,2'><title>bucket {b}</title></line>"
                     f"<text x='{x(b):.1f}' y='{_H - 1}' font-size='9' text-anchor='middle'>{b}</text>")
    return (f"<svg class='plan-chart' width='{_W}' height='{_H}' role='img' aria-label='sizes seen and bucket "
            f"edges'>{''.join(parts)}</svg>")
