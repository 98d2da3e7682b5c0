"""torch_xla's own memory figures of each compilation: the ``Post Compilation Analysis`` of the PT_XLA_DEBUG log.

With ``PT_XLA_DEBUG_LEVEL=1`` torch_xla prints, after every compilation, the compiled executable's memory
statistics as PJRT computes them from XLA's buffer assignment::

    Post Compilation Analysis: Graph input size: 0.003182 GB          argument allocations
    Post Compilation Analysis: Graph output size: 0.001591 GB         allocations that may live out
    Post Compilation Analysis: Aliased Input size: 0.001591 GB        arguments an output is written into
    Post Compilation Analysis: Intermediate tensor size: 0.000000 GB  the preallocated temporary slab
    Post Compilation Analysis: Compiled program size: 0.000000 GB     generated code

Each figure is bytes / 2^30 printed with 6 decimals (C++ ``std::to_string``), so it is known to within half the
last digit: ``ROUNDING_BYTES`` (537 bytes) either way; ``Unknown`` when PJRT did not say. torch_xla decides buffer
donation when it compiles, so the HLO it saves (``XLA_SAVE_TENSORS_FILE``) carries no ``input_output_alias``: this
log is the only record of the aliasing of such a graph. The peak follows from the same figures the way XLA's
memory-usage report totals its allocations: inputs + outputs - aliased (one buffer serves both) + intermediates
(constants and reducers' scalars, a few bytes, are not in PJRT's figures).

Compilations are joined to graphs by the ``Graph Hash`` that the save-tensors file and the executions of a
``record`` folder carry, the way ``explain-recompile`` joins the log's compilation causes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hlodiff.dumps.debug_log import CompilationEvent, read_compilations
from hlodiff.errors import HlodiffError, InputWarning

GIB = 1 << 30
ROUNDING_BYTES = math.ceil(0.5e-6 * GIB)
"""Half a unit of the log's last printed digit (1e-6 GB), in bytes: each figure is exact within this, either way."""

_KEYS = (("input_bytes", "Graph input size"), ("output_bytes", "Graph output size"),
         ("aliased_bytes", "Aliased Input size"), ("intermediate_bytes", "Intermediate tensor size"),
         ("program_bytes", "Compiled program size"))


@dataclass(frozen=True, slots=True)
class TorchXlaMemory:
    """One compilation's figures in bytes (None where the log says ``Unknown``), each within ``rounding_bytes``."""

    graph_hash: str
    input_bytes: int | None
    output_bytes: int | None
    aliased_bytes: int | None
    intermediate_bytes: int | None
    program_bytes: int | None
    log: str
    line: int
    rounding_bytes: int = ROUNDING_BYTES

    @property
    def peak_bytes(self) -> int | None:
        """What one execution holds at once: inputs, outputs not written into an input, and temporaries."""
        parts = (self.input_bytes, self.output_bytes, self.aliased_bytes, self.intermediate_bytes)
        if None in parts:
            return None
        return max(0, self.input_bytes + self.output_bytes - self.aliased_bytes + self.intermediate_bytes)

    @property
    def peak_rounding_bytes(self) -> int:
        """The peak adds four rounded figures: their roundings add up."""
        return 4 * self.rounding_bytes

    def to_json(self) -> dict:
        return {"input_bytes": self.input_bytes, "output_bytes": self.output_bytes,
                "aliased_bytes": self.aliased_bytes, "intermediate_bytes": self.intermediate_bytes,
                "program_bytes": self.program_bytes, "peak_bytes": self.peak_bytes,
                "rounding_bytes": self.rounding_bytes, "peak_rounding_bytes": self.peak_rounding_bytes,
                "graph_hash": self.graph_hash, "log": self.log, "line": self.line}


def gb_to_bytes(text: str) -> int | None:
    """``"0.001591 GB"`` -> 1708329; None for ``Unknown`` or anything that is not a size in GB."""
    number, _, unit = text.strip().partition(" ")
    if unit.strip() != "GB":
        return None
    try:
        value = float(number)
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return round(value * GIB)


def memory_of(event: CompilationEvent, log: str) -> TorchXlaMemory | None:
    """The figures of one compilation, or None when its ``Post Compilation Analysis`` is missing or has none."""
    if not event.graph_hash or not event.post_compilation:
        return None
    values = {name: gb_to_bytes(event.post_compilation.get(key, "")) for name, key in _KEYS}
    if all(v is None for v in values.values()):
        return None
    return TorchXlaMemory(graph_hash=event.graph_hash, log=log, line=event.line, **values)


def read_torch_xla_memory(logs: list[str], warnings: list[InputWarning] | None = None) -> dict[str, TorchXlaMemory]:
    """Graph hash -> torch_xla's figures, from every PT_XLA_DEBUG log given (the first compilation of a hash
    wins). A file that is not such a log (a metrics report, a JAX log) adds nothing."""
    found: dict[str, TorchXlaMemory] = {}
    for log in logs:
        try:
            events = read_compilations(log, warnings)
        except HlodiffError:
            continue
        for event in events:
            memory = memory_of(event, log)
            if memory is not None:
                found.setdefault(memory.graph_hash, memory)
    return found
