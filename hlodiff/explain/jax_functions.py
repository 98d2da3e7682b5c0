"""Which JAX function a dumped module compiles, when several functions share one name (review F5).

JAX names a module after the jitted function: ``jax.jit(loss)`` and ``jax.jit(jax.grad(loss))`` both give
``jit_loss`` (``jax.grad`` keeps ``__name__``), and two functions named ``step`` (or two lambdas) in different
files give ``jit_step`` (``jit__lambda``). Grouped by name alone they read as one function recompiling, and the
story tells "the traced Python takes another path" between a gradient and its forward. This module tells them
apart on evidence only; where the evidence cannot tell, the modules stay one family (a recompilation of one
function for a new shape, dtype or static argument is the common case and must stay told).

Evidence that a module compiles another function than the earlier modules of its name:

* ``defined_at``: JAX's cache-miss log names the function's definition site (``step id=... defined at
  FILE:LINE``), and no earlier function of the name was defined there.
* ``new_object``: JAX had never seen this function object (``never seen function``), without its hint that
  another function was created on the same call line (a function re-created per call, which *is* the
  recompilation story and stays in its family), first called from a line no earlier function of the name was
  called from, and the program differs from every earlier one of its definition: ``jax.jit(jax.grad(f))`` beside
  ``jax.jit(f)``. (The same definition re-created elsewhere with the same program stays: that is JAX recompiling
  identical code.)
* ``traced_inside``: JAX compiled it without tracing it again (no cache miss while the log explains misses) for
  the very argument types of the previous compilation of the name, yet the program's results differ: the same
  function with the same arguments gives the same program, so this one was traced earlier inside another (a
  ``@jax.jit`` forward first traced inside ``jax.jit(jax.grad(forward))``). A donation or compile-option change
  (same arguments, same results) stays.
* ``autodiff`` (no log): every operation JAX named in the module is under a transform of the whole function
  (``jit(loss)/jvp()/...``, ``jit(loss)/transpose(jvp())/...``: ``jax.jit(jax.grad(loss))``) in one module and under
  none in another (``jit(loss)/dot_general``: ``jax.jit(loss)``): no static argument turns a function into its
  gradient, so these are two functions (tenth stop: a dump without its log told them "either two functions or a
  static argument"). A function that takes a gradient inside (a train step: its update is outside the ``jvp``) has
  both kinds and is told by nothing here.
* ``own_frames`` (no log): the module's own frames (those of the function it is named after) lie in files that
  none of an earlier function's frames of the name lie in: another function of the same name. A ``<lambda>`` is
  one expression, so its frames lie on its own line(s): lambdas whose frames share no line are two lambdas.

Functions the log identifies as one (``for step defined at ...``) join the function first called from that line,
else the latest of that definition.

Without a log, a user function compiled again for the very arguments of the previous module of its name, with
other results, from another call line, is either a gradient beside its forward or a static argument: nothing in
the dump tells which, so the story says what was seen and how to tell (:class:`SameNameDoubt`) instead of
choosing; the modules stay one family.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.dumps.jax_log import JaxCompilation
from hlodiff.explain.inventory import GraphSummary
from hlodiff.hlo.model import SourceFrame

SPLIT_REASONS = ("defined_at", "new_object", "traced_inside", "autodiff", "own_frames")
"""Every :attr:`FunctionSplit.reason`."""


@dataclass(frozen=True, slots=True)
class FunctionSplit:
    """A module compiling another function than the first of its name: ``index`` numbers the functions of the
    name from 0 in order of first compilation (0 is never split), ``reason`` one of :data:`SPLIT_REASONS`,
    ``where`` the line that tells it apart (its definition for ``defined_at``, else the line that called it)."""

    index: int
    reason: str
    where: SourceFrame | None

    def to_json(self) -> dict:
        return {"index": self.index, "reason": self.reason,
                "where": self.where.to_json() if self.where is not None else None}

    def label(self, name: str) -> str:
        at = f" {'defined' if self.reason in ('defined_at', 'own_frames') else 'called'} at {self.where.short()}" \
            if self.where is not None else ""
        return f"{name} (another function of this name{at})"


@dataclass(slots=True)
class _Function:
    index: int
    defined_at: SourceFrame | None
    call_sites: set = field(default_factory=set)
    programs: set = field(default_factory=set)
    files: frozenset = frozenset()
    differentiated: bool | None = None
    split: FunctionSplit | None = None


def function_splits(graphs: list[GraphSummary], joined: dict[str, JaxCompilation], explained: bool
                    ) -> dict[str, FunctionSplit]:
    """Graph ref -> its :class:`FunctionSplit`, for the compiled JAX modules (of an XLA dump) that compile another
    function than the first one of their name; modules of the first function are absent. ``joined``: the JAX
    log's compilation of each module (:func:`hlodiff.explain.jax_causes.jax_compilations`); ``explained``: that
    log explains cache misses (``JAX_EXPLAIN_CACHE_MISSES=1``)."""
    out: dict[str, FunctionSplit] = {}
    functions: dict[str, list[_Function]] = {}
    last: dict[str, tuple[_Function, GraphSummary, JaxCompilation | None]] = {}
    for graph in graphs:
        if graph.record.kind != "xla_dump" or not graph.compiled or graph._module is None:
            continue
        name = (graph.record.module_name or graph.name or "").rstrip("_")
        if not name.startswith(("jit_", "pmap_")):
            continue
        compilation = joined.get(graph.ref)
        known = functions.setdefault(name, [])
        function = _which(graph, compilation, explained, known, last.get(name))
        if function is None:
            function = _Function(len(known), _defined_at(compilation))
            if known:
                function.split = _split_of(graph, compilation, explained, known, last.get(name), len(known))
            known.append(function)
        miss = compilation.cache_miss if compilation is not None else None
        if miss is not None and miss.call_site is not None:
            function.call_sites.add(_where(miss.call_site))
        function.programs.add(graph.fingerprint)
        function.files = function.files | _body_files(graph)
        if function.differentiated is None:
            function.differentiated = _differentiated(graph)
        if function.split is not None:
            out[graph.ref] = function.split
        last[name] = (function, graph, compilation)
    return out


def _which(graph: GraphSummary, compilation: JaxCompilation | None, explained: bool, known: list[_Function],
           previous: tuple[_Function, GraphSummary, JaxCompilation | None] | None) -> _Function | None:
    """The known function this module compiles, or None for a new one (see the module docstring)."""
    if not known:
        return None
    miss = compilation.cache_miss if compilation is not None else None
    if miss is None:
        if explained and compilation is not None and previous is not None and any(f.defined_at for f in known) \
            and _traced_inside(graph, compilation, *previous[1:]):
            return None
        if compilation is None and not explained and previous is not None:
            files = _body_files(graph)
            if files and all(f.files and not (f.files & files) for f in known):
                return None
            whole = _differentiated(graph)
            if whole is not None and all(f.differentiated is not None and f.differentiated != whole for f in known):
                return None
            alike = [f for f in known if whole is not None and f.differentiated == whole]
            if alike and previous[0] not in alike:  # the forward again after its gradient: the forward's
                return alike[-1]
        return previous[0] if previous is not None else known[-1]
    defined = _where(miss.defined_at) if miss.defined_at is not None else None
    same_definition = [f for f in known if defined is None or f.defined_at is None
                       or _where(f.defined_at) == defined]
    if not same_definition:
        return None
    kinds = {r.kind for r in miss.reasons}
    site = _where(miss.call_site) if miss.call_site is not None else None
    if "never_seen" in kinds and "redefined_function" not in kinds and site is not None \
            and all(site not in f.call_sites for f in known) \
            and all(graph.fingerprint not in f.programs for f in same_definition):
        return None
    by_site = [f for f in same_definition if site is not None and site in f.call_sites]
    # review 11 (F2, jx_kwargs): a call from a new line that compiles a program one function of the definition
    # already compiled (the same function called with `y=` by keyword, a cache-key miss with identical HLO) is that
    # function again, not the latest of the name (a jax.jit(jax.value_and_grad(f)) compiled in between)
    same_program = [f for f in same_definition if graph.fingerprint in f.programs]
    return (by_site or same_program or same_definition)[-1]


def _split_of(graph: GraphSummary, compilation: JaxCompilation | None, explained: bool, known: list[_Function],
              previous, index: int) -> FunctionSplit:
    miss = compilation.cache_miss if compilation is not None else None
    if miss is not None:
        defined = _where(miss.defined_at) if miss.defined_at is not None else None
        if defined is not None and all(f.defined_at is not None and _where(f.defined_at) != defined for f in known):
            return FunctionSplit(index, "defined_at", miss.defined_at)
        return FunctionSplit(index, "new_object", miss.call_site)
    if explained and compilation is not None:
        return FunctionSplit(index, "traced_inside", _caller(graph) or graph.trigger)
    whole = _differentiated(graph)
    if whole is not None and all(f.differentiated is not None and f.differentiated != whole for f in known):
        return FunctionSplit(index, "autodiff", _caller(graph) or graph.trigger)
    first = min(_body_files(graph), default=None)
    return FunctionSplit(index, "own_frames", SourceFrame(*first) if first is not None else None)


_TRANSFORMS = ("jvp(", "transpose(jvp(", "vjp(")
"""JAX's name-stack entries of a differentiated function (the forward under ``jvp``, the backward under
``transpose(jvp)``)."""


def _differentiated(graph: GraphSummary) -> bool | None:
    """True when every operation JAX named after the module's function (``jit(loss)/...``) is under a transform of
    the whole function (``jax.jit(jax.grad(loss))``), False when none is (``jax.jit(loss)``), None when some are (a
    step that takes a gradient inside) or nothing is named."""
    from hlodiff.errors import HlodiffError
    from hlodiff.hlo.attributes import parse_metadata

    under = outside = 0
    for comp in graph._module.computations:
        for inst in comp.instructions:
            raw = inst.attrs.get("metadata")
            if not raw:
                continue
            try:
                op_name = parse_metadata(raw).op_name or ""
            except HlodiffError:  # unreadable metadata says nothing
                continue
            head, slash, rest = op_name.partition("/")
            if not slash or not head.startswith(("jit(", "pmap(")):
                continue
            if rest.startswith(_TRANSFORMS):
                under += 1
            else:
                outside += 1
            if under and outside:
                return None
    return (under > 0) if under or outside else None


def _traced_inside(graph: GraphSummary, compilation: JaxCompilation, previous: GraphSummary,
                   before: JaxCompilation | None) -> bool:
    """Compiled for the previous compilation's very arguments without a new trace, with other results."""
    if before is None or before.arguments != compilation.arguments:
        return False
    return _signature(graph) != _signature(previous)


