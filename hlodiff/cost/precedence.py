"""Which figure a graph's cost reports when several sources give one, and what cannot be known at all.

Peak memory: XLA's own report beside the module (memory-usage report or buffer assignment, ``peak_source: "xla"``)
> torch_xla's Post Compilation Analysis (``"torch_xla"``, :mod:`hlodiff.cost.torch_xla_memory`) > hlodiff's
liveness estimate (``"estimate"``). Aliased bytes: the module header's ``input_output_alias`` (``"hlo"``: XLA's
compiled module, or what JAX declared) > torch_xla's figure > nothing: a module torch_xla saved before compiling
it (save-tensors file, or a dumped module with ``buffer_donor``) does not show which inputs torch_xla donated, and
0 would be a guess. Such a figure is ``None`` with an ``unknowns`` entry naming the capture that gives it.
"""

from __future__ import annotations

from hlodiff.cost.figures import Unknown
from hlodiff.cost.model import GraphCost
from hlodiff.cost.peak import POINTER_BYTES
from hlodiff.cost.torch_xla_memory import TorchXlaMemory
from hlodiff.hlo.model import Module

DONATION_UNKNOWN = Unknown(
    "aliased_bytes",
    "torch_xla decides which inputs it donates when it compiles; the HLO it saved before compiling does not show it",
    "the PT_XLA_DEBUG_LEVEL=1 log of the run (beside the dump, or --debug-log), or hlodiff record")


def donation_hidden(module: Module, record_kind: str | None) -> bool:
    """The module's own header cannot say what is aliased: torch_xla traced it and donates only when compiling."""
    if module.attrs.get("input_output_alias"):
        return False
    return record_kind == "save_tensors" or bool(module.attrs.get("buffer_donor"))


def settle(cost: GraphCost, module: Module, record_kind: str | None, memory: TorchXlaMemory | None) -> GraphCost:
    """Apply the precedence above to ``cost`` (made from the module alone) in place, and return it."""
    cost.torch_xla = memory
    if module.attrs.get("input_output_alias"):
        cost.aliased_source = "hlo"
    elif memory is not None and memory.aliased_bytes is not None:
        cost.aliased_bytes, cost.aliased_source = memory.aliased_bytes, "torch_xla"
    elif donation_hidden(module, record_kind):
        cost.aliased_bytes, cost.aliased_source = None, None
        cost.unknowns.append(DONATION_UNKNOWN)
    else:
        cost.aliased_source = "hlo"
    if cost.aliased_source != "hlo":  # the header does not tell the donation: no update is judged undonated
        cost.undonated = []
    if cost.peak_source != "xla" and memory is not None:
        peak = torch_xla_peak(cost, module, memory)
        if peak is not None:
            cost.peak_bytes, cost.peak_rounding = peak
            cost.peak_source = "torch_xla"
    return cost


def torch_xla_peak(cost: GraphCost, module: Module, memory: TorchXlaMemory) -> tuple[int, int] | None:
    """torch_xla's peak (inputs + outputs - aliased + intermediates) and how far off its rounding can put it.

    Inputs and outputs are allocations of the HLO's own shapes (the outputs' tuple adds a table of pointers), and
    an optimized module's header gives the aliasing exactly: where the log's rounded figure agrees with such exact
    bytes within its rounding, the exact bytes are used; the rest (always the intermediates) keeps its rounding.
    On a small graph this is the difference between a figure and its own error bar."""
    if memory.peak_bytes is None:
        return None
    table = POINTER_BYTES * cost.outputs.count if module.entry.root.shape.is_tuple else 0
    exact_alias = cost.aliased_bytes if cost.aliased_source == "hlo" else None
    rounding = memory.rounding_bytes  # the intermediates: no HLO figure to check them against
    total = memory.intermediate_bytes
    for sign, exact, logged in ((1, cost.parameters.bytes, memory.input_bytes),
                                (1, cost.outputs.bytes + table, memory.output_bytes),
                                (-1, exact_alias, memory.aliased_bytes)):
        if exact is not None and abs(exact - logged) <= memory.rounding_bytes:
            total += sign * exact
        else:
            total, rounding = total + sign * logged, rounding + memory.rounding_bytes
    return max(0, total), rounding
