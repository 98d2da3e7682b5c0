"""Inputs of a compiled call drawn on the device and never synced: the bridge's input graph grows every call.

``compiled(torch.randn(4, 12, device=dev))`` in a loop with no ``torch_xla.sync()``: each random draw advances
torch_xla's device seed as one more update of a lazy value (``seed * 214013 + 2531011``, reset only by a full sync),
and torch_xla's Dynamo bridge syncs just the tensors passed to the call (``_xla_sync_multi`` of the inputs that need
materializing, ``torch_xla/_dynamo/dynamo_bridge.py``'s ``optimized_mod``), so the input's graph holds one more seed
update every call: a new XLA compilation per call, though Dynamo traced once (review 10 F1: 10 calls, 11
compilations; a sync after the input, 3). The graphs' recompilations get their row (``dynamo_bridge_lazy_random_input``,
from :func:`hlodiff.explain.dynamo_bridge_words.bridge_consequences`); this module makes them one finding of
Dynamo's story, beside the failed guards, so it heads the report instead of "expected ... nothing to fix".
"""

from __future__ import annotations

from hlodiff.dumps.dynamo_log import GuardFailure
from hlodiff.explain.dynamo_types import DynamoFindings, DynamoRecompile, compiled_name

ROW = "dynamo_bridge_lazy_random_input"
WHAT = "no guard failed: the bridge's sync of the call's inputs holds one more random-seed update every call"
"""The finding's ``guard`` text: no guard of Dynamo's is behind it."""


def random_inputs(explanation, found: DynamoFindings, traced) -> tuple[list[DynamoRecompile], list[str]]:
    """One finding for the bridge's recompilations led by the row ``dynamo_bridge_lazy_random_input`` (none
    without them), at the user's line of the first, and the graphs their family compiled (the first of them is
    no recompilation of its family when the first call's input was synced while Dynamo compiled: another
    family's graph, reused by the second call)."""
    told = set(found.bridge_recompilations)
    grown = [r for r in explanation.recompilations
             if r.graph.ref in told and r.causes and r.causes[0].fix_rule == ROW]
    if not grown:
        return [], []
    lead = grown[0].causes[0]
    user = next((loc for r in grown for c in r.causes for loc in c.locations if not loc.is_library), None)
    first = traced[0] if traced else None
    refs = [g.ref for g in grown[0].family.compiled]
    finding = DynamoRecompile(first.compile_id if first else "0/0", compiled_name(first) if first else None, "ops",
                              GuardFailure(None, WHAT), user,
                              facts=frozenset({"dynamo", "bridge_graph", "rng_seed_update"}),
                              seen=f"{len(refs)} graph{'s' if len(refs) != 1 else ''}: "
                                   + ", ".join("#" + ref.rsplit("#", 1)[-1] for ref in refs),
                              located="xla" if user is not None else None)
    finding.xla, finding.difference, finding.difference_graph = "compiled", lead.summary, grown[0].graph.ref
    finding.difference_kind, finding.difference_rule = lead.kind, ROW
    finding.fix, finding.fix_rule = lead.fix, ROW
    return [finding], refs
