"""What a run's dumps hold, graph by graph: the table ``hlodiff inspect`` prints and ``explain-recompile`` starts from.

A graph is a *compilation* the first time its cache key is seen: torch_xla's ``Graph Hash`` (graphs with other text
but the same hash were cache hits), every module of an XLA dump folder (XLA dumps only what it compiles), and
otherwise the canonical fingerprint (the best stand-in for a cache key a plain HLO file offers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from hlodiff import progress
from hlodiff.dumps.evidence import GraphProtos
from hlodiff.dumps.graph_record import DUMPED_KINDS, LOADED_STAGE, TRACED_KINDS, GraphRecord
from hlodiff.errors import HloParseError, InputWarning
from hlodiff.graph import CanonicalModule, Normalization, canonicalize
from hlodiff.hlo.model import Module, SourceFrame, user_frame
from hlodiff.hlo.escapes import note_bad_escapes
from hlodiff.hlo.opcodes import note_unknown_opcodes

_ELIDED = "{...}"
"""How XLA's text prints a constant whose values it leaves out."""


@dataclass(slots=True)
class GraphSummary:
    """One graph of a run with the facts a user scans for: size, inputs, outputs, what triggered it."""

    record: GraphRecord
    name: str
    instructions: int
    parameters: int
    parameter_bytes: int
    outputs: int
    output_bytes: int
    fingerprint: str
    cache_key: str
    compiled: bool
    first_ref: str  # the graph that compiled this cache key (itself when compiled)
    trigger: SourceFrame | None
    """Where the user's code ran it: torch_xla's sync (or early read) line, or for a jitted function the line that
    called it (:func:`call_site_in`)."""
    _canonical: CanonicalModule | None = field(default=None, repr=False)
    _module: Module | None = field(default=None, repr=False)
    lines_from: str | None = None
    """The ref of a later occurrence of this graph whose source lines were used: it compiled while torch_xla
    recorded no lines (``hlodiff record --lines auto`` on a steady run, :mod:`hlodiff.capture.lines`)."""
    call_site: SourceFrame | None = None
    """When the stack that ran it names only library frames (torch.compile's bridge, ``dynamo_bridge.py:552``:
    torch_xla's log cuts those stacks at 8 frames): the user's line its instructions' stacks share, the call of the
    compiled function (:func:`call_site_in`); ``inspect`` shows it in place of the bridge's line (review 13, F8)."""

    @property
    def ref(self) -> str:
        return self.record.ref

    @property
    def loaded(self) -> bool:
        """A program JAX loaded from its persistent compilation cache: XLA dumped it after optimizations only
        (the dump's own word; :mod:`hlodiff.explain.cache_loads` adds the JAX log's)."""
        return self.compiled and self.record.kind == "xla_dump" and self.record.stage == LOADED_STAGE

    def to_json(self) -> dict:
        r = self.record
        return {
            "ref": r.ref,
            "source": r.source,
            "index": r.index,
            "kind": r.kind,
            "name": self.name,
            "graph_name": r.graph_name,
            "graph_hash": r.graph_hash,
            "module_number": r.module_number,
            "stage": r.stage,
            "cache_key": self.cache_key,
            "fingerprint": self.fingerprint,
            "compiled": self.compiled,
            "loaded_from_cache": self.loaded,
            "cache_hit_of": None if self.compiled else self.first_ref,
            "instructions": self.instructions,
            "parameters": {"count": self.parameters, "bytes": self.parameter_bytes},
            "outputs": {"count": self.outputs, "bytes": self.output_bytes},
            "trigger": self.trigger.to_json() if self.trigger else None,
            "call_site": self.call_site.to_json() if self.call_site else None,
            "frames": [f.to_json() for f in r.frames],
        }


