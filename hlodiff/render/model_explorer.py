"""Two modules and their diff as Model Explorer input: a graph collection per side (graph A, graph B) and two
node-data overlays (each node's status; the cause kind of each node that differs).

Words and colours only: every fact comes from the diff (``ModuleDiff`` and the matched computation pairs it keeps).
Model Explorer itself is not imported here; :mod:`hlodiff.render.model_explorer_serve` serves what this writes.

Each instruction sits in layers (:mod:`hlodiff.render.model_explorer_layers`); Model Explorer shows the collapsed
top layers first, each layer holding a change gets a coloured border there, and the overlays draw a bar of its
nodes' statuses on it. Matched instructions carry the same node id on both sides, so Model Explorer's "match node
id" sync pairs them.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, deque
from dataclasses import dataclass, field

from hlodiff.diff.model import CAUSE_KINDS, ModuleDiff
from hlodiff.graph.canonical import CanonicalComputation, CanonicalModule
from hlodiff.render.model_explorer_layers import computation_layers

STATUSES = ("unchanged", "changed", "only_left", "only_right")

STATUS_COLORS = {"unchanged": "#e8eaed", "changed": "#fbbc04", "only_left": "#f28b82", "only_right": "#81c995"}
"""Node background per status (node-data overlay ``status``): grey, amber, red (A only), green (B only)."""

STATUS_LABELS = {"unchanged": "unchanged", "changed": "changed", "only_left": "only in A", "only_right": "only in B"}

CAUSE_COLORS = {
    "reordered": "#c5cae9", "shape": "#f6a04d", "dtype": "#ce93d8", "layout": "#80deea", "constant": "#fff176",
    "attribute": "#ffcc80", "inputs": "#a5d6a7", "outputs": "#90caf9", "ops": "#ef9a9a", "partial": "#bcaaa4",
    "sharding": "#b39ddb", "aliasing": "#b0bec5", "compile_options": "#b0bec5", "weak_type": "#b0bec5",
    "static_argument": "#b0bec5", "cache_key": "#b0bec5",
}
"""Node background per cause kind (overlay ``cause``); the other differing nodes of its region get
:data:`REGION_COLOR`."""

REGION_COLOR = "#fde7a9"
LAYER_BORDER = {"changed": "#e37400", "only_left": "#d93025", "only_right": "#188038"}
FILES = {"graph_a": "hlodiff_A.json", "graph_b": "hlodiff_B.json", "status": "hlodiff_status.json",
         "cause": "hlodiff_cause.json"}
"""One model file per side (Model Explorer applies an overlay to the first graph it shows of each model, so A and B
are two models) and one file per overlay, holding both graphs' node data by graph id."""


# -- statuses and ids ----------------------------------------------------------------------------------------------


@dataclass
class SideView:
    """One side's nodes: status, node id and cause label per (computation, instruction)."""

    cm: CanonicalModule
    status: dict[tuple[str, str], str] = field(default_factory=dict)
    ids: dict[tuple[str, str], str] = field(default_factory=dict)
    cause: dict[tuple[str, str], str] = field(default_factory=dict)


def side_views(diff: ModuleDiff) -> tuple[SideView, SideView]:
    """Statuses from the matched computation pairs; computations the differ did not open (equal callees) inherit
    their first caller's status when it is one-sided, else are unchanged."""
    cds = diff.computations
    left, right = SideView(cds[0].lcm), SideView(cds[0].rcm)
    partner: dict[tuple[str, str], tuple[str, str]] = {}
    for cd in cds:
        lc, rc = cd.left.name, cd.right.name
        for lname, rname in cd.matching.l2r.items():
            status = "changed" if (lname, rname) in cd.changes else "unchanged"
            left.status[(lc, lname)] = right.status[(rc, rname)] = status
            partner[(rc, rname)] = (lc, lname)
        for lname in cd.left.insts:
            left.status.setdefault((lc, lname), "only_left")
        for rname in cd.right.insts:
            right.status.setdefault((rc, rname), "only_right")
    partner.update(_equal_callees(cds))
    for view, one_side in ((left, "only_left"), (right, "only_right")):
        _inherit(view, one_side)
    _assign_ids(left, right, partner)
    _causes(diff, left, right)
    _partner_causes(left, right, partner)
    return left, right


