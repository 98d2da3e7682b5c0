"""What cut a step short: a value the user read (``.item()``, ``print``), an op whose output size depends on data, or
an op torch_xla runs on the CPU.

torch_xla runs the pending graph early whenever Python needs a value. ``loss.item()`` and ``print(t)`` read a value
the user asked for; boolean-mask indexing (``logits[keep]``), ``nonzero`` and ``masked_select`` need the mask's
values to know their output's size, so the graph that ran early hands back a boolean tensor of more than one element.
An op with no XLA lowering (``torch.nanmedian``, ``torch.histc``: an aten CPU fallback) runs the graph to hand its
inputs to the host, and the ``out=`` buffers torch_xla allocates for the op's CPU kernel come back with them as
empty arrays (``f32[0]``, ``s64[0]``): no read of the user's makes those (round 11, r11_tx_nanmedian_fallback).
The two need different fixes, so the cut's kind is a typed fact (``Cause.reason`` of the ``partial`` cause), read
from the cut graph's outputs, not guessed from the line. The ``partial`` causes themselves are built here too: the
graph cut short (:func:`partial_cause`), the rest of the step that finishes it (:func:`remainder_cause`), and when a
cut on both sides explains nothing of a difference (:func:`cut_follows`, :func:`same_cut`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hlodiff.diff.library_reads import library_read
from hlodiff.dumps.anomaly_checks import CHECK_KEY
from hlodiff.diff.model import Cause

if TYPE_CHECKING:
    from hlodiff.dumps.debug_log import CompilationEvent
    from hlodiff.explain.inventory import GraphSummary

CUT_REASONS = ("data_dependent", "fallback", "anomaly_check", "read")

_EMPTY = re.compile(r"^[a-z]+[0-9]*\[(?:[0-9]+,)*0(?:,[0-9]+)*\]")
"""An array of no element (``f32[0]{0}``, ``s64[4,0]``): an ``out=`` buffer, not a value anyone reads."""


def cut_reason(cut, compiled: dict | None = None) -> str:
    """``data_dependent`` when the graph that ran early returns a non-scalar ``pred`` tensor (a mask whose values
    decide an output size), ``fallback`` when it returns an empty array (the ``out=`` buffers of an op run on the
    CPU), ``anomaly_check`` for autograd anomaly mode's NaN check (:mod:`hlodiff.dumps.anomaly_checks`: torch_xla
    compiled it inside backward, its key says so), else ``read``. ``compiled`` maps refs to compiled graphs: a cache
    hit is read through the graph it hit."""
    record = getattr(cut, "record", None)
    if (getattr(record, "graph_hash", None) or "").startswith(CHECK_KEY):
        return "anomaly_check"
    cm = getattr(cut, "_canonical", None)
    if cm is None and compiled:
        cm = getattr(compiled.get(cut.first_ref), "_canonical", None)
    if cm is None:
        return "read"
    cc = cm.entry
    empty = False
    for name in cc.outputs():
        inst = cc.insts.get(name)
        if inst is None:
            continue
        text = str(inst.shape)
        if text.startswith("pred[") and not text.startswith("pred[]"):
            return "data_dependent"
        empty = empty or _EMPTY.match(text) is not None
    return "fallback" if empty else "read"


def cut_words(reason: str) -> str:
    if reason == "data_dependent":
        return ("an op whose output size depends on values (boolean-mask indexing, nonzero, masked_select) needed "
                "a mask's values")
    if reason == "anomaly_check":
        return ("autograd's anomaly detection checked a backward value for NaN on the host (any(isnan(...)) read "
                "as a bool inside backward(); torch_xla logs neither its frames nor its executions)")
    if reason == "fallback":
        return ("an op with no XLA lowering ran on the CPU (an aten fallback; it handed back empty out= buffers): the "
                "graph before it ran to pass its inputs to the host")
    return "it reads a value (.item(), print, a Python condition on a tensor)"


def _cut_words(cut: GraphSummary, reason: str) -> str:
    """Why the graph ran early: a library's own read (:mod:`hlodiff.diff.library_reads`) is named, not ".item(),
    print" the user never wrote (review 8: EmbeddingBag's bookkeeping)."""
    row = library_read(cut.record.frames) if reason == "read" else None
    if row is not None:
        return f"{row.call} reads a value on the host inside the library"
    return cut_words(reason)


def cut_follows(graph: GraphSummary, closest: GraphSummary | None, causes: list[Cause], order: dict,
                partial) -> None:
    """An early graph compiled again beside an earlier early graph cut at the same line: the cut is on both sides
    and explains nothing of their difference (review 8, T1: EmbeddingBag's early graph at each new length of the
    ids), so it is no cause of this compilation (its ``partial`` cause leaves ``causes``): what differs (the shape)
    is told. The cut itself is told where it is one, on the graph that finishes the step."""
    at = order.get(id(graph))
    before = order.get(id(closest)) if closest is not None else None
    if (at is None or before is None or at not in partial or before not in partial or len(causes) < 2
            or causes[0].kind != "partial" or graph.trigger is None or graph.trigger != closest.trigger):
        return
    if not graph.record.frames or graph.record.frames != closest.record.frames:
        return  # the same whole stack, library frames too
    if all(p in partial for p in range(before + 1, at)):  # no step ended between them: two cuts of one step
        return  # (clip_grad_norm_'s isnan, then its isinf, from one frame): each cut is a cause
    if not any(not f.is_library and f.line is not None for f in causes[1].locations):
        return  # what differs has no line of the user's (bn_cumulative's 1/n): the cut's line still points there
    del causes[0]


def partial_cause(graph: GraphSummary, closest: GraphSummary, event: CompilationEvent | None) -> Cause:
    trigger = graph.trigger
    how = f" (PT_XLA_DEBUG: {event.cause})" if event is not None and event.cause else ""
    reason = cut_reason(graph)
    summary = (f"graph cut short by an early execution: {graph.instructions} instructions and {graph.outputs} "
               f"output{'s' if graph.outputs != 1 else ''} ran before the step's sync, because "
               f"{_cut_words(graph, reason)}"
               f"{how}")
    return Cause("partial", summary, [trigger] if trigger else [], reason=reason)


def same_cut(remainder_of: dict, graph: GraphSummary, closest: GraphSummary | None,
             compiled: dict[str, GraphSummary]) -> bool:
    """Both graphs finish a step that the same read cut short (``int(lengths.max())`` each step): the cut explains
    nothing of their difference, which comes from the value read (a slice's length taken from it). A mask's early
    run (a data-dependent cut) keeps its story: the cut is what decides the size there."""
    cut, before = remainder_of.get(id(graph)), remainder_of.get(id(closest)) if closest is not None else None
    return (cut is not None and before is not None and cut.cache_key == before.cache_key
            and cut_reason(cut, compiled) in ("read", "fallback"))


def remainder_cause(cut: GraphSummary, compiled: dict[str, GraphSummary]) -> Cause:
    trigger = cut.trigger
    where = f" at {trigger.short()}" if trigger and trigger.line else ""
    reason = cut_reason(cut, compiled)
    row = library_read(cut.record.frames) if reason == "read" else None
    return Cause("partial", f"the rest of a step that an early execution{where} cut short ({cut.ref} ran first, "
                            f"because {_cut_words(cut, reason)}): values it already computed are inputs or missing "
                            "here",
                 [trigger] if trigger else [], reason=reason, library_read=row.name if row is not None else "")
