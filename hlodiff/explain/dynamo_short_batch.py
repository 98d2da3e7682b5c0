"""Whether a short batch under torch.compile was the run's last: Dynamo's log says only that no later
recompilation came, which a short batch mid-run that full batches followed also satisfies (their entry was cached).

The XLA side knows: with torch_xla's execution log, the graphs after the short batch's are cache hits of the graph
it was compared with (the full size ran again) and never its own (the short size came once). Then "the last batch is short ... drop_last" sends the user the
wrong way: rows filtered out of one batch, a shard's uneven batch (the tenth stop's lead47_d_filtered_batch).
"""

from __future__ import annotations


def full_size_again(explanation, recompilation) -> bool:
    """A graph after ``recompilation``'s ran the cache key of the graph it was compared with (the earlier size came
    back) and none ran its own again (the short size came once: an epoch's remainder recurs every epoch, and
    drop_last answers that one: dyn_last_batch_static). False without executions (a dump alone lists
    compilations only)."""
    closest = recompilation.closest
    if closest is None:
        return False
    own = recompilation.graph.first_ref
    later = full = False
    for g in explanation.graphs:
        if g.ref == recompilation.graph.ref:
            later = True
        elif later and not g.compiled and g.first_ref == own:
            return False
        elif later and not g.compiled and g.first_ref == closest.first_ref:
            full = True
    return full