def _signature(graph: GraphSummary):
    entry = graph._module.entry
    if entry.signature is not None:
        params, result = entry.signature
        return tuple(str(s) for _, s in params), str(result)
    return tuple(str(p.shape) for p in entry.parameters()), str(entry.root.shape)


def _function_names(graph: GraphSummary) -> set[str]:
    """How Python spells the function the module is named after (``jit_step`` -> ``step``, ``jit__lambda`` ->
    ``<lambda>``)."""
    name = (graph.record.module_name or graph.name or "").rstrip("_").split("_", 1)[-1]
    return {name, "<lambda>"} if name in ("_lambda", "lambda") else {name}


def _caller(graph: GraphSummary) -> SourceFrame | None:
    """The line that called the function the module is named after: the first frame past the function's own in
    the module's stacks (JAX's call site, where the whole-program trigger is the outermost line)."""
    table = graph._module.stack_frames
    wanted = _function_names(graph)
    outside: list[SourceFrame] = []  # chains without the function (a transformed call: jvp of it), deepest first
    for frame_id in sorted(table.frames):
        chain = table.resolve(frame_id)
        inside = [k for k, f in enumerate(chain) if f.function in wanted]
        if inside and inside[-1] + 1 < len(chain):
            return chain[inside[-1] + 1]
        if not inside and chain and len(chain) > len(outside):
            outside = chain
    return outside[0] if outside else None


