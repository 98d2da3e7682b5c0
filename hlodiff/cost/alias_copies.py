"""The copies XLA makes for a step that updates its state in place (review 17, F6).

A graph whose outputs alias its inputs (``input_output_alias``: torch_xla's in-place update of the parameters and
optimizer state, a donated JAX step) writes each new value into the buffer the old one came in. When the old value is
still read after the new one is made (Adam reads a parameter in the forward, the backward and its own update),
XLA's copy insertion copies the aliased parameter first, or computes the new value aside and copies it into the
aliased output buffer last. Those copies are the in-place update's own cost, about one copy of the state per step,
not a copy the program asked for: `cost` told them as ``copies/step 12: 194.2 KiB`` beside "nothing to act on", with
no word why.

The evidence is the optimized module alone: a ``copy`` in the entry whose operand is a parameter some output aliases,
or that is itself an operand of the ROOT tuple at an aliased output index.
"""

from __future__ import annotations

from hlodiff.hlo.attributes import parse_input_output_alias
from hlodiff.hlo.model import Module


def aliasing_copies(module: Module) -> frozenset[str]:
    """Names of the entry's copies that serve an output written into its input's buffer."""
    raw = module.attrs.get("input_output_alias")
    if not raw:
        return frozenset()
    aliases = parse_input_output_alias(raw)
    entry = module.entry
    params = {a.parameter for a in aliases if not a.parameter_index}
    aliased_params = {i.name for i in entry.instructions if i.opcode == "parameter" and i.parameter_number in params}
    root = entry.root
    aliased_outputs: set[str] = set()
    if root.opcode == "tuple":
        for a in aliases:
            if len(a.output_index) == 1 and a.output_index[0] < len(root.operands):
                aliased_outputs.add(root.operands[a.output_index[0]])
    return frozenset(i.name for i in entry.instructions if i.opcode == "copy" and i.operands
                     and (i.operands[0] in aliased_params or i.name in aliased_outputs))
