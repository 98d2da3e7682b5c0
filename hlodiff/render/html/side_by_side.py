"""Two graphs side by side around each change, one section per changed computation.

The differ's matching decides what sits beside what: matched instructions that keep their relative order are
aligned on one row (the longest such chain, so a reordered dump does not look rewritten), the rest is shown on
its own side. Changed instructions are highlighted to the character; unchanged runs beyond a few lines of
context collapse into ``<details>`` (expandable without script), and on big graphs a long unchanged run is not
embedded at all, so the page holds only the neighbourhoods of changes. Every instruction name links to its
counterpart. Computations that changed in exactly the same way (24 layers of one model) are shown once, with the
others named.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from hlodiff.diff.classify import ComputationDiff, classify_module
from hlodiff.diff.longest_increasing import longest_increasing
from hlodiff.graph.canonical import CanonicalModule
from hlodiff.hlo.model import Instruction
from hlodiff.hlo.printer import format_instruction
from hlodiff.render.html.highlight import mark_pair, plain
from hlodiff.render.html.page import esc
from hlodiff.render.plural import counted

CONTEXT = 3
"""Unchanged rows kept visible above and below each change."""

EMBED_RUN = 400
"""An unchanged run longer than this is not embedded (only counted), to keep reports of big graphs small."""

MAX_CHANGED_ROWS = 400
"""Changed rows shown per computation; the JSON output (``compare -v --json``) lists all of them."""

MAX_SECTIONS = 24
"""Distinct changed computations shown per comparison."""

_NAME = re.compile(r"%[\w.\-]+")
_SKIP = frozenset({"metadata"})


def _header_table(lcm: CanonicalModule, rcm: CanonicalModule) -> str:
    """The module-header attributes that differ (donation, entry layout, partitions): for an identical
    computation they are the whole visible difference."""
    left, right = lcm.module.attrs, rcm.module.attrs
    keys = sorted(k for k in set(left) | set(right) if left.get(k) != right.get(k))
    if not keys:
        return ""
    rows = "".join(f"<tr><th>{esc(k)}</th><td><code>{esc(left.get(k, '-'))}</code></td>"
                   f"<td><code>{esc(right.get(k, '-'))}</code></td></tr>" for k in keys)
    return ("<table class='header-diff'><tr><th>module header</th><th>left</th><th>right</th></tr>"
            f"{rows}</table>")


@dataclass(slots=True)
class Row:
    status: str  # same | changed | only_left | only_right | moved
    left: str | None
    right: str | None
    interesting: bool


def render_pair(lcm: CanonicalModule, rcm: CanonicalModule, prefix: str,
                computations: list[ComputationDiff] | None = None) -> str:
    """The side-by-side sections for two canonical modules; ``prefix`` makes element ids unique in the page.
    ``computations`` are the differ's matched pairs when the caller has them (else they are matched here)."""
    cds = [cd for cd in (computations or classify_module(lcm, rcm)) if cd.changes]
    if not cds:
        return "<p class='note'>No instruction differs after normalization.</p>" + _header_table(lcm, rcm)
    groups: dict[tuple, list[ComputationDiff]] = {}
    for cd in cds:
        groups.setdefault(_signature(cd), []).append(cd)
    out: list[str] = []
    for k, (_, members) in enumerate(groups.items()):
        if k == MAX_SECTIONS:
            rest = sum(len(m) for m in list(groups.values())[k:])
            out.append(f"<p class='cap'>{counted(rest, 'more changed computation')} not shown "
                       f"(cap of {MAX_SECTIONS} per report); <code>hlodiff compare -v --json</code> lists every "
                       f"change.</p>")
            break
        out.append(_section(members[0], f"{prefix}c{k}", members[1:]))
    return "\n".join(out)


def _signature(cd: ComputationDiff) -> tuple:
    """What changed, with names blanked: equal for the same edit in two copies of a layer."""
    items = []
    for (lname, rname), change in sorted(cd.changes.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or "")):
        lt = _NAME.sub("%", _text(cd.left.insts[lname])) if lname else ""
        rt = _NAME.sub("%", _text(cd.right.insts[rname])) if rname else ""
        items.append((change.side, tuple(change.kinds), lt, rt))
    items.sort()
    return tuple(items)


def _text(inst: Instruction) -> str:
    return format_instruction(inst, skip_attrs=_SKIP)


# -- rows -------------------------------------------------------------------------------------------------------


def _order(cc) -> list[str]:
    return [i.name for i in cc.computation.instructions if i.name in cc.insts]