def _body_files(graph: GraphSummary) -> frozenset:
    """Where the function the module is named after has frames (``jit_step`` -> ``step``): ``(file, None)`` per
    file, or ``(file, line)`` per line for a ``<lambda>`` (one expression: its frames are its own lines)."""
    table = graph._module.stack_frames
    wanted = _function_names(graph)
    ids = {i for i, fn in table.function_names.items() if fn in wanted}
    by_line = "<lambda>" in wanted
    return frozenset((table.file_names.get(loc.file_name_id, ""), loc.line if by_line else None)
                     for loc in table.file_locations.values() if loc.function_name_id in ids)


def _defined_at(compilation: JaxCompilation | None) -> SourceFrame | None:
    miss = compilation.cache_miss if compilation is not None else None
    return miss.defined_at if miss is not None else None


def _where(frame: SourceFrame) -> tuple:
    return frame.file, frame.line


@dataclass(frozen=True, slots=True)
class SameNameDoubt:
    """Without a JAX log: a module compiled for the very arguments of the previous one of its name, with other
    results, called from another line. One function recompiling (a static argument) and two functions of one
    name (``jax.jit(jax.grad(f))`` beside ``jax.jit(f)``) both fit; only JAX's log tells them apart, so the
    story says what was seen instead of choosing."""

    called_at: SourceFrame | None
    before_called_at: SourceFrame | None
    arguments: tuple[str, ...]
    results_before: str
    results_now: str

    def fix(self, name: str, log_given: bool = False) -> str:
        """The words; ``log_given``: a JAX log is in the capture (``hlodiff record`` writes one) but was not joined
        here (a live line, before the run's end): no "rerun with" then."""
        at = (f" called from {self.called_at.short()} (the earlier one from {self.before_called_at.short()})"
              if self.called_at is not None and self.before_called_at is not None else "")
        return (f"seen: {name}{at} compiled again for the same arguments ({', '.join(self.arguments)}) with other "
                f"results ({self.results_before} -> {self.results_now}): either two functions of this name (jax.jit "
                "of a function and of its jax.grad / value_and_grad, nothing recompiled) or one function whose "
                "static argument changed; JAX's log tells which" + ("" if log_given else
                ": rerun with JAX_EXPLAIN_CACHE_MISSES=1 JAX_LOG_COMPILES=1 (stderr beside the dump)"))


