"""JAX's own account of its recompilations: the ``JAX_EXPLAIN_CACHE_MISSES=1`` / ``JAX_LOG_COMPILES=1`` log.

JAX knows why its cache missed (a weak type, a static argument's value, a function it never saw) but nothing of
the computation; the HLO shows the computation but not the cache key. This module reads the log so that both can
be joined. JAX 0.10.2 prints (to stderr, bare or behind a ``logging`` prefix such as ``WARNING:jax._src...:``)::

    TRACING CACHE MISS at /home/user/project/train.py:35:4 (<module>):
      for step defined at /home/user/project/train.py:21
      all previously seen cache keys differ. For the closest previous key:
      different input types:
      * at scale, now f32[]{weak_type=False} and before f32[]{weak_type=True}https://docs.jax.dev/...
    Finished tracing step for jit in 0.001 sec
    Compiling jit(step) with global shapes and types (ShapedArray(float32[8,4]), ...). Argument mapping: (...).

The first sighting of a function says ``never seen function:`` / ``step id=... defined at FILE:LINE`` (and, when
another function was defined on the same call line, that it may be re-defined repeatedly). The explanation's
first line after the ``For the closest previous key:`` line is one of ``different input pytree:`` (static arguments
show as ``Static(val=...)``), ``Debug info doesn't match.``, ``different input types:`` (weak types, shapes, dtypes,
shardings), ``Tracing context doesn't match, ...`` or ``cache miss explanation unavailable``. Some recompilations
print no explanation at all: a jit re-created with other ``donate_argnums`` compiles without a tracing miss.

One cache-miss message is read into its reasons by :mod:`hlodiff.dumps.jax_cache_miss`. The log is streamed;
unrelated lines (the program's own output) are skipped silently. A file with neither a cache miss nor a
compilation is not a JAX log: a warning, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from hlodiff.dumps._io import text_lines
from hlodiff.dumps.jax_arrays import unusable_arrays
from hlodiff.dumps.jax_cache_miss import MISS_RE, JaxCacheMiss, parse_miss
from hlodiff.dumps.jax_name_join import FunctionMisses, join_by_name
from hlodiff.errors import HlodiffError, InputNote, InputWarning

_CACHE_HIT_RE = re.compile(r"Persistent compilation cache hit for '([^']+)'")
_COMPILE_RE = re.compile(r"Compiling (\S+) with global shapes and types (.*?)(?:\. Argument mapping: .*)?$")
_UNUSABLE_RE = re.compile(r"Some donated buffers were not usable: (.*)")
_FINISHED_RE = re.compile(r"Finished XLA compilation of ")


@dataclass(frozen=True, slots=True)
class JaxCompilation:
    """One ``Compiling jit(NAME) ...`` line: XLA compiled a module for this function.

    ``ordinal`` counts compilations in the log from 0; compilations of one function appear in the order XLA
    numbers their dumped modules. ``module_name`` is the HLO module name JAX gives it (``jit_step``).
    ``cache_miss`` is the explanation JAX printed for this compilation (the last ``TRACING CACHE MISS`` of the
    same function since its previous compilation), None when JAX printed none (e.g. a ``donate_argnums`` change).
    """

    function: str
    module_name: str
    ordinal: int
    arguments: str
    line: int
    cache_miss: JaxCacheMiss | None
    loaded: bool = False
    """JAX loaded the program from its persistent compilation cache (``Persistent compilation cache hit for
    'jit_step'`` after this ``Compiling`` line): nothing was compiled."""
    by_name: bool = False
    """Joined by the function's name: the log has no ``Compiling`` line (:mod:`hlodiff.dumps.jax_name_join`), so
    ``arguments`` is empty and ``line`` is the miss's."""
    unusable_donations: tuple[str, ...] = ()
    """Arrays JAX said it could not donate while compiling this (``UserWarning: Some donated buffers were not
    usable: float32[256,32], ...``), in XLA's spelling (``f32[256,32]``): donated arguments no output matches, which
    the optimized module may not mention at all (no ``buffer_donor`` for them)."""


@dataclass(slots=True)
class JaxLog:
    """Everything one log says: every compilation, and every cache miss (some lead to no compilation: a nested
    function traced again inside a compiled one)."""

    path: str
    compilations: list[JaxCompilation] = field(default_factory=list)
    cache_misses: list[JaxCacheMiss] = field(default_factory=list)
    compiled_names: dict[str, int] = field(default_factory=dict)
    """Module name of every compilation -> the line of its first one (kept even when the compilation is not)."""
    miss_count: int = 0
    first_miss_line: int | None = None
    object_ids: dict[tuple, int] = field(default_factory=dict)
    """(function, definition) -> the object id of its last "never seen" message (see ``JaxCacheMiss.same_object``)."""
    functions: FunctionMisses = field(default_factory=FunctionMisses)
    """The misses by function name, to join by when the log has no ``Compiling`` line."""


MAX_MISS_LINES = 10_000
"""Lines kept of one cache-miss message (real ones have a handful; the rest of a runaway one is not kept)."""