def summarize(records: Iterable[GraphRecord], options: Normalization = Normalization(), *,
              keep: bool = False, parse_hits: bool = True,
              warnings: list[InputWarning] | None = None,
              unread: list[GraphRecord] | None = None, protos: GraphProtos) -> list[GraphSummary]:
    """Summaries in order; ``protos`` (the run's, :meth:`hlodiff.dumps.evidence.Run.protos`; ``NoProtos()`` for
    evidence in memory) lends each parsed graph its full stacks and the values of its ``{...}`` constants.

    Text that repeats byte for byte is parsed once, and only its facts are remembered (a 1 GB dump of 250
    graphs must not hold 250 parsed modules). ``keep`` holds on to the parsed and canonical modules of compiled
    graphs for callers that go on to compare them; ``parse_hits=False`` lets cache hits reuse the facts of the
    graph that compiled their key instead of being parsed at all. A module of an
    XLA dump folder that does not parse (written while the run was killed) is skipped with a warning when
    ``warnings`` is given, like a cut-off entry of a save-tensors file; the first record of each such module is
    appended to ``unread`` (it was compiled: a run with one cannot be called stable).

    With ``keep``, a graph of a save-tensors file that compiled while source lines were off takes its module from
    a later occurrence of its key that has them (``hlodiff record --lines auto``, :mod:`hlodiff.capture.lines`).
    """
    summaries: list[GraphSummary] = []
    first_by_key: dict[str, GraphSummary] = {}
    facts_by_text: dict[int, GraphSummary] = {}
    unknown: set[str] = set()  # opcodes already warned about
    unreadable: set[str] = set()  # module files of dump folders that did not parse (cut off by a killed process)
    lineless = _Lineless(options, protos) if keep else None
    bar = progress.task("reading graphs", len(records) if isinstance(records, (list, tuple)) else None, "graphs")
    for record in records:
        bar.advance()
        key = record.cache_key()
        if key is not None and record.kind == "xla_dump":
            key = f"{record.source}#{key}"
        known = first_by_key.get(key) if key is not None else None
        if lineless is not None and known is not None:
            lineless.offer(key, record)
        if known is not None and not parse_hits:
            summaries.append(CacheHit(record, known, known, keep=False))
            continue
        if record.path in unreadable:  # another execution of a module already skipped
            continue
        text = record.text()
        facts = facts_by_text.get(hash(text))
        if facts is None or keep or (_ELIDED in text and (record.proto_path or record.kind in TRACED_KINDS)):
            # (one text, two graphs, when the values of its {...} constants are in protos that differ)
            try:
                module = _parse(record, text)
            except HloParseError as err:
                if record.kind not in DUMPED_KINDS or warnings is None:
                    raise
                unreadable.add(record.path)
                if unread is not None:
                    unread.append(record)
                runs = sum(1 for r in records if r.path == record.path) if record.kind == "executions" and \
                    isinstance(records, (list, tuple)) else 1
                also = f" (and the {runs} executions that ran it)" if runs > 1 else ""
                warnings.append(InputWarning(f"module {record.module_number} skipped{also}: {err.message}",
                                             path=err.path, line=err.line))
                continue
            if warnings is not None:
                note_unknown_opcodes(module, warnings, unknown)
                note_bad_escapes(module, warnings)
            protos.complete(record, module, key, text, warnings)
            cm = canonicalize(module, options)
            facts = _summary(record, module, cm, keep)
            facts_by_text[hash(text)] = facts
        cache_key = key or f"fingerprint:{facts.fingerprint}"
        first = first_by_key.get(cache_key)
        if first is not None:
            summaries.append(CacheHit(record, facts, first, keep=keep))
            continue
        summary = _copy_for(record, facts)
        summary.cache_key, summary.compiled, summary.first_ref = cache_key, True, record.ref
        first_by_key[cache_key] = summary
        summaries.append(summary)
        if lineless is not None:
            lineless.note(summary, text)
    bar.close()
    return summaries


class _Lineless:
    """Compiled torch_xla graphs traced without source lines (op metadata but no ``source_file``), waiting for an
    occurrence of their key that has them; the graph's parsed module is then swapped for that occurrence's."""

    def __init__(self, options: Normalization, protos: GraphProtos):
        self.options = options
        self.protos = protos
        self.waiting: dict[str, GraphSummary] = {}

    def note(self, summary: GraphSummary, text: str) -> None:
        if summary.record.kind in TRACED_KINDS and "source_file=" not in text and "op_type=" in text:
            self.waiting[summary.cache_key] = summary

    def offer(self, key: str | None, record: GraphRecord) -> None:
        summary = self.waiting.get(key) if key is not None else None
        if summary is None:
            return
        text = record.text()
        if "source_file=" not in text:
            return
        try:
            module = _parse(record, text)
        except HloParseError:
            return
        if record.proto_path:
            module.full_stacks = self.protos.stacks(record)
        summary._module, summary._canonical = module, canonicalize(module, self.options)
        summary.lines_from = record.ref
        del self.waiting[key]


def _copy_for(record: GraphRecord, facts: GraphSummary) -> GraphSummary:
    if facts.record is record:
        return facts
    return GraphSummary(record, facts.name, facts.instructions, facts.parameters, facts.parameter_bytes,
                        facts.outputs, facts.output_bytes, facts.fingerprint, "", False, "",
                        _trigger(record) or facts.trigger, facts._canonical, facts._module,
                        call_site=facts.call_site)


def _shared(name: str) -> property:
    return property(lambda self: getattr(self._facts, name), doc=f"The {name} of the graph this one repeats.")