def same_name_doubts(families, joined: dict[str, JaxCompilation], explained: bool) -> dict[str, SameNameDoubt]:
    """Graph ref -> :class:`SameNameDoubt`, for JAX dump modules read without a log (see its docstring)."""
    out: dict[str, SameNameDoubt] = {}
    if explained or joined:
        return out
    for family in families:
        compiled = [g for g in family.compiled if g.record.kind == "xla_dump" and g._module is not None
                    and (g.record.module_name or "").startswith("jit_")]
        for before, now in zip(compiled, compiled[1:]):
            (args_before, res_before), (args_now, res_now) = _signature(before), _signature(now)
            if not (_body_files(before) and _body_files(now)):  # JAX's own (an eager op): shapes are static
                continue
            here, there = _caller(now), _caller(before)
            if args_before == args_now and res_before != res_now and here is not None and there is not None \
                    and (here.file, here.line) != (there.file, there.line):
                out[now.ref] = SameNameDoubt(here, there, tuple(_short(a) for a in args_now), _short(res_before),
                                             _short(res_now))
    return out


def _short(shape: str) -> str:
    """``f32[8,4]{1,0}`` -> ``f32[8,4]``: the layout says nothing a user compares here."""
    import re

    return re.sub(r"\{[0-9,]*\}", "", shape)