def read_jax_log(path: str, warnings: list[InputWarning] | None = None,
                 wanted: Mapping[str, int] | None = None) -> JaxLog:
    """Read a log of JAX's cache-miss explanations and compile messages (plain or gzip), streaming.

    ``wanted`` (module name -> how many modules of that name the dump holds) bounds what is kept to what can join
    a dumped module: the first that many compilations of each name, and no list of cache misses (their count
    and first line only). A log of a million lines then costs the state of its distinct functions, not its size.
    Without it, every compilation and cache miss is kept."""
    log = JaxLog(path)
    pending: dict[str, JaxCacheMiss] = {}
    kept: dict[str, int] = {}
    block: list[str] | None = None
    block_line = 0
    lineno = 0
    ordinal = 0
    compiling: int | None = None  # the kept compilation whose XLA compilation has not finished yet
    unusable: tuple[str, ...] = ()  # a warning printed before its Compiling line
    for raw in text_lines(path, warnings):
        lineno += 1
        text = raw.rstrip("\r\n")
        if block is not None:
            if text.startswith("  "):
                if len(block) < MAX_MISS_LINES:
                    block.append(text)
                continue
            _finish_miss(log, pending, block, block_line, wanted)
            block = None
        m = MISS_RE.search(text)
        if m is not None:
            block, block_line = [text[m.start():]], lineno
            continue
        m = _CACHE_HIT_RE.search(text)
        if m is not None:
            _mark_loaded(log, m.group(1))
            continue
        m = _UNUSABLE_RE.search(text)
        if m is not None:
            arrays = unusable_arrays(m.group(1))
            if compiling is not None:
                c = log.compilations[compiling]
                log.compilations[compiling] = replace(c, unusable_donations=c.unusable_donations + arrays)
            else:
                unusable += arrays
            continue
        if _FINISHED_RE.search(text):
            compiling = None
            continue
        m = _COMPILE_RE.search(text)
        if m is not None:
            function, name = _function_of(m.group(1)), module_name(m.group(1))
            miss = pending.pop(function, None)
            log.compiled_names.setdefault(name, lineno)
            if wanted is None or kept.get(name, 0) < wanted.get(name, 0):
                kept[name] = kept.get(name, 0) + 1
                log.compilations.append(JaxCompilation(function, name, ordinal, m.group(2), lineno, miss,
                                                       unusable_donations=unusable))
                compiling = len(log.compilations) - 1
            else:
                compiling = None
            unusable = ()
            ordinal += 1
    if block is not None:
        _finish_miss(log, pending, block, block_line, wanted)
    if not log.compiled_names and not log.miss_count and warnings is not None:
        warnings.append(InputWarning("no JAX cache-miss explanation or compilation here (not a "
                                     "JAX_EXPLAIN_CACHE_MISSES / JAX_LOG_COMPILES log?); ignored", path, 1))
    return log


def _mark_loaded(log: JaxLog, name: str) -> None:
    """The latest compilation of module ``name`` was a load from the persistent cache (JAX prints the hit between
    its ``Compiling`` and ``Finished XLA compilation`` lines)."""
    for k in range(len(log.compilations) - 1, -1, -1):
        if log.compilations[k].module_name == name.rstrip("_"):
            log.compilations[k] = replace(log.compilations[k], loaded=True)
            return


def check_jax_log(path: str) -> None:
    """Refuse (one-line error, exit 2) a file named with ``--jax-log`` that holds no JAX line at all: a torch
    stdout log passed by mistake would otherwise be listed as read and explain nothing, silently. Streams until
    the first JAX line (the first lines of a real log), so a GB log of something else is read once, in bounded
    memory."""
    for text in text_lines(path, None):
        if looks_like_jax_log(text):
            return
    raise HlodiffError("not a JAX log: no 'TRACING CACHE MISS' or 'Compiling jit(...)' line (capture stderr with "
                       "JAX_EXPLAIN_CACHE_MISSES=1 JAX_LOG_COMPILES=1)", path=path, line=1)


def looks_like_jax_log(head: str) -> bool:
    """Whether the beginning of a file reads like a JAX compile log (to find one beside a dump by content)."""
    return "TRACING CACHE MISS at " in head or bool(re.search(r"Compiling \S+ with global shapes and types", head))


def module_name(compiled: str) -> str:
    """``jit(step)`` -> ``jit_step``, the HLO module name JAX gives it: odd characters become ``_`` and trailing
    ones are dropped (``jit(<lambda>)`` -> ``jit__lambda``, as JAX 0.10.2 names the module)."""
    m = re.fullmatch(r"(\w+)\((.*)\)", compiled)
    name = compiled if m is None else f"{m.group(1)}_{m.group(2)}"
    return re.sub(r"[^\w.\-]", "_", name).rstrip("_")


def jit_module(function: str) -> str:
    """The module name ``jax.jit`` gives a function of this name (``scale_loss`` -> ``jit_scale_loss``)."""
    return module_name(f"jit({function})")


