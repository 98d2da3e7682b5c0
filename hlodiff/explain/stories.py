"""One story per root: recompilations of one family that share their root cause are told once.

A KV cache that grows every decoding step compiles a new graph each step, and each recompilation has the same root
(a shape at the same line); five identical blocks hide the one fact that matters: the value keeps changing. A story
groups them and keeps the sequence of values the root took (the cache length 6, 7, 8, ...), so the report can say
"grows by 1 every step" and tell the first recompilation in full, the rest one line each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.diff.fix_rules import EXPECTED as EXPECTED_FIXES
from hlodiff.diff.model import Cause
from hlodiff.hlo.literal import integer, size
from hlodiff.hlo.model import SourceFrame


@dataclass(frozen=True, slots=True)
class Trend:
    """Numeric values that change by the same amount each time (``by`` > 0 grows, < 0 shrinks); ``every_step``:
    the recompilations came on consecutive steps."""

    by: int
    every_step: bool


@dataclass(frozen=True, slots=True)
class Story:
    """Recompilations of one family sharing a root (its line, or its kind when it has none), in run order.

    ``lead`` is the recompilation told in full (the first whose root has the story's kind); ``values`` the value
    the root took, in run order (the changing dimension of a shape, a constant's literal, an element type), first
    the earliest graph's, then each recompilation's; ``what`` names that value (``size``, ``value``, ``type``).
    """

    family: str
    kind: str
    location: SourceFrame | None
    recompilations: tuple[str, ...]
    lead: str
    values: tuple[str, ...] = ()
    what: str = ""
    trend: Trend | None = None

    def to_json(self) -> dict:
        return {"family": self.family, "kind": self.kind,
                "location": self.location.to_json() if self.location else None,
                "recompilations": list(self.recompilations), "lead": self.lead, "values": list(self.values),
                "value_kind": self.what or None,
                "trend": {"by": self.trend.by, "every_step": self.trend.every_step} if self.trend else None}


def tell(recompilations, steps: dict[str, int]) -> list[Story]:
    """Stories in the order of their first recompilation; ``steps`` maps graph refs to their step."""
    groups: dict[tuple, list] = {}
    for r in recompilations:
        if not r.causes:
            continue
        groups.setdefault(_key(r), []).append(r)
    stories = [_story(members, steps) for members in groups.values()]
    first = {r.graph.ref: i for i, r in enumerate(recompilations)}
    stories.sort(key=lambda s: first[s.recompilations[0]])
    return stories


def _key(r) -> tuple:
    """Family, root line (or kind), and whether the root's fix calls it expected: an optimizer's warm-up and a later
    change inside the same `opt.step()` line share a line, not a root (review 2, F2)."""
    root = r.causes[0]
    where = root.locations[0] if root.locations else None
    return (r.family.key, (where.file, where.line) if where is not None else root.kind,
            root.fix_rule in EXPECTED_FIXES)


def _story(members: list, steps: dict[str, int]) -> Story:
    kinds = [r.causes[0].kind for r in members]
    kind = max(dict.fromkeys(kinds), key=kinds.count)  # most common; the first seen on a tie
    lead = next(r for r in members if r.causes[0].kind == kind)
    root = lead.causes[0]
    what, values = _values([r.causes[0] for r in members if r.causes[0].kind == kind])
    told = [r for r in members if r.causes[0].kind == kind]
    trend = _trend(values, [steps.get(r.graph.ref) for r in told]) if len(told) >= 2 else None
    if trend is not None and _comes_back(members[0].family):
        trend = None  # 0, 1, 2 then 0, 1 again (step % 3): a cycle, not a value that grows
    return Story(members[0].family.label, kind, root.locations[0] if root.locations else None,
                 tuple(r.graph.ref for r in members), lead.graph.ref, values, what, trend)


def _comes_back(family) -> bool:
    """A graph of the family runs again after another one ran: its values recur, whatever their order so far."""
    keys = [g.cache_key for g in getattr(family, "members", ())]
    runs = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    return len(runs) > len(set(runs))


def _values(roots: list[Cause]) -> tuple[str, tuple[str, ...]]:
    """The value each root's first changed instruction took: left of the first, then each right."""
    pairs = [p for c in roots if (p := _pair(c)) is not None]
    if len(pairs) != len(roots) or not pairs:
        return "", ()
    what = pairs[0][0]
    if any(p[0] != what for p in pairs):
        return "", ()
    values = [pairs[0][1]] + [p[2] for p in pairs]
    if any(a[2] != b[1] for a, b in zip(pairs, pairs[1:])):  # not a chain: each against another earlier graph
        values = [p[2] for p in pairs]
    return what, tuple(values)


_DIMS = re.compile(r"\[([^\]]*)\]")


def _pair(cause: Cause) -> tuple[str, str, str] | None:
    change = next((c for c in cause.origins if c.left is not None and c.right is not None), None)
    if change is None:
        return None
    if cause.kind == "shape":
        a, b = _dims(change.left.shape), _dims(change.right.shape)
        if a is None or b is None or len(a) != len(b):
            return None
        differ = [k for k in range(len(a)) if a[k] != b[k]]
        return ("size", a[differ[0]], b[differ[0]]) if len(differ) == 1 else None
    if cause.kind == "constant" and "literal" in change.details:
        before, after = change.details["literal"]
        return "value", before, after
    if cause.kind == "dtype":
        return "type", change.left.shape.split("[", 1)[0], change.right.shape.split("[", 1)[0]
    return None


def _dims(shape: str) -> list[str] | None:
    m = _DIMS.search(shape)
    return [d.strip() for d in m.group(1).split(",") if d.strip()] if m else None


def _trend(values: tuple[str, ...], steps: list[int | None]) -> Trend | None:
    numbers = [size(v) if v.lstrip().startswith("<=") else integer(v) for v in values]
    if None in numbers or len(numbers) < 3:
        return None
    deltas = {b - a for a, b in zip(numbers, numbers[1:])}
    if len(deltas) != 1 or 0 in deltas:
        return None
    known = [s for s in steps if s is not None]
    every = len(known) == len(steps) and all(b - a == 1 for a, b in zip(known, known[1:]))
    return Trend(deltas.pop(), every)
