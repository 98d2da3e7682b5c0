"""Name the shape of a family's compilations the way users describe it: warm-up, alternating, unbounded."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hlodiff.explain.families import Family


def describe_pattern(family: "Family", recompilations) -> str:
    members = family.members
    keys = [g.cache_key for g in members]
    compiled_at = [i for i, g in enumerate(members) if g.compiled]
    n = len(members)
    because = _because(family, recompilations)
    if len(compiled_at) <= 1:
        return f"steady: {family.label} compiled once in {n} graph{'s' if n != 1 else ''}"
    letters = _letters(keys)
    sequence = ",".join(letters[:10]) + (",..." if n > 10 else "")
    last = compiled_at[-1]
    tail = set(keys[last:])
    if all(g.record.kind == "xla_dump" for g in members):  # XLA dumps only what it compiles: no hits to see
        return f"{len(compiled_at)} compilations of {family.label} ({sequence}){because}"
    if last <= 2 and len(tail) == 1 and n - last >= 2 and compiled_at == list(range(last + 1)):
        first = "the first graph differs" if last == 1 else f"the first {last} graphs differ"
        return f"warm-up only: at {family.label} {first}, then steady ({sequence}){because}"
    if len(compiled_at) == n and n >= 3:
        return f"unbounded: a new graph every time at {family.label}, {n} compilations ({sequence}){because}"
    recurring = [k for k in set(keys) if keys.count(k) >= 2]
    switches = sum(1 for a, b in zip(keys, keys[1:]) if a != b)
    if len(recurring) >= 2 and switches >= 3:
        return f"alternating: {family.label} switches between {len(set(keys))} graphs ({sequence}){because}"
    return f"{len(compiled_at)} compilations in {n} graphs of {family.label} ({sequence}){because}"


def _letters(keys: list[str]) -> list[str]:
    names: dict[str, str] = {}
    alphabet = string.ascii_uppercase
    out = []
    for key in keys:
        if key not in names:
            i = len(names)
            names[key] = alphabet[i] if i < 26 else f"G{i}"
        out.append(names[key])
    return out


def _because(family: "Family", recompilations) -> str:
    """The family's most common leading cause and its first line, e.g. " (outputs at train.py:10)".

    Most common, not first: a tensor that grows every step differs in structure from step 0 to 1 (torch_xla
    lowers a one-element tensor its own way) and in shape from then on; the user wants to hear "shape".
    """
    leading = [r.causes[0] for r in recompilations if r.family is family and r.causes]
    if not leading:
        return ""
    counts: dict[str, int] = {}
    for cause in leading:
        counts[cause.kind] = counts.get(cause.kind, 0) + 1
    kind = max(counts, key=lambda k: (counts[k], -[c.kind for c in leading].index(k)))
    cause = next(c for c in leading if c.kind == kind)
    where = cause.locations[0] if cause.locations else None
    at = f" at {where.file.rsplit('/', 1)[-1]}:{where.line}" if where and where.line is not None else ""
    return f" ({kind}{at})"
