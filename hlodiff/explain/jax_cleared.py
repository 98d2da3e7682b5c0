"""JAX forgot a function it had compiled because the program empties its caches (``jax.clear_caches()``).

JAX's log then calls the function "never seen" and guesses it "may be re-defined repeatedly", the words of a
function made anew each call; but the object id it names is the one it compiled before (``JaxCacheMiss.same_object``)
and the calling file clears the caches. "Create and jit it once" is what such a program already does: the answer is
the clear_caches line (round 21, r21_jx_clear_caches_epoch).
"""

from __future__ import annotations

from hlodiff.diff.fixes import FixContext, decide
from hlodiff.diff.model import Cause
from hlodiff.dumps.source_lines import SourceLines
from hlodiff.dumps.jax_cache_miss import JaxCacheMiss
from hlodiff.hlo.model import SourceFrame


def cleared_at(miss: JaxCacheMiss, sources: SourceLines) -> SourceFrame | None:
    """The ``jax.clear_caches()`` call that made JAX forget a function it had compiled (round 21): JAX named the
    object id of its previous miss again (``same_object``) and a loop around the call clears the caches; the first
    such call below the call line (the end of the loop's body), else the last above it (one after the loop, once at
    the end, clears nothing between two calls: the tenth stop's last read). None otherwise: the same id alone
    may be a function freed and made anew at the same address."""
    site = miss.call_site
    if not miss.same_object or site is None:
        return None
    lines = sources.calls_in_loops_around(site.file, site.line, ("clear_caches",))
    if not lines:
        return None
    below = [n for n in lines if site.line is not None and n > site.line]
    return SourceFrame(site.file, below[0] if below else lines[-1], site.function)


def caches_cleared(miss: JaxCacheMiss, cleared: SourceFrame, defined: str, said: str, where) -> tuple[Cause, str]:
    """The cache_key cause told at the clear_caches line (then the call), and its fix (row
    ``cache_key_caches_cleared``)."""
    cause = Cause("cache_key", f"JAX called `{miss.function}`{defined} a function it had never seen, but it is the "
                               f"object it compiled before (the same id): jax.clear_caches() at {cleared.where} "
                               f"emptied its caches in between ({said})", [cleared, *where])
    choice = decide(cause, FixContext(producer="jax", new_function=True,
                                      caches_cleared=f"{cleared.file.rsplit('/', 1)[-1]}:{cleared.line}"))
    cause.fix_rule = choice.rule.name
    return cause, choice.text