def _equal_callees(cds) -> dict[tuple[str, str], tuple[str, str]]:
    """Instructions of equal computations called by matched instructions (a reduce's adder, an unchanged loop
    body), paired by position: equal hashes mean the same instructions in the same order."""
    lcm, rcm = cds[0].lcm, cds[0].rcm
    done = {(cd.left.name, cd.right.name) for cd in cds}
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    queue = deque((cd.left.insts[a], cd.right.insts[b]) for cd in cds for a, b in cd.matching.l2r.items())
    while queue:
        li, ri = queue.popleft()
        for lc, rc in zip(li.called_computation_names(), ri.called_computation_names()):
            if (lc, rc) in done or lc not in lcm.computations or rc not in rcm.computations \
                    or lcm.computation_hashes.get(lc) != rcm.computation_hashes.get(rc):
                continue
            done.add((lc, rc))
            lcc, rcc = lcm.computations[lc], rcm.computations[rc]
            if len(lcc.insts) != len(rcc.insts):
                continue
            for (ln, la), (rn, ra) in zip(lcc.insts.items(), rcc.insts.items()):
                pairs[(rc, rn)] = (lc, ln)
                queue.append((la, ra))
    return pairs


def _inherit(view: SideView, one_side: str) -> None:
    cm = view.cm
    status_of = {cm.entry.name: None}
    queue = deque([cm.entry.name])
    while queue:
        cc = cm.computations[queue.popleft()]
        for name, inst in cc.insts.items():
            key = (cc.name, name)
            if key not in view.status:
                view.status[key] = status_of[cc.name] or "unchanged"
            for callee in inst.called_computation_names():
                if callee in cm.computations and callee not in status_of:
                    status_of[callee] = one_side if view.status[key] == one_side else None
                    queue.append(callee)


def _assign_ids(left: SideView, right: SideView, partner: dict) -> None:
    """A: the instruction name (with its computation when a name repeats); B: its partner's id when matched, else
    its own name unless A uses it (then ``B:name``), so equal ids mean matched instructions."""
    for view in (left, right):
        counts = Counter(name for _, name in view.status)
        view.ids = {(c, n): n if counts[n] == 1 else f"{n}@{c}" for c, n in view.status}
    taken = set(left.ids.values())
    own = right.ids
    ids = {}
    for key, name in own.items():
        mate = partner.get(key)
        ids[key] = left.ids[mate] if mate in left.ids else (name if name not in taken else f"B:{name}")
    right.ids = ids


def _partner_causes(left: SideView, right: SideView, partner: dict) -> None:
    """A changed node whose side shows no cause near it (the root tuple of the side without the new output) takes
    its partner's label."""
    for rkey, lkey in partner.items():
        a, b = left.cause.get(lkey), right.cause.get(rkey)
        if a == NO_CAUSE and b is not None:
            left.cause[lkey] = b
        elif b == NO_CAUSE and a is not None:
            right.cause[rkey] = a


def _causes(diff: ModuleDiff, left: SideView, right: SideView) -> None:
    """Each cause's instructions carry its kind (the first cause in report order wins); every other node that
    differs carries the kind of the nearest cause in its connected region of change, marked ``(same region)``."""
    for view, pick in ((left, 0), (right, 1)):
        by_name = {n: (c, n) for c, n in view.status}
        for cause in diff.causes:
            for pair in cause.instructions:
                key = by_name.get(pair[pick]) if pair[pick] else None
                if key is not None and view.status[key] != "unchanged":
                    view.cause.setdefault(key, cause.kind)
        found = {}
        for comp, cc in view.cm.computations.items():
            for name in cc.insts:
                key = (comp, name)
                if view.status.get(key) not in (None, "unchanged") and key not in view.cause:
                    found[key] = _nearest_cause(view, cc, comp, name)
        view.cause.update(found)
        _callee_causes(view)


