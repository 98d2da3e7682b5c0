"""An XLA headline that is Dynamo's size guard again: the same numbers, one cause.

Review 23 F6 (d2, beam search under torch.compile): Dynamo's guard on ``h`` (dim 0: 4, 2, 3, the number of beams)
heads with "pad every batch to one fixed size", and the XLA graphs' own headline came under it as a second
top-level fix ("topk's k changes (4, 2, 3) ... take topk with one fixed k"), as if the run had two causes. Both
sizes are ``num_beams``: when the sizes Dynamo's guard saw are the sizes the XLA headline's size took, the XLA side
is told as following from the guard, with no fix of its own.
"""

from __future__ import annotations

import re

_NUMBERS = re.compile(r"-?\d+")


def guard_sizes(head) -> frozenset[int]:
    """The sizes a Dynamo size guard saw (``seen`` is ``dim 0 of h: 4, 2, 3``), else empty."""
    if head is None or getattr(head, "kind", None) != "shape" or ":" not in (getattr(head, "seen", "") or ""):
        return frozenset()
    return frozenset(int(n) for n in _NUMBERS.findall(head.seen.rsplit(":", 1)[1]))


def xla_sizes(r) -> frozenset[int]:
    """The sizes the XLA headline's changed size took (its plan's values), else empty."""
    if r is None or not r.causes or r.causes[0].kind != "shape" or getattr(r.causes[0], "plan", None) is None:
        return frozenset()
    return frozenset(v["size"] for v in r.causes[0].plan.to_json().get("values", ()) if isinstance(v.get("size"), int))


def same_sizes(dynamo, r) -> frozenset[int]:
    """The sizes, when Dynamo's headline is a size guard whose sizes (two or more) are exactly the XLA headline's:
    one cause told twice; else empty."""
    seen = guard_sizes(getattr(dynamo, "headline", None) if dynamo is not None else None)
    return seen if len(seen) >= 2 and seen == xla_sizes(r) else frozenset()
