"""Which framework made an HLO module (``torch_xla`` or ``jax``), told from the module alone: its name, else its
instructions' metadata. Fixes are worded in that framework's terms, and a comparison of two modules says when they
come from different ones. :mod:`hlodiff.explain.producer` asks the same of a graph read from a run, with how it was
dumped as well."""

from __future__ import annotations

import re


def producer_from_name(module_name: str) -> str | None:
    """``torch_xla`` or ``jax`` from the module name their tracers give (``SyncTensorsGraph.76``, ``IrToHlo.52``,
    ``jit_step``); None when the name says neither."""
    if module_name.startswith(("SyncTensorsGraph", "IrToHlo")):
        return "torch_xla"
    if module_name.startswith(("jit_", "pjit_", "pmap_", "xla_computation_")):
        return "jax"
    return None


_JAX_OP_NAME = re.compile(r'op_name="(jit|pjit|pmap|xla_computation)\(')
_TORCH_OP_TYPE = re.compile(r'op_type="(aten__|xla__)')


def producer_of(module) -> str | None:
    """``torch_xla`` or ``jax`` for a parsed module: its name, else its instructions' metadata (JAX writes
    ``op_name="jit(step)/..."``, torch_xla ``op_type="aten__..."``), so a renamed module still gets fixes in its
    framework's words. None when neither shows (then fixes use words of both)."""
    found = producer_from_name(module.name or "")
    if found is not None:
        return found
    for n, (_, inst) in enumerate(module.instructions()):
        if n >= 512:
            break
        meta = inst.attrs.get("metadata") or ""
        if _JAX_OP_NAME.search(meta):
            return "jax"
        if _TORCH_OP_TYPE.search(meta):
            return "torch_xla"
    return None
