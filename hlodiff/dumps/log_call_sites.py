"""The user's line each compilation of a JAX log was called from, when the log holds JAX_EXPLAIN_CACHE_MISSES=1's
messages alone (users capture it so, without JAX_LOG_COMPILES): no ``Compiling jit(...)`` line anchors a message to
its compilation, but JAX prints a function's ``TRACING CACHE MISS at FILE:LINE`` just before it looks the program up
in the persistent cache, so the last such message after the previous compilation names this one's call site.
"""

from __future__ import annotations

from hlodiff.dumps.jax_cache_miss import MISS_RE, call_site
from hlodiff.hlo.model import SourceFrame


def call_sites_from_misses(log_path: str, compilation_lines: dict[int, int]) -> dict[int, SourceFrame | None]:
    """``{ordinal: call site}`` for compilations given as ``{ordinal: their first line in the log (1-based)}``: the
    last ``TRACING CACHE MISS`` line after the previous compilation's line and before this one's (None when no
    message stands between them: an eager operation, or a program JAX did not trace again)."""
    order = sorted(compilation_lines.items(), key=lambda item: item[1])
    sites: dict[int, SourceFrame | None] = {}
    site, k = None, 0
    with open(log_path, errors="replace") as f:  # line by line: a log of a long run need not fit in memory
        for number, text in enumerate(f, 1):
            at_compilation = k < len(order) and order[k][1] <= number
            while k < len(order) and order[k][1] <= number:
                sites[order[k][0]], site, k = site, None, k + 1
            if k == len(order):
                break
            if not at_compilation and (m := MISS_RE.search(text)) is not None:  # a compilation's own line is no miss
                site = call_site(m.group(1))
    for ordinal, _ in order[k:]:  # compilations placed past the log's end: the first takes what came last
        sites[ordinal], site = site, None
    return sites
