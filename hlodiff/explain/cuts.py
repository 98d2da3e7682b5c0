"""What cut a step short: a value the user read (``.item()``, ``print``) or an op whose output size depends on data.

torch_xla runs the pending graph early whenever Python needs a value. ``loss.item()`` and ``print(t)`` read a value
the user asked for; boolean-mask indexing (``logits[keep]``), ``nonzero`` and ``masked_select`` need the mask's
values to know their output's size, so the graph that ran early hands back a boolean tensor of more than one element.
The two need different fixes, so the cut's kind is a typed fact (``Cause.reason`` of the ``partial`` cause), read
from the cut graph's outputs, not guessed from the line.
"""

from __future__ import annotations

CUT_REASONS = ("data_dependent", "read")


def cut_reason(cut, compiled: dict | None = None) -> str:
    """``data_dependent`` when the graph that ran early returns a non-scalar ``pred`` tensor (a mask whose values
    decide an output size), else ``read``. ``compiled`` maps refs to compiled graphs: a cache hit is read through
    the graph it hit."""
    cm = getattr(cut, "_canonical", None)
    if cm is None and compiled:
        cm = getattr(compiled.get(cut.first_ref), "_canonical", None)
    if cm is None:
        return "read"
    cc = cm.entry
    for name in cc.outputs():
        inst = cc.insts.get(name)
        if inst is None:
            continue
        text = str(inst.shape)
        if text.startswith("pred[") and not text.startswith("pred[]"):
            return "data_dependent"
    return "read"


def cut_words(reason: str) -> str:
    if reason == "data_dependent":
        return ("an op whose output size depends on values (boolean-mask indexing, nonzero, masked_select) needed "
                "a mask's values")
    return "it reads a value (.item(), print, a Python condition on a tensor)"
