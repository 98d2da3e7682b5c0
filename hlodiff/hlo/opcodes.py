"""The opcodes XLA's HLO text names, and the async shorthand built on them.

hlodiff accepts an opcode it does not know with a warning (a newer XLA may add opcodes), but it must know the
real ones to read XLA's async shorthand: ``custom-call-start(...)`` stands for an ``async-start`` that wraps a
``custom-call`` in a computation of its own, while ``all-gather-start`` is an opcode in its own right and
``all-gather-update`` is an error.
"""

from __future__ import annotations

OPCODES = frozenset((
    "abs", "add", "add-dependency", "after-all", "all-gather", "all-gather-done", "all-gather-start", "all-reduce",
    "all-reduce-done", "all-reduce-start", "all-to-all", "and", "async-done", "async-start", "async-update", "atan2",
    "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast", "bitcast-convert", "broadcast",
    "call", "cbrt", "ceil", "cholesky", "clamp", "clz", "collective-broadcast", "collective-permute",
    "collective-permute-done", "collective-permute-start", "compare", "complex", "concatenate", "conditional",
    "constant", "convert", "convolution", "copy", "copy-done", "copy-start", "cosine", "custom-call", "divide",
    "domain", "dot", "dynamic-reshape", "dynamic-slice", "dynamic-update-slice", "erf", "exponential",
    "exponential-minus-one", "fft", "floor", "fusion", "gather", "get-dimension-size", "get-tuple-element", "imag",
    "infeed", "iota", "is-finite", "log", "log-plus-one", "logistic", "map", "maximum", "minimum", "multiply",
    "negate", "not", "opt-barrier", "or", "outfeed", "pad", "parameter", "partition-id", "popcnt", "power",
    "ragged-all-to-all", "ragged-dot", "real", "recv", "recv-done", "reduce", "reduce-precision", "reduce-scatter",
    "reduce-window", "remainder", "replica-id", "reshape", "reverse", "rng", "rng-bit-generator",
    "rng-get-and-update-state", "round-nearest-afz", "round-nearest-even", "rsqrt", "scatter", "select",
    "select-and-scatter", "send", "send-done", "set-dimension-size", "shift-left", "shift-right-arithmetic",
    "shift-right-logical", "sign", "sine", "slice", "sort", "sqrt", "stochastic-convert", "subtract", "tan", "tanh",
    "topk", "transpose", "triangular-solve", "tuple", "while", "xor",
))

ASYNC_SUFFIXES = ("-start", "-update", "-done")

# Operations that are asynchronous pairs of their own (``send``/``send-done``, ``all-gather-start``/``-done``):
# the generic shorthand does not apply to them, so ``recv-start`` or ``copy-update`` are not opcodes.
_OWN_ASYNC = frozenset(("send", "recv", "all-gather", "all-reduce", "collective-permute", "copy"))


def async_shorthand(opcode: str) -> tuple[str, str] | None:
    """``("custom-call", "-start")`` for shorthand like ``custom-call-start``; ``None`` for any other opcode."""
    if opcode in OPCODES:
        return None
    for suffix in ASYNC_SUFFIXES:
        if opcode.endswith(suffix):
            base = opcode[: -len(suffix)]
            if base in OPCODES and not base.startswith("async"):
                return base, suffix
    return None


def is_invalid_async(opcode: str) -> bool:
    """``recv-start``, ``all-gather-update``: the shorthand spelled on an operation that has its own pair."""
    short = async_shorthand(opcode)
    return short is not None and short[0] in _OWN_ASYNC


def note_unknown_opcodes(module, warnings: list, seen: set[str] | None = None) -> None:
    """Append one warning naming the opcodes of ``module`` that this hlodiff does not know (read as written).

    ``seen`` (opcodes already named) keeps a run of many graphs to one warning per unknown opcode: the first
    module that uses it is named, the rest of the run would only repeat it."""
    names = [op for op in module.unknown_opcodes if seen is None or op not in seen]
    if names:
        from hlodiff.errors import InputWarning

        if seen is not None:
            seen.update(names)
        warnings.append(InputWarning(f"unknown opcode(s) {', '.join(names)}: read as written (a newer XLA?)",
                                     module.path))
