"""A compiled model converted to another float type after torch.compile traced it (Dynamo round 28,
d28_to_bf16_midrun: `net.to(torch.bfloat16)` at step 3).

Dynamo keeps no guard on a compiled module's parameters under the openxla backend (they are inputs: only the call's
own tensors are guarded), so it traces nothing again, and torch_xla's bridge runs the graph it extracted for the old
type on the converted weights: the run stops at the next sync ("Executable expected parameter 0 of size 16 but got
buffer with incompatible size 8"), or computes in the old type. No recompilation is logged anywhere; what the
capture holds is the conversion itself: one graph whose every operation converts a tensor the bridge holds (its
``xla__device_data`` made in dynamo_bridge.py) to another float type in torch's ``Module._apply`` (module.py), after
the bridge compiled Dynamo's graph and with no compile of Dynamo's graph after it. Its line is read from the source
on disk: the one call converting to that type (``.to(torch.bfloat16)``, ``.bfloat16()``, ``.half()``).

The same conversion graph comes from a converted copy (``copy.deepcopy(net).to(torch.bfloat16)`` for an export,
its state_dict moved to the CPU): the compiled model keeps its weights and the run goes on, the bridge's program
executing step after step. So the finding also needs the run to stop at the next call: after the conversion, at
most one execution, of the bridge's program (thirteenth stop's last read).
"""

from __future__ import annotations

from hlodiff.dumps.dynamo_log import GuardFailure
from hlodiff.explain.dynamo_recompile_fixes import choose_fix
from hlodiff.explain.dynamo_types import DynamoRecompile
from hlodiff.hlo.model import SourceFrame

CONVERSIONS = {"bf16": ("to(bfloat16)", "bfloat16"), "f16": ("to(float16)", "to(half)", "half"),
               "f64": ("to(float64)", "to(double)", "double"), "f32": ("to(float32)", "float")}
"""Per element type, the calls that convert a module to it (:func:`hlodiff.dumps.python_calls.calls_named`'s
names: ``to(bfloat16)`` is ``.to(torch.bfloat16)`` or ``.to(dtype=torch.bfloat16)``)."""

TYPE_NAMES = {"bf16": "bfloat16", "f16": "float16", "f64": "float64", "f32": "float32"}


def _meta(inst) -> str:
    return inst.attrs.get("metadata", "")


def conversion_of(graph) -> tuple[str, str] | None:
    """(from, to) element types when the graph only converts tensors the bridge holds to one other float type in
    torch's Module._apply (module.py); else None."""
    cm = getattr(graph, "_canonical", None)
    if cm is None:
        return None
    entry = cm.module.entry
    params = {i.name: i for i in entry.instructions if i.opcode == "parameter"}
    converts = [i for i in entry.instructions if i.opcode == "convert"]
    rest = [i for i in entry.instructions if i.opcode not in ("parameter", "convert", "tuple")]
    if rest or not converts or not params:
        return None
    if not all("dynamo_bridge.py" in _meta(p) for p in params.values()):
        return None
    pairs = set()
    for c in converts:
        if len(c.operands) != 1 or c.operands[0] not in params or "torch/nn/modules/module.py" not in _meta(c):
            return None
        pairs.add((params[c.operands[0]].shape.element_type, c.shape.element_type))
    if len(pairs) != 1:
        return None
    (before, after), = pairs
    return (before, after) if before != after and after in TYPE_NAMES and before in TYPE_NAMES else None


def _stopped_at_next_call(after, graphs, compiled: list[int]) -> bool:
    """The run ended at the first call after the conversion: nothing after it but (at most) one execution of the
    bridge's program, the call whose sync failed ("Executable expected parameter ... incompatible size"); a run
    that goes on executing is one whose compiled model was not converted (a copy was)."""
    bridge_keys = {graphs[c].cache_key for c in compiled}
    return len(after) <= 1 and all(g.cache_key in bridge_keys for g in after)


def converted_after_compile(explanation, found, sources, files: list[str]) -> list[DynamoRecompile]:
    """One finding for the first such conversion after the bridge compiled Dynamo's graph, when the bridge compiled
    no graph of Dynamo's after it (a retrace would have traced the new type)."""
    fx = set(found.fx_compilations) or set(found.bridge_compilations)
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    compiled = sorted(at[ref] for ref in fx if ref in at)
    if not compiled:
        return []
    for i, g in enumerate(explanation.graphs):
        if i < compiled[0] or any(c > i for c in compiled):
            continue
        pair = conversion_of(g)
        if pair is None or not _stopped_at_next_call(explanation.graphs[i + 1:], explanation.graphs, compiled):
            continue
        before, after = pair
        lines = sorted({(f, n) for f in files for n in sources.calls_named(f, CONVERSIONS[after])})
        location = SourceFrame(lines[0][0], lines[0][1], "<module>") if len(lines) == 1 else None
        seen = f"{TYPE_NAMES[before]} -> {TYPE_NAMES[after]}"
        guard = GuardFailure(None, f"no guard failed: the compiled module's parameters were converted {seen} after "
                                   "compiling (Dynamo guards no parameter's type here)")
        r = DynamoRecompile("-", None, "dtype", guard, location, subject=None,
                            facts=frozenset({"dynamo", "converted_after_compile"}), seen=seen,
                            located="decision" if location else None)
        r.difference_graph, r.xla = g.ref, "compiled"
        choose_fix(r)
        return [r]
    return []
