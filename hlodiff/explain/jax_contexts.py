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


# JAX's config names for settings a user changes with a context manager, and what the user wrote: JAX's log names
# the config (``abstract_mesh_context_manager``), which is no API a user can search for. Rows added when a run showed
# JAX retracing for them (round 20: r20_jx_set_mesh_eval, and probes of the two promotion contexts).
CONTEXT_SETTERS: dict[str, str] = {
    "abstract_mesh_context_manager": "the mesh context, `with jax.set_mesh(mesh):` (or jax.sharding.use_mesh)",
    "jax_numpy_rank_promotion": "`with jax.numpy_rank_promotion(...)` (or jax.config's jax_numpy_rank_promotion)",
    "jax_numpy_dtype_promotion": "`with jax.numpy_dtype_promotion(...)` (or jax.config's jax_numpy_dtype_promotion)",
}


def context_fix(setting: str) -> str:
    """The fix for a cache miss JAX blames on a changed tracing context: the setting once for the whole run, named
    as the user set it where :data:`CONTEXT_SETTERS` knows how."""
    setter = CONTEXT_SETTERS.get(setting)
    if setter is None:
        return f"set `{setting}` once for the whole run, not around some calls"
    return (f"`{setting}` is JAX's name for {setter}: the same function traced inside and outside it is two "
            f"programs; enter it once around the whole program (training and evaluation alike), or not at all, "
            f"not around some calls")


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
