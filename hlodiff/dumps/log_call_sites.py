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
    with open(log_path, errors="replace") as f:
        lines = f.read().splitlines()
    sites: dict[int, SourceFrame | None] = {}
    start = 0
    for ordinal, line in sorted(compilation_lines.items(), key=lambda item: item[1]):
        site = None
        for text in lines[start:max(start, line - 1)]:
            if (m := MISS_RE.search(text)) is not None:
                site = call_site(m.group(1))
        sites[ordinal] = site
        start = line
    return sites
