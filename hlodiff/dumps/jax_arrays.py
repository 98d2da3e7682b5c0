"""Arrays as JAX's messages print them (``float32[256,32]``, ``ShapedArray(int32[8])``), spelled as XLA spells them
(``f32[256,32]``), so that an array a JAX warning names can be found among a dumped module's parameters."""

from __future__ import annotations

import re

_JAX_ARRAY_RE = re.compile(r"\b([a-z]+[0-9a-z_]*)\[([0-9, ]*)\]")

JAX_DTYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "pred", "complex64": "c64", "complex128": "c128",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
}
"""JAX's dtype names (as its warnings print arrays: ``float32[256,32]``) -> XLA's element types (``f32[256,32]``),
so that an array JAX names can be found among a module's parameters."""


def unusable_arrays(text: str) -> tuple[str, ...]:
    """``float32[256,32], ShapedArray(int32[8])`` -> ``("f32[256,32]", "s32[8]")`` (:data:`JAX_DTYPES`; a dtype
    not in the table is kept as JAX spells it)."""
    return tuple(f"{JAX_DTYPES.get(dtype, dtype)}[{dims.replace(' ', '')}]"
                 for dtype, dims in _JAX_ARRAY_RE.findall(text))