def _callee_causes(view: SideView) -> None:
    """Instructions inside a computation called only by a differing instruction (the adder of a removed reduce)
    have no cause near them in their own computation: they take their caller's."""
    cm = view.cm
    seen, queue = {cm.entry.name}, deque([cm.entry.name])
    while queue:
        cc = cm.computations[queue.popleft()]
        for name, inst in cc.insts.items():
            label = view.cause.get((cc.name, name))
            for callee in inst.called_computation_names():
                if callee not in cm.computations or callee in seen:
                    continue
                seen.add(callee)
                queue.append(callee)
                if label is None or label == NO_CAUSE:
                    continue
                inherited = label if label.endswith(REGION) else label + REGION
                for inner in cm.computations[callee].insts:
                    if view.cause.get((callee, inner)) == NO_CAUSE:
                        view.cause[(callee, inner)] = inherited


REGION = " (same region)"
NO_CAUSE = "no cause"


def _nearest_cause(view: SideView, cc: CanonicalComputation, comp: str, start: str, limit: int = 512) -> str:
    """Breadth first through differing neighbours (operands and users): the closest cause's kind."""
    seen, queue = {start}, deque([*cc.operands.get(start, ()), *cc.users(start)])
    while queue and len(seen) < limit:
        name = queue.popleft()
        if name in seen:
            continue
        seen.add(name)
        kind = view.cause.get((comp, name))
        if kind is not None:
            return kind + REGION
        if view.status.get((comp, name)) not in (None, "unchanged"):
            queue.extend(cc.operands.get(name, ()))
            queue.extend(cc.users(name))
    return NO_CAUSE


# -- JSON --------------------------------------------------------------------------------------------------------


@dataclass
class ExplorerInput:
    """What Model Explorer loads: a graph collection per side and the two node-data overlays, as JSON-ready dicts."""

    graph_a: dict
    graph_b: dict
    status: dict
    cause: dict
    graph_ids: tuple[str, str]


def explorer_input(diff: ModuleDiff, left_ref: str, right_ref: str) -> ExplorerInput:
    """Graphs and overlays for ``diff`` (built with the cyclic collector paused: 60K small dicts for a big pair)."""
    from hlodiff._runtime import paused_gc

    with paused_gc():
        return _explorer_input(diff, left_ref, right_ref)


def _explorer_input(diff: ModuleDiff, left_ref: str, right_ref: str) -> ExplorerInput:
    left, right = side_views(diff)
    ids = (f"A: {left_ref}", f"B: {right_ref}")
    status = {gid: _overlay(view, lambda k, v=view: STATUS_LABELS[v.status[k]],
                            lambda k, v=view: STATUS_COLORS[v.status[k]]) for gid, view in zip(ids, (left, right))}
    cause = {gid: _overlay(view, lambda k, v=view: v.cause.get(k),
                           lambda k, v=view: _cause_color(v.cause.get(k))) for gid, view in zip(ids, (left, right))}
    return ExplorerInput({"label": ids[0], "graphs": [_graph(ids[0], left)]},
                         {"label": ids[1], "graphs": [_graph(ids[1], right)]}, status, cause, ids)


def _cause_color(label: str | None) -> str:
    return CAUSE_COLORS.get(label, REGION_COLOR) if label else REGION_COLOR


def _overlay(view: SideView, value, color) -> dict:
    """One graph's node data: a string value (Model Explorer shows it as the label of the colour) and a colour."""
    results = {}
    for key in view.status:
        text = value(key)
        if text is not None:
            results[view.ids[key]] = {"value": text, "bgColor": color(key)}
    return {"results": results, "showExpandedSummaryOnGroupNode": True,
            "showLabelCountColumnsInChildrenStatsTable": True}


def _graph(graph_id: str, view: SideView) -> dict:
    cm = view.cm
    layers = computation_layers(cm)
    nodes = []
    marks: dict[str, Counter] = {}
    for comp, per_inst in layers.items():
        cc = cm.computations[comp]
        for name, inst in cc.insts.items():
            key = (comp, name)
            path = per_inst[name]
            status = view.status.get(key, "unchanged")
            if status != "unchanged":
                kind = view.cause.get(key, NO_CAUSE).removesuffix(REGION)
                for depth in range(1, len(path) + 1):
                    counts = marks.setdefault("/".join(path[:depth]), Counter())
                    counts[status] += 1
                    counts["cause:" + kind] += 1
            nodes.append(_node(view, cc, key, inst, "/".join(path), status))
    graph = {"id": graph_id, "nodes": nodes}
    if marks:
        graph["groupNodeAttributes"] = {ns: {"hlodiff": _layer_summary(c)} for ns, c in sorted(marks.items())}
        graph["groupNodeConfigs"] = _layer_configs(marks)
    return graph


