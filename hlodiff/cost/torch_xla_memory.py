"""torch_xla's own memory figures of each compilation, as the cost layer uses them.

They are evidence, read from the PT_XLA_DEBUG log in :mod:`hlodiff.dumps.torch_xla_memory` (the figures, their
rounding and how the peak follows from them are described there); the cost model imports
the type from here.
"""

from hlodiff.dumps.torch_xla_memory import GIB, ROUNDING_BYTES, TorchXlaMemory

__all__ = ["GIB", "ROUNDING_BYTES", "TorchXlaMemory"]