def rows_of(cd: ComputationDiff) -> list[Row]:
    """Aligned rows: the longest chain of matched pairs in the same relative order sits on shared rows."""
    m = cd.matching
    lnames, rnames = _order(cd.left), _order(cd.right)
    lpos = {n: i for i, n in enumerate(lnames)}
    rpos = {n: j for j, n in enumerate(rnames)}
    pairs = sorted((rpos[r], lpos[l]) for l, r in m.l2r.items() if l in lpos and r in rpos)
    anchors = [pairs[k] for k in longest_increasing([lp for _, lp in pairs])]  # in order in both
    changed = {k: c for k, c in cd.changes.items()}
    rows: list[Row] = []
    li = ri = 0
    for rj, la in anchors + [(len(rnames), len(lnames))]:
        rows.extend(_gap(cd, lnames[li:la], rnames[ri:rj], changed))
        if la < len(lnames):
            lname, rname = lnames[la], rnames[rj]
            is_changed = (lname, rname) in changed
            rows.append(Row("changed" if is_changed else "same", lname, rname, is_changed))
        li, ri = la + 1, rj + 1
    return rows


def _gap(cd: ComputationDiff, lefts: list[str], rights: list[str], changed: dict) -> list[Row]:
    """Rows between two aligned pairs: one-sided instructions paired up row by row, moved ones on their own."""
    m = cd.matching
    only_l = [n for n in lefts if n not in m.l2r]
    only_r = [n for n in rights if n not in m.r2l]
    rows = [Row("only_left" if a and not b else "only_right" if b and not a else "changed", a, b, True)
            for a, b in _zip_longest(only_l, only_r)]
    for n in lefts:
        if n in m.l2r:
            rows.append(Row("moved", n, None, (n, m.l2r[n]) in changed))
    for n in rights:
        if n in m.r2l:
            rows.append(Row("moved", None, n, (m.r2l[n], n) in changed))
    return rows


def _zip_longest(a: list[str], b: list[str]) -> list[tuple[str | None, str | None]]:
    n = max(len(a), len(b))
    return [(a[i] if i < len(a) else None, b[i] if i < len(b) else None) for i in range(n)]


# -- HTML ---------------------------------------------------------------------------------------------------------


def _section(cd: ComputationDiff, sid: str, same_as: list[ComputationDiff]) -> str:
    rows = rows_of(cd)
    counts = {"changed": 0, "only_left": 0, "only_right": 0}
    for change in cd.changes.values():
        counts[change.side] += 1
    where = "ENTRY " if cd.caller is None else ""
    called = f" (called by %{esc(cd.caller[1])} in %{esc(cd.caller[0])})" if cd.caller else ""
    names = f"%{esc(cd.left.name)}" + (f" → %{esc(cd.right.name)}" if cd.right.name != cd.left.name else "")
    head = (f"<div class='section-head' id='{sid}'>{where}{names}{called} "
            f"<span class='dim small'>{counts['changed']} changed, {counts['only_left']} only left, "
            f"{counts['only_right']} only right, of {len(cd.left.insts):,} → {len(cd.right.insts):,} "
            f"instructions</span> <button type='button' hidden data-toggle='{sid}b'>expand unchanged</button></div>")
    body = _rows_html(cd, rows, sid)
    out = [head, f"<div id='{sid}b'>{body}</div>"]
    if same_as:
        listed = ", ".join(f"%{esc(o.left.name)}" for o in same_as[:12]) + (" …" if len(same_as) > 12 else "")
        out.append(f"<p class='note'>and {counted(len(same_as), 'more computation')} "
                   f"with the same change: {listed}</p>")
    return "\n".join(out)


def _visible(rows: list[Row]) -> list[bool]:
    visible = [False] * len(rows)
    shown = 0
    for i, row in enumerate(rows):
        if row.interesting:
            shown += 1
            if shown > MAX_CHANGED_ROWS:
                break
            for k in range(max(0, i - CONTEXT), min(len(rows), i + CONTEXT + 1)):
                visible[k] = True
    return visible


def _gutter(cd: ComputationDiff) -> int:
    """Digits of the largest line number shown beside this pair: a 7-digit line of a 1 GB dump must not wrap."""
    last = max((i.line or 0 for cc in (cd.left, cd.right) for i in cc.insts.values()), default=0)
    return max(len(str(last)), 2)