def join_modules(log: JaxLog, modules: Sequence[str], warnings: list[InputWarning] | None = None
                 ) -> list[JaxCompilation | None]:
    """For each dumped module name (in module-number order, e.g. ``jit_step``), the compilation of the log that
    produced it: the n-th module of a name goes with the n-th compilation of that name. Names meet as
    :func:`module_name` gives them, without trailing underscores, whichever JAX dumped the module. None where the log has
    no such compilation; a warning when the log looks like another run's (see :func:`_join_warning`). A log with
    cache misses and no compile line joins by the functions' names where they are unambiguous
    (:mod:`hlodiff.dumps.jax_name_join`), and says so."""
    if not log.compiled_names and log.miss_count:
        return _join_by_name(log, modules, warnings)
    by_name: dict[str, list[JaxCompilation]] = {}
    for compilation in log.compilations:
        by_name.setdefault(compilation.module_name, []).append(compilation)
    seen: dict[str, int] = {}
    joined: list[JaxCompilation | None] = []
    for name in modules:
        n = seen.get(name, 0)
        seen[name] = n + 1
        candidates = by_name.get(name.rstrip("_"), [])  # older JAX kept the trailing "_" (jit__lambda_)
        joined.append(candidates[n] if n < len(candidates) else None)
    if modules and warnings is not None:
        warning = _join_warning(log, [n.rstrip("_") for n in modules], joined)
        if warning is not None:
            warnings.append(warning)
    return joined


def _join_by_name(log: JaxLog, modules: Sequence[str], warnings: list[InputWarning] | None
                  ) -> list[JaxCompilation | None]:
    """The misses joined by function name, as compilations (``by_name``), and a line that says how (or why not)."""
    names = [n.rstrip("_") for n in modules]
    result = join_by_name(log.functions, names, jit_module)
    joined = [None if miss is None else JaxCompilation(miss.function, name, k, "", miss.line, miss, by_name=True)
              for k, (name, miss) in enumerate(zip(names, result.misses))]
    if warnings is not None:
        refused = "; ".join(result.refused.values())
        n = log.miss_count
        if result.matched:
            told = ", ".join(f"{f}: {k} miss{'es' if k != 1 else ''} and {k} {jit_module(f)} "
                             f"module{'s' if k != 1 else ''}" for f, k in result.matched.items())
            warnings.append(InputNote(
                f"no 'Compiling jit(...)' line: JAX's cache misses were joined to the dumped modules by function "
                f"name ({told})" + (f"; not joined: {refused}" if refused else ""), log.path, log.first_miss_line))
        elif modules:
            warnings.append(InputWarning(
                f"{n} cache-miss explanation{'s' if n != 1 else ''} but no 'Compiling jit(...)' line to join them to "
                "the dumped modules (capture with JAX_LOG_COMPILES=1 too); nothing joined"
                + (f" (by function name neither: {refused})" if refused else ""), log.path, log.first_miss_line))
    return joined


def _join_warning(log: JaxLog, modules: Sequence[str], joined: Sequence[JaxCompilation | None]
                  ) -> InputWarning | None:
    """Why JAX's reasons may be missing: cache misses without the compile lines they join by, or a log of another
    run. A log that compiles functions the dump does not hold while dumped functions have no compilation in it is
    another run's, even when a few helpers (``jit_convert_element_type``) every JAX run compiles happen to join.
    (A dumped module without a compilation alone is no sign: ``jax.jit(f, compiler_options=...)`` compiles again
    with no second compile line.)"""
    if not log.compiled_names:
        return None
    foreign = sorted(set(log.compiled_names) - set(modules))
    unjoined = sorted({n for n, c in zip(modules, joined) if c is None} - set(log.compiled_names))
    if not foreign or (any(joined) and not unjoined):
        return None
    names = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
    first = min(log.compiled_names[name] for name in foreign)
    if not any(joined):
        return InputWarning(f"the JAX log compiles {names} but the dump holds none of them: a log of another run? "
                            "nothing joined", log.path, first)
    missing = ", ".join(unjoined[:3]) + (", ..." if len(unjoined) > 3 else "")
    return InputWarning(f"the JAX log compiles {names}, which the dump does not hold, and never {missing}, which "
                        f"it does: a log of another run? {missing} joined nothing", log.path, first)


# -- one cache-miss message ---------------------------------------------------------------------------------------

def _finish_miss(log: JaxLog, pending: dict[str, JaxCacheMiss], block: list[str], line: int,
                 wanted: Mapping[str, int] | None) -> None:
    miss, object_id = parse_miss(block, line)
    if object_id:
        key = (miss.function, miss.defined_at.where if miss.defined_at is not None else None)
        if log.object_ids.get(key) == object_id:
            miss = replace(miss, same_object=True)
        log.object_ids[key] = object_id
    if wanted is None:
        log.cache_misses.append(miss)
    log.functions.add(miss, None if wanted is None else wanted.get(jit_module(miss.function), 0))
    log.miss_count += 1
    if log.first_miss_line is None:
        log.first_miss_line = line
    pending[miss.function] = miss


def _function_of(compiled: str) -> str:
    m = re.fullmatch(r"\w+\((.*)\)", compiled)
    return m.group(1) if m else compiled
