"""Autograd's anomaly mode in a torch_xla capture: the NaN checks torch_xla compiles inside ``backward()``.

With ``torch.autograd.set_detect_anomaly(True)`` (or ``detect_anomaly()``) autograd checks the outputs of every
backward node for NaN on the host: ``any(isnan(grad))`` read as a Python bool. Each check runs the pending graph up
to that node, so the step is cut into one graph per checked node plus the rest (round 17, r17_tx_detect_anomaly:
11 graphs per step on a 3-layer MLP). torch_xla compiles these inside the op: the PT_XLA_DEBUG log has a Post
Compilation Analysis block for each, without a cause, frames or a graph hash, and logs none of their executions,
cached or not. The dump keeps their modules. Read alone, the log shows one graph per step and a run that looks
steady while every step runs a dozen graphs.

A module is such a check when its entry hands back one ``pred[]`` and its ops include ``aten::isnan`` and
``aten::any`` (the op types torch_xla writes in the metadata), and torch_xla did not announce its compilation (a
user's own ``if torch.isnan(loss).any():`` is announced, with the user's frames, and stays a read).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hlodiff.errors import HlodiffError

if TYPE_CHECKING:
    from hlodiff.dumps.debug_log import CompilationEvent, ExecutionEvent
    from hlodiff.dumps.graph_record import GraphRecord

CHECK_KEY = "autograd-anomaly-check:"
"""The cache key given to a check's records (torch_xla logs no graph hash for them): one key per compiled check."""

_ENTRY_OUT = re.compile(r"^ENTRY\s+%?\S+\s*\(.*\)\s*->\s*\(?\s*pred\[\]\s*\)?\s*\{\s*$", re.M)
_OP_TYPES = ('op_type="aten__isnan"', 'op_type="aten__any"')


def is_anomaly_check(module: "GraphRecord") -> bool:
    """The module's entry returns one ``pred[]`` computed by ``aten::any`` over ``aten::isnan``."""
    try:
        text = module.text()
    except (HlodiffError, OSError):
        return False
    return _ENTRY_OUT.search(text) is not None and all(op in text for op in _OP_TYPES)


def anomaly_checks(compilations: list["CompilationEvent"], modules: list["GraphRecord"]
                   ) -> list[tuple["CompilationEvent", "GraphRecord"]]:
    """The unannounced compilations (paired with the dump's modules in order) that are anomaly-mode NaN checks."""
    return [(event, module) for event, module in zip(compilations, modules)
            if not event.announced and is_anomaly_check(module)]


def checked_steps(checks: list[tuple["CompilationEvent", "GraphRecord"]],
                  executions: list["ExecutionEvent"]) -> dict[str, list["GraphRecord"]]:
    """Graph hash of a step -> the checks that cut it, in compilation order: each check belongs to the first
    execution logged after it compiled (the sync that ran the rest of that backward and the update). Every later
    execution of that graph ran a backward, so the same checks ran before it, from the cache. A step graph compiled
    anew (another shape) gets the checks compiled before its own first run; checks no execution follows are left
    out."""
    found: dict[str, list["GraphRecord"]] = {}
    for event, module in checks:
        after = next((e.graph_hash for e in executions if e.line > event.line and e.graph_hash), None)
        if after is not None and module not in found.setdefault(after, []):
            found[after].append(module)
    return {h: m for h, m in found.items() if m}
