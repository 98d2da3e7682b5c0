"""The verdict on a run, Dynamo's findings included (issue 31): a torch.compile run's XLA recompilations of the
bridge's graphs are judged by Dynamo's reason, not as XLA's own story, and its exit status counts Dynamo's
unexpected recompilations with XLA's outside the bridge. Without Dynamo's findings, :mod:`hlodiff.explain.verdict`
alone.
"""

from __future__ import annotations

from hlodiff.explain.verdict import exit_status, unexpected


def unexpected_told(explanation, warmup: int | None = None) -> list:
    """The recompilations that are not warm-up, setup or JAX eager ops (:mod:`hlodiff.explain.verdict`), less those
    Dynamo's reason tells."""
    found = unexpected(explanation, warmup)
    dynamo = getattr(explanation, "dynamo", None)
    if dynamo is not None:  # issue 31: the bridge's XLA recompilations are judged by Dynamo's reason
        told = (set(dynamo.bridge_recompilations) | set(dynamo.first_call_syncs) | set(dynamo.follows_expected)
                | set(dynamo.compilations_only))
        # review 10 F1: the bridge's input graph grown by an input drawn on the device is the story itself
        told -= set(getattr(dynamo, "random_input_graphs", ()))
        found = [r for r in found if r.graph.ref not in told]
    return found


def following_dynamo(explanation, warmup: int | None = None) -> int:
    """The XLA recompilations that are the bridge's compile after an unexpected Dynamo recompilation: not
    expected, and not counted in :func:`unexpected_told` (Dynamo's line tells them). Review 14, F3: ``record``'s
    last line called them "all expected" under a report that exits 1."""
    dynamo = getattr(explanation, "dynamo", None)
    if dynamo is None:
        return 0
    bridged = (set(dynamo.bridge_recompilations) - set(dynamo.follows_expected)
               - set(getattr(dynamo, "random_input_graphs", ())))  # those are the story: unexpected
    return sum(1 for r in unexpected(explanation, warmup) if r.graph.ref in bridged)


def dynamo_counts(explanation, warmup: int | None = None) -> tuple[int, int] | None:
    """Dynamo's recompilations and how many of them are unexpected (past ``--warmup``), or None when the run
    has no Dynamo log or Dynamo never recompiled: ``record``'s verdict line counts them with XLA's (review 3,
    F5: "0 recompilations" under three Dynamo recompilations that ``explain-recompile`` fails on)."""
    dynamo = getattr(explanation, "dynamo", None)
    if dynamo is None or dynamo.no_log or not dynamo.recompiles:
        return None
    from hlodiff.explain.dynamo_xla import call_positions

    late = dynamo.unexpected_after(warmup, call_positions(explanation))
    return len(dynamo.recompiles), sum(1 for r in dynamo.recompiles if r in late)


def run_exit_status(explanation, warmup: int | None = None) -> int:
    """1 when something unexpected compiled again or a compiled module could not be read, else 0."""
    dynamo = getattr(explanation, "dynamo", None)
    if dynamo is not None:  # issue 31: Dynamo's unexpected recompilations, and XLA's outside the bridge
        from hlodiff.explain.dynamo_xla import call_positions  # --warmup N: XLA graphs that ran before call N

        late = dynamo.unexpected_after(warmup, call_positions(explanation))
        return 1 if unexpected_told(explanation, warmup) or late or explanation.unread else 0
    return exit_status(explanation, warmup)
