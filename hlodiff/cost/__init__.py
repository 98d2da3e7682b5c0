"""What a graph and a difference cost: memory, copies (in loops: per iteration and per step), the tensors that
cross from one graph to the next, compile time. Beside ``explain/``: imports ``hlo/`` and ``dumps/``'s evidence, reads no file.

:func:`run_cost` costs a run's evidence (``hlodiff.dumps.cost_evidence.read_cost_run``; ``hlodiff.api.cost_paths``
is the ``hlodiff cost`` command's library entry, reading and costing); :func:`module_cost` the cost of one parsed
module; :func:`cost_delta` what changed between two graphs' costs (``compare --json``'s ``cost`` object).
"""

from hlodiff.cost.delta import cost_delta
from hlodiff.cost.graph_cost import module_cost
from hlodiff.cost.crossings import Boundary, BoundaryTensor
from hlodiff.cost.figures import Tally
from hlodiff.cost.model import Copy, GraphCost, LoopBufferCopy, RunCost
from hlodiff.cost.run import run_cost

__all__ = ["Boundary", "BoundaryTensor", "Copy", "GraphCost", "LoopBufferCopy", "RunCost", "Tally",
           "cost_delta", "module_cost", "run_cost"]
