"""Programs a run loaded from a persistent compilation cache are not compilations.

A restarted JAX job with ``jax_compilation_cache_dir`` set loads the programs an earlier run wrote: JAX still
prints ``Compiling jit(f) ...`` and ``Finished XLA compilation of jit(f) in S sec`` for them (S is the load's
time), and XLA dumps them, but only after optimizations (``module_N.NAME.after_optimizations.txt``, no
``before_optimizations``): nothing compiled. JAX's log says it between the two lines (``Persistent compilation
cache hit for 'jit_f'``, :mod:`hlodiff.dumps.jax_log`); the dump says it by the stage (the rule ``compare-runs``
reads a dump without its log by, :func:`hlodiff.dumps.cached_run.dump_compilations`). Either is enough.

torch_xla's persistent cache (``torch_xla.runtime.initialize_cache``) counts ``PersistentCacheHit`` in its metrics
without naming the graph, and its CPU client cannot load an entry at all (``Failed to deserialize executable``,
the committed ``fixtures/torch_xla/cache_reload``): every graph it ran compiled, and is counted so.
"""

from __future__ import annotations

from hlodiff.dumps.graph_record import LOADED_STAGE
from hlodiff.dumps.jax_log import JaxCompilation
from hlodiff.explain.inventory import GraphSummary


def loaded_refs(graphs: list[GraphSummary], joined: dict[str, JaxCompilation]) -> set[str]:
    """Refs of the graphs that were loaded from a persistent compilation cache rather than compiled."""
    out = set()
    for g in graphs:
        if not g.compiled or g.record.kind != "xla_dump":
            continue
        compilation = joined.get(g.ref)
        if g.record.stage == LOADED_STAGE or (compilation is not None and compilation.loaded):
            out.add(g.ref)
    return out


def loaded_clause(loaded: int) -> str:
    """``, 2 loaded from the persistent cache`` for the run summary's counts (empty when none was)."""
    return f", {loaded} loaded from the persistent cache" if loaded else ""