class CacheHit:
    """A graph whose cache key (or text) was seen before: the facts are those of the graph it repeats, only its
    record and trigger are its own.

    Five slots instead of a :class:`GraphSummary`'s fourteen fields: a run of a million steps is a million cache
    hits, and each must cost tens of bytes beyond its record, not a copy of every fact. Reads like a
    ``GraphSummary`` (same attributes, same JSON)."""

    __slots__ = ("record", "_facts", "_first", "_canonical", "_module")
    compiled = False

    def __init__(self, record: GraphRecord, facts: GraphSummary, first: GraphSummary, *, keep: bool):
        self.record, self._facts, self._first = record, facts, first
        self._canonical = facts._canonical if keep else None
        self._module = facts._module if keep else None

    name = _shared("name")
    call_site = _shared("call_site")
    instructions = _shared("instructions")
    parameters = _shared("parameters")
    parameter_bytes = _shared("parameter_bytes")
    outputs = _shared("outputs")
    output_bytes = _shared("output_bytes")
    fingerprint = _shared("fingerprint")

    @property
    def cache_key(self) -> str:
        return self._first.cache_key

    @property
    def first_ref(self) -> str:
        return self._first.first_ref

    @property
    def trigger(self) -> SourceFrame | None:
        return _trigger(self.record) or self._facts.trigger

    ref = GraphSummary.ref
    loaded = GraphSummary.loaded
    to_json = GraphSummary.to_json

    def __repr__(self) -> str:
        return f"CacheHit({self.ref} of {self.first_ref})"


_TRIGGERS: dict[tuple, SourceFrame | None] = {}


def _trigger(record: GraphRecord) -> SourceFrame | None:
    """The user frame of the stack; stacks repeat from step to step (readers share one tuple per stack), so the
    answer is remembered per stack."""
    frames = record.frames
    if not frames:
        return None
    try:
        return _TRIGGERS[frames]
    except KeyError:
        if len(_TRIGGERS) > 65536:
            _TRIGGERS.clear()
        found = _TRIGGERS[frames] = user_frame(frames) or frames[0]
        return found


def call_site_in(cm: CanonicalModule, function: str | None = None) -> SourceFrame | None:
    """For a jitted function (JAX, whose stacks keep the user's frames): the line that called it; ``None`` when no
    stack has one. With the function's name (``jit_train_step`` -> ``train_step``), the frame just outside the
    function's own in each stack: a loop inside ``main()`` called at module level is called from the loop's line,
    not from ``main()`` (review 21, F3: the outermost frame told the module-level ``main()`` line). Without it (or
    no stack passes through it), the outermost user frame the stacks share."""
    counts: dict[SourceFrame, int] = {}
    callers: dict[SourceFrame, int] = {}
    for _, inst in cm.module.instructions():
        mine = [f for f in cm.frames(inst) if not f.is_library]
        if len(mine) >= 2 or (mine and mine[-1].function == "<module>"):
            counts[mine[-1]] = counts.get(mine[-1], 0) + 1
        caller = _caller_of(mine, function) if function else None
        if caller is not None:
            callers[caller] = callers.get(caller, 0) + 1
    found = callers or counts
    if not found:
        return None
    return max(found, key=lambda f: (found[f], -(f.line or 0)))


def _caller_of(chain: list[SourceFrame], function: str) -> SourceFrame | None:
    """The frame past the outermost frame of ``function`` (``train_step``, or ``main.<locals>.train_step`` for one
    defined inside another function) in an innermost-first chain of user frames."""
    own = [k for k, f in enumerate(chain) if f.function == function or f.function.endswith("." + function)]
    return chain[own[-1] + 1] if own and own[-1] + 1 < len(chain) else None


def jitted_function(name: str | None) -> str | None:
    """The Python name of the function a JAX module compiles (``jit_train_step`` -> ``train_step``); ``None`` for
    other modules and for lambdas (``jit__lambda``: every lambda inside the function has that name too)."""
    if not name or not name.startswith(("jit_", "pmap_")):
        return None
    function = name.split("_", 1)[1].rstrip("_")
    return function if function and function not in ("_lambda", "lambda") else None


def _parse(record: GraphRecord, text: str) -> Module:
    return record.parse(text)


def _summary(record: GraphRecord, module: Module, cm: CanonicalModule, keep: bool) -> GraphSummary:
    entry = module.entry
    params = entry.parameters()
    root_shape = entry.root.shape
    outputs = list(root_shape.tuple_shapes) if root_shape.is_tuple else [root_shape]
    return GraphSummary(
        record=record,
        name=module.name or record.module_name or "",
        instructions=module.instruction_count(),
        parameters=len(params),
        parameter_bytes=sum(p.shape.byte_size() for p in params),
        outputs=len(outputs),
        output_bytes=sum(s.byte_size() for s in outputs),
        fingerprint=cm.fingerprint,
        cache_key="",
        compiled=False,
        first_ref=record.ref,
        trigger=_trigger(record) or (call_site_in(cm, jitted_function(module.name or record.module_name))
                                     if record.kind not in TRACED_KINDS else None),
        _canonical=cm if keep else None,
        _module=module if keep else None,
        call_site=call_site_in(cm) if _library_only(record) else None,
    )


def _library_only(record: GraphRecord) -> bool:
    """The record's stack names frames, none of them the user's."""
    return bool(record.frames) and user_frame(record.frames) is None


def inventory(records: list[GraphRecord], warnings: list[InputWarning], options: Normalization = Normalization(), *,
              keep: bool = False, protos: GraphProtos) -> list[GraphSummary]:
    """Summaries of every graph of a run's ``records`` (:func:`hlodiff.dumps.evidence.collect_records`), in
    order."""
    return summarize(records, options, keep=keep, warnings=warnings, protos=protos)
