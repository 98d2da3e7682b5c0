"""Causes outside the computation: what made a second compilation when the graph itself did not change.

About a third of the recompilations users report leave the HLO identical (donation, compile options, JAX weak
types and static arguments, a re-created function). Such a recompilation is never a graph change and never
"reordered" unless parameters or outputs really are numbered differently: the HLO is identical and the cache key
came from elsewhere, and this module names where when the dumps show it (module header, the compile options XLA
wrote beside the module) and otherwise says so plainly.
"""

from __future__ import annotations

from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.header import PARTITIONING
from hlodiff.diff.model import Cause, ModuleDiff
from typing import Callable

from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.model import SourceFrame, user_frame
from hlodiff.hlo.producer import producer_from_name


def option_causes(left: GraphSummary, right: GraphSummary,
                  module_options: Callable[[GraphRecord], dict | None]) -> list[Cause]:
    """A ``compile_options`` cause when the option files beside two XLA dump modules differ (``module_options``:
    the run's, :meth:`hlodiff.dumps.evidence.Run.module_options`)."""
    lopts, ropts = module_options(left.record), module_options(right.record)
    if lopts is None or ropts is None:
        return []
    # A repeated field with one entry per parameter or output (allow_spmd_sharding_propagation_to_parameters:
    # true, true -> true, true, true) grows with the signature, not with an option the user set: compared as sets.
    keys = sorted(k for k in set(lopts) | set(ropts) if set(lopts.get(k, ())) != set(ropts.get(k, ())))
    if not keys:
        return []
    parts = [f"{k.split(':', 1)[1]} {_values(lopts.get(k))} -> {_values(ropts.get(k))}" for k in keys[:4]]
    more = f" (+{len(keys) - 4} more)" if len(keys) > 4 else ""
    if all(any(field in k for field in PLACEMENT_FIELDS) for k in keys):
        return [_placement_cause(right, "; ".join(parts) + more)]
    files = sorted({k.split(":", 1)[0] for k in keys})
    names = ", ".join(f"`{k.split(':', 1)[1].rsplit('.', 1)[-1]}`" for k in keys[:3])
    cause = Cause("compile_options", f"compiled with other options ({', '.join(files)}): " + "; ".join(parts) + more,
                  reason="partitioning" if all(k.rsplit(".", 1)[-1] in PARTITIONING for k in keys) else None)
    cause.write_fix(f"compile with one set of options: {names} differ{'s' if len(keys) == 1 else ''} (set "
                    "compiler_options / XLA_FLAGS the same for every jit of this function, or not at all)")
    cause.fix_is_final = True
    return [cause]


PLACEMENT_FIELDS = ("device_assignment",)
"""Option fields that record where the program runs: the framework fills them from the devices the arguments
live on (``jax.device_put`` onto another device), no user sets them as an option."""


def _placement_cause(right: GraphSummary, what: str) -> Cause:
    cause = Cause("cache_key", f"the HLO and the options the user can set are the same; only the devices the "
                               f"program runs on differ ({what})")
    choice = decide(cause, FixContext(producer=producer_from_name(right.name or ""), hlo_identical=True,
                                      placement=True))
    cause.fix, cause.fix_rule, cause.fix_is_final = choice.text, choice.rule.name, True
    return cause


def same_computation_causes(diff: ModuleDiff, left: GraphSummary, right: GraphSummary,
                            found: list[Cause] = ()) -> list[Cause]:
    """Causes for two compilations whose normalized graphs are equal.

    ``diff.causes`` already holds what the module headers show, ``found`` what else was found outside the graph
    (the compile options beside the modules; the caller adds those). Parameters or outputs numbered differently
    are ``reordered`` (a real difference in the cache key); with nothing found at all, ``cache_key``.
    """
    causes = list(diff.causes)
    reordered = _reordered(diff, right)
    if reordered is not None:
        causes.insert(0, reordered)
    if not causes and not found:
        what = "; ".join(i.summary for i in diff.ignored if i.name in ("names", "dead_code", "tuple_plumbing",
                                                                        "metadata"))
        detail = f" (they differ only in {what})" if what else ""
        causes.append(Cause("cache_key", "the HLO is identical after normalization" + detail
                            + "; the recompilation came from the cache key, not from the graph", hlo_identical=True))
    return causes


def _reordered(diff: ModuleDiff, graph: GraphSummary) -> Cause | None:
    """Parameters or outputs in another order: located at the user lines that created the renumbered inputs
    (their ``xla__device_data`` metadata), which is where a callback order or a dict iteration order shows up."""
    moved = {b: a for a, b in diff.parameter_mapping if a != b}
    moved_outputs = [(a, b) for a, b in diff.output_mapping if a != b]
    if not moved and not moved_outputs:
        return None
    frames: list[SourceFrame] = []
    instructions = []
    cm = graph._canonical
    if cm is not None:
        for inst in cm.module.entry.parameters():
            if inst.parameter_number in moved:
                instructions.append((None, inst.name))
                frame = user_frame(cm.frames(inst))
                if frame is not None and frame not in frames:
                    frames.append(frame)
    frames.sort(key=lambda f: (f.file, f.line or 0))
    parts = []
    if moved:
        parts.append(f"{len(moved)} parameter{'s' if len(moved) != 1 else ''} numbered differently")
    if moved_outputs:
        parts.append(f"{len(moved_outputs)} output{'s' if len(moved_outputs) != 1 else ''} in another order")
    return Cause("reordered", "same computation after normalization: " + ", ".join(parts), frames[:4],
                 instructions)


def _values(values: tuple[str, ...] | None) -> str:
    if not values:
        return "(unset)"
    text = ", ".join(values)
    return text if len(text) <= 60 else text[:57] + "..."
