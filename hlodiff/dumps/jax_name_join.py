"""Join JAX's cache misses to the dumped modules by function name, for a log without ``Compiling jit(...)`` lines.

Many users capture ``JAX_EXPLAIN_CACHE_MISSES=1`` alone (shared scenario ``jax_weak_type``): the log then says why
each trace missed (``for scale_loss defined at ...`` / ``* at s, now f32[]{weak_type=False} and before
f32[]{weak_type=True}``) but never which module that trace compiled. The compile lines are what
:func:`hlodiff.dumps.jax_log.join_modules` joins by; without them the function's name still joins, when the evidence
is unambiguous: JAX names the module after the function (``scale_loss`` -> ``jit_scale_loss``) and traces it once per
compilation, so the k-th miss of ``f`` called from outside any trace is the k-th ``jit_f`` module of the dump (its
first sighting, ``never seen function``, the first module; each ``all previously seen cache keys differ`` the next).

A miss is left out of its function's count when it was traced inside another function's trace: its call site's
frame is a function the log already saw missing, in that function's file (``block`` at ``:14 (train_step)`` under
``jax.checkpoint`` inside the jitted ``train_step``, shared scenario ``jax_remat_policy``). Such a trace is part of
the outer one: it compiles no module of its own, and its "never seen function ... defined on the same line" is a
consequence of the outer function's miss, whose reason is the one to tell.

Nothing is joined for a name whose evidence does not fit (said so, never guessed): two functions of one name defined
in different places (which of them compiled which module?), or a count of misses that is not the count of modules
(a miss that compiled nothing, a compilation without a miss: a donation change, a persistent cache).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

from hlodiff.dumps.jax_cache_miss import JaxCacheMiss


@dataclass(slots=True)
class FunctionMisses:
    """The cache misses of a log by function name, as the log is streamed: every miss counted, at most as many
    kept per function as the dump holds modules of its name (``wanted``; all without it), and the places each name
    was defined at (``limit`` per miss: how many to keep of its function, None for all). Costs the log's distinct
    functions, not its length."""

    kept: dict[str, list[JaxCacheMiss]] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)
    definitions: dict[str, set[str]] = field(default_factory=dict)
    """Function name -> the files it was defined in (a call from inside its trace is in one of them)."""
    lines: dict[str, set[str]] = field(default_factory=dict)
    """Function name -> the places it was defined at (``FILE:LINE``): more than one, more than one function."""
    nested: int = 0
    """Misses traced inside another function's trace (not counted for their own name)."""

    def add(self, miss: JaxCacheMiss, limit: int | None) -> None:
        if not miss.function:
            return
        if self._traced_inside(miss):
            self.nested += 1
            return
        f = miss.function
        defined = miss.defined_at
        self.definitions.setdefault(f, set()).add(defined.file if defined is not None else "")
        self.lines.setdefault(f, set()).add(defined.where if defined is not None else "")
        if limit is None or self.counts[f] < limit:
            self.kept.setdefault(f, []).append(miss)
        self.counts[f] += 1

    def _traced_inside(self, miss: JaxCacheMiss) -> bool:
        """Called from inside a function whose trace the log saw begin, in that function's file."""
        site = miss.call_site
        if site is None or not site.function or site.function == miss.function:
            return False
        return site.file in self.definitions.get(site.function, ())


@dataclass(frozen=True, slots=True)
class NameJoin:
    """Per dumped module, the miss its compilation is joined to (None: not joined); ``matched``: function name ->
    (misses, modules) joined; ``refused``: function name -> why not (two definitions, or the counts)."""

    misses: list[JaxCacheMiss | None]
    matched: dict[str, int]
    refused: dict[str, str]


def join_by_name(functions: FunctionMisses, modules: Sequence[str], jit_module: Callable[[str], str]) -> NameJoin:
    """The misses of each function joined, in order, to the dumped modules of its name (module-number order) where
    the name is one function's and its count of misses is the count of modules (see the module docstring);
    ``jit_module``: the module name ``jax.jit`` gives a function (``scale_loss`` -> ``jit_scale_loss``)."""
    count = Counter(modules)
    by_module: dict[str, list[str]] = {}
    for f in functions.counts:
        by_module.setdefault(jit_module(f), []).append(f)
    ready: dict[str, list[JaxCacheMiss]] = {}
    matched: dict[str, int] = {}
    refused: dict[str, str] = {}
    for name, names in by_module.items():
        if not count[name]:
            continue  # traced, never compiled on its own (a function only called inside another jit)
        f = names[0]
        if len(names) > 1 or len(functions.lines.get(f, ())) > 1:
            refused[f] = f"more than one function is named {f}"
        elif functions.counts[f] != count[name]:
            n = functions.counts[f]
            refused[f] = (f"{n} cache miss{'es' if n != 1 else ''} of {f} but {count[name]} {name} "
                          f"module{'s' if count[name] != 1 else ''}")
        else:
            ready[name], matched[f] = list(functions.kept.get(f, ())), count[name]
    seen: Counter = Counter()
    misses: list[JaxCacheMiss | None] = []
    for name in modules:
        k = seen[name]
        seen[name] += 1
        got = ready.get(name, ())
        misses.append(got[k] if k < len(got) else None)
    return NameJoin(misses, matched, refused)

