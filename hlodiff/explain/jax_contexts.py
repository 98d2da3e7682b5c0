"""JAX's config contexts, by the line JAX named them at: what ties a compilation with no cache miss of its own to
the context it ran under.

``with jax.default_matmul_precision(...)`` (``jax.numpy_dtype_promotion``, ``jax.default_device``,
``jax.enable_x64``...) changes the tracing context, and JAX keys every compilation made under it on it, an operation
run outside jit (``xs[0]``, a ``jit_dynamic_slice``) as much as the user's jitted function. JAX_EXPLAIN_CACHE_MISSES
explains only the jitted function's miss (``* jax_default_matmul_precision differs``); the eager op beside it on the
same line compiles again with the same HLO and no explanation, which alone reads like arguments placed on another
device (review 12, F5). The line JAX named the context at is the evidence that ties the two.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ContextChange:
    """A config setting JAX named as changed for a compilation at ``file``:``line``."""

    setting: str
    """JAX's config name (``jax_default_matmul_precision``)."""
    text: str
    """JAX's line for it (``* jax_default_matmul_precision differs: now highest and before None``)."""
    function: str
    """The function whose cache miss named it."""
    file: str
    line: int

    def short(self) -> str:
        return f"{self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}"


def contexts_by_line(compilations) -> dict[tuple[str, int], ContextChange]:
    """(file, line) -> the first config context change JAX named for a compilation called there."""
    found: dict[tuple[str, int], ContextChange] = {}
    for compilation in compilations:
        miss = getattr(compilation, "cache_miss", None)
        site = miss.call_site if miss is not None else None
        if site is None or site.line is None:
            continue
        for reason in miss.reasons:
            if reason.kind == "tracing_context" and reason.argument:
                found.setdefault((site.file, site.line), ContextChange(
                    reason.argument, reason.text.strip(), miss.function or "", site.file, site.line))
    return found


def context_at(cause, contexts: dict[tuple[str, int], ContextChange]) -> ContextChange | None:
    """The context JAX named at the cause's first line of the user's, if any."""
    mine = next((f for f in cause.locations if not f.is_library and f.line is not None), None)
    return contexts.get((mine.file, mine.line)) if mine is not None else None
