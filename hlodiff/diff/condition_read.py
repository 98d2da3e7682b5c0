"""A value read to the host that is a condition: the graph torch_xla ran early for it hands back booleans of one
element only (``pred[]``).

``if not torch.isfinite(loss).item():``, ``if loss > 4.0:`` and ``bool(t)`` all read a comparison's result; nothing
but a Python ``if`` (or ``while``) has use for a lone boolean on the host. The value decides what the step does
(skip the optimizer step on a non-finite loss: new-user review 13, F1), so it cannot wait until the step has run:
reading it after the sync, or in ``xm.add_step_closure`` (run once the step executed), can no longer gate the update.
A value read for logging comes back as a number (``f32[]``), and keeps the "read it later" advice. The fact is read
from the early graph's output shapes alone, so ``explain-recompile``, the live lines and ``cost`` see the same one.
"""

from __future__ import annotations

from typing import Iterable


def condition_shapes(shapes: Iterable[object]) -> bool:
    """Every output of the graph run early is a one-element boolean (``pred[]``), and there is one at least."""
    texts = [str(s) for s in shapes]
    return bool(texts) and all(t.startswith("pred[]") for t in texts)
