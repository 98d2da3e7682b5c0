"""Dynamo's caches emptied mid-run (``torch._dynamo.reset()`` in the loop, Dynamo round 9): the same function is
compiled again under a compile id it had already finished (``0/0`` of ``loss_fn``, then ``0/0`` again). No guard
failed, so ``TORCH_LOGS=recompiles`` prints nothing; a ``TORCH_TRACE`` log shows it (its ``dynamo_start`` and
``compilation_metrics`` records, :class:`hlodiff.dumps.dynamo_log.CacheRestart`). XLA's own cache still holds the
bridge's graphs, so what is paid is Dynamo's retrace and the bridge's graph extraction, each time."""

from __future__ import annotations

from hlodiff.dumps.dynamo_log import CacheRestart, GuardFailure
from hlodiff.explain.dynamo_types import DynamoRecompile
from hlodiff.explain.dynamo_recompile_fixes import choose_fix


def cache_resets(restarts: list[CacheRestart]) -> list[DynamoRecompile]:
    """One finding per function compiled from scratch again, at its first restart, counting every restart."""
    by_function: dict[tuple, list[CacheRestart]] = {}
    for r in restarts:
        by_function.setdefault((r.function, r.definition), []).append(r)
    found = []
    for (function, definition), seen in by_function.items():
        first = seen[0]
        times = len(seen) + 1
        guard = GuardFailure(None, f"Dynamo's cache emptied: {function} compiled from scratch as {first.compile_id} "
                                   f"{times} times (no guard failed)")
        location = first.call or definition
        r = DynamoRecompile(first.compile_id, function, "reset", guard, location, subject=function,
                            facts=frozenset({"dynamo", "cache_reset"}),
                            seen=f"{times} times, each as {first.compile_id}",
                            located="call" if first.call else "definition" if definition else None)
        choose_fix(r)
        found.append(r)
    return found