def _node(view: SideView, cc: CanonicalComputation, key: tuple[str, str], inst, namespace: str, status: str) -> dict:
    comp, name = key
    meta = view.cm.metadata(inst)
    shape = str(inst.shape)
    attrs = [("name", name), ("computation", comp), ("shape", shape), ("status", STATUS_LABELS[status])]
    if key in view.cause:
        attrs.append(("cause", view.cause[key]))
    if meta.op_name:
        attrs.append(("op_name", meta.op_name))
    frames = view.cm.frames(inst)
    if frames:
        mine = next((f for f in frames if not f.is_library), frames[0])
        attrs.append(("source", mine.where))
    ids = view.ids
    edges = []
    for pos, operand in enumerate(cc.operands.get(name, ())):
        source = ids.get((comp, operand))
        if source is not None:
            edges.append({"sourceNodeId": source, "sourceNodeOutputId": "0", "targetNodeInputId": str(pos)})
    return {"id": ids[key], "label": inst.opcode, "namespace": namespace,
            "attrs": [{"key": k, "value": v} for k, v in attrs], "incomingEdges": edges,
            "outputsMetadata": [{"id": "0", "attrs": [{"key": "tensor_shape", "value": shape}]}]}


def _layer_summary(counts: Counter) -> str:
    """``3 changed, 1 only in B (shape, outputs)``: what differs inside a layer and why."""
    kinds = [k.removeprefix("cause:") for k in counts if k.startswith("cause:")]
    kinds.sort(key=lambda k: (CAUSE_KINDS.index(k) if k in CAUSE_KINDS else len(CAUSE_KINDS), k))
    return ", ".join(f"{counts[s]} {STATUS_LABELS[s]}" for s in STATUSES if counts.get(s)) + f" ({', '.join(kinds)})"


def _layer_configs(marks: dict[str, Counter]) -> list[dict]:
    """One config per border colour, matching every layer holding such a change (a regex alternation: one test per
    group, however many layers changed). A layer with changed nodes is amber, else red or green for one side."""
    by_colour: dict[str, list[str]] = {}
    for ns, counts in sorted(marks.items()):
        status = "changed" if counts.get("changed") else "only_left" if counts.get("only_left") else "only_right"
        by_colour.setdefault(LAYER_BORDER[status], []).append(ns)
    return [{"namespaceRegex": "^(?:" + "|".join(_js_escape(ns) for ns in names) + ")$", "borderColor": colour}
            for colour, names in by_colour.items()]


def _js_escape(text: str) -> str:
    """Escape for a JavaScript RegExp (Python's re.escape escapes more than JavaScript's unicode mode allows)."""
    return re.sub(r"[\\^$.|?*+()\[\]{}/]", lambda m: "\\" + m.group(0), text)


def ui_state(data: ExplorerInput) -> dict:
    """Model Explorer's URL state: graph A in the left pane, graph B in the right, node ids synced."""
    panes = [{"deepestExpandedGroupNodeIds": [], "selectedNodeId": "", "selectedGraphId": gid,
              "selectedCollectionLabel": gid, "widthFraction": 0.5, "selected": i == 0, "flattenLayers": False}
             for i, gid in enumerate(data.graph_ids)]
    return {"paneStates": panes}


def write_explorer_files(data: ExplorerInput, folder: str, inputs=None) -> dict[str, str]:
    """Write the four JSON files into ``folder`` (created when missing); never over a file the run reads."""
    from hlodiff.render.write import Inputs, write_text

    os.makedirs(folder, exist_ok=True)
    paths = {}
    for what, doc in (("graph_a", data.graph_a), ("graph_b", data.graph_b), ("status", data.status),
                      ("cause", data.cause)):
        path = os.path.join(folder, FILES[what])
        write_text(path, json.dumps(doc, ensure_ascii=False, separators=(",", ":")), inputs or Inputs(),
                   "Model Explorer file")
        paths[what] = path
    return paths
