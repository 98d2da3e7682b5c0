"""A large literal baked into a compiled program: a NumPy array a jitted function reads through its closure.

``PROJ = np.random...`` at module level, read inside ``@jax.jit def f(x): x @ PROJ``, is not an argument: jit
traces it as a constant, so its whole value is written into the program (``f32[1024,1024] constant({...})``),
compiled into the executable and held beside the device's buffers for as long as the executable lives, and
compiled again into every function that closes over it (JAX's sharp bits; passing it as an argument keeps it one
device buffer). Evidence, from the module alone: a ``constant`` of at least :data:`BAKED_BYTES` with no metadata of
its own (the lowering's captured literal; a constant XLA folds from the user's ops keeps their metadata), placed
at the line of the first op that reads it and names a source line. Only JAX's programs are asked
(:func:`hlodiff.cost.headline.framework_of`): torch_xla uploads tensors as device data and bakes only scalars.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlodiff.cost.source import SourceLocator
from hlodiff.hlo.model import Module, SourceFrame

BAKED_BYTES = 1 << 20
"""A literal this large (1 MiB) is data, not a constant of the computation's own (a scale, a mask row, an eps):
worth an argument of its own. Scalars and small tables JAX folds routinely stay far below it."""


@dataclass(frozen=True, slots=True)
class BakedConstant:
    """One large literal: its shape (no layout), size, and the user's line of the first op that reads it."""

    shape: str
    bytes: int
    location: SourceFrame | None
    op: str


def baked_constants(module: Module, where: SourceLocator) -> list[BakedConstant]:
    """The module's literals of :data:`BAKED_BYTES` or more with no metadata of their own, largest first."""
    big = {}
    for _, inst in module.instructions():
        if inst.opcode == "constant" and "metadata" not in inst.attrs and inst.shape.byte_size() >= BAKED_BYTES:
            big[inst.name] = inst
    if not big:
        return []
    readers: dict[str, tuple] = {}
    for _, inst in module.instructions():
        for name in inst.operands:
            if name in big and name not in readers and (frame := where.frame(inst)) is not None:
                readers[name] = (frame, where.op(inst))
    found = [BakedConstant(str(c.shape.without_layout()), c.shape.byte_size(), *readers.get(n, (None, "")))
             for n, c in big.items()]
    return sorted(found, key=lambda b: -b.bytes)