def _rows_html(cd: ComputationDiff, rows: list[Row], sid: str) -> str:
    table = functools.partial(_table, digits=_gutter(cd))
    visible = _visible(rows)
    total_interesting = sum(1 for r in rows if r.interesting)
    last_visible = max((i for i, v in enumerate(visible) if v), default=-1)
    # Which rows end up in the page at all: visible ones and short collapsed runs.
    embedded = list(visible)
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(rows):
        if visible[i]:
            i += 1
            continue
        j = i
        while j < len(rows) and not visible[j]:
            j += 1
        runs.append((i, j))
        if j - i <= EMBED_RUN and not (total_interesting > MAX_CHANGED_ROWS and i > last_visible):
            for k in range(i, j):
                embedded[k] = True
        i = j
    lids = {r.left: f"{sid}l{k}" for k, r in enumerate(rows) if embedded[k] and r.left}
    rids = {r.right: f"{sid}r{k}" for k, r in enumerate(rows) if embedded[k] and r.right}
    ctx = _Ctx(cd, lids, rids)
    out: list[str] = []
    i = 0
    run_at = {a: b for a, b in runs}
    while i < len(rows):
        if i in run_at:
            j = run_at[i]
            n = j - i
            if i > last_visible and total_interesting > MAX_CHANGED_ROWS:
                out.append(f"<p class='cap'>{total_interesting - MAX_CHANGED_ROWS} more changed instructions not "
                           f"shown (cap of {MAX_CHANGED_ROWS} per computation); <code>hlodiff compare -v --json</code> "
                           f"lists every change.</p>")
            elif embedded[i]:
                body = "".join(ctx.row(rows[k], k) for k in range(i, j))
                out.append(f"<details class='run'><summary>{counted(n, 'unchanged instruction', grouped=True)}"
                           f"</summary>{table(body)}</details>")
            else:
                out.append(f"<p class='cap'>{n:,} unchanged instructions not embedded (only the neighbourhoods of "
                           f"changes are, to keep the page small)</p>")
            i = j
            continue
        j = i
        while j < len(rows) and j not in run_at:
            j += 1
        out.append(table("".join(ctx.row(rows[k], k) for k in range(i, j)), header=not out))
        i = j
    return "\n".join(out)


def _table(body: str, header: bool = False, digits: int = 4) -> str:
    gutter = f"<col class='ln' style='width:calc({digits}ch + .9em)'>"
    cols = f"<colgroup>{gutter}<col>{gutter}<col></colgroup>"
    head = "<tr><th></th><th>before (left)</th><th></th><th>after (right)</th></tr>" if header else ""
    return f"<table class='sbs'>{cols}{head}{body}</table>"


class _Ctx:
    """Renders rows of one computation pair, knowing which instructions have an anchor in the page."""

    def __init__(self, cd: ComputationDiff, lids: dict[str, str], rids: dict[str, str]) -> None:
        self.cd, self.lids, self.rids = cd, lids, rids

    def _rename(self, right_name: str) -> str:
        return self.cd.matching.r2l.get(right_name, right_name)

    def row(self, row: Row, k: int) -> str:
        cd = self.cd
        m = cd.matching
        left = cd.left.insts[row.left] if row.left else None
        right = cd.right.insts[row.right] if row.right else None
        lhtml = rhtml = None
        if row.status == "changed" and left is not None and right is not None:
            lhtml, rhtml = mark_pair(_text(left), _text(right), self._rename)
        elif row.status == "moved" and row.interesting:
            partner_l = left or cd.left.insts[m.r2l[row.right]]
            partner_r = right or cd.right.insts[m.l2r[row.left]]
            a, b = mark_pair(_text(partner_l), _text(partner_r), self._rename)
            lhtml, rhtml = (a, None) if left is not None else (None, b)
        lcell = self._cell(left, "l", lhtml, self.rids.get(m.l2r.get(row.left)) if row.left else None,
                           self.lids.get(row.left))
        rcell = self._cell(right, "r", rhtml, self.lids.get(m.r2l.get(row.right)) if row.right else None,
                           self.rids.get(row.right))
        status = "changed" if row.status == "moved" and row.interesting else row.status
        return f"<tr class='{status}'>{lcell}{rcell}</tr>"

    @staticmethod
    def _cell(inst: Instruction | None, side: str, marked: str | None, partner: str | None,
              own: str | None) -> str:
        if inst is None:
            return "<td class='ln'></td><td class='code blank'></td>"
        text = marked if marked is not None else plain(_text(inst))
        name = esc("%" + inst.name)
        if partner:
            linked = f"<a class='pair' href='#{partner}' title='show the matched instruction'>{name}</a>"
            text = text.replace(name, linked, 1)
        line = str(inst.line) if inst.line else ""
        ident = f" id='{own}'" if own else ""
        return f"<td class='ln'>{line}</td><td class='code {side}'{ident}>{text}</td>"
