"""The Dynamo findings' types (:class:`DynamoRecompile`, :class:`GraphBreakFinding`, :class:`DynamoFindings`) and
what reads only their own fields: the recompilation that leads (:func:`recurring_lead`), the name of what the user
compiled (:func:`compiled_name`), the size guard's text (``_SIZE``). The facts over a run's recompilations and the fix
row each gets are :mod:`hlodiff.explain.dynamo_recompile_fixes`.

Their own module because both sides of the join build and read them: :mod:`hlodiff.explain.dynamo` (Dynamo's log)
and :mod:`hlodiff.explain.dynamo_xla` (the XLA graphs), and dynamo calls dynamo_xla: kept in dynamo, the two imported
each other.
"""

from __future__ import annotations

from collections import Counter

import re
from dataclasses import dataclass, field

from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.dumps.dynamo_log import DynamoCompile, GuardFailure
from hlodiff.explain.pattern_words import _in_brief
from hlodiff.hlo.model import SourceFrame

_SIZE = re.compile(r"tensor '(?P<name>.+?)' (?:size|stride) mismatch at index (?P<dim>\d+)\. expected "
                   r"(?P<expected>\d+), actual (?P<actual>\d+)")


def size_guard_groups(recompiles) -> dict[tuple[str, str], list[tuple["DynamoRecompile", int, int]]]:
    """Per guarded tensor name and dimension, its size-guard recompilations with the expected and actual sizes
    (the one parse of a size guard that the symbolic-size and grown-by-cat readers both need)."""
    groups: dict[tuple[str, str], list[tuple[DynamoRecompile, int, int]]] = {}
    for r in recompiles:
        m = _SIZE.search(r.guard.guard) if r.kind == "shape" else None
        if m is not None:
            groups.setdefault((m.group("name"), m.group("dim")), []).append(
                (r, int(m.group("expected")), int(m.group("actual"))))
    return groups


@dataclass(slots=True)
class DynamoRecompile:
    """One Dynamo recompilation in the user's terms."""

    compile_id: str
    function: str | None
    kind: str
    """``shape``, ``dtype``, ``python_value``, ``mode`` or ``guard`` (any other failed guard)."""
    guard: GuardFailure
    location: SourceFrame | None
    """The user's line: the call of the compiled function (TORCH_TRACE), else the guard's own line, else the
    function's definition (TORCH_LOGS text holds no call stack)."""
    subject: str | None = None
    """The tensor or Python name the guard is about (``feats``, ``temperature``)."""
    xla: str | None = None
    """``compiled``: XLA compiled a new graph for it; ``cache_hit``: XLA reused a graph (only Dynamo paid);
    None: not known (no XLA side read)."""
    difference: str | None = None
    """What changed in the XLA graphs, from hlodiff's comparison of them (the leading cause's summary)."""
    difference_graph: str | None = None
    difference_kind: str | None = None
    """The kind of the leading cause of that difference; ``shape`` when any of its causes is a new size (the
    XLA graph took another size)."""
    difference_rule: str | None = None
    """The fix row hlodiff chose for that leading cause from the graphs alone (``shape_buckets``: the sizes recur,
    each compiled once)."""
    fix: str | None = None
    fix_rule: str | None = None
    facts: frozenset[str] = frozenset({"dynamo"})
    """The evidence the fix row is chosen by (:mod:`hlodiff.diff.fix_rules`)."""
    seen: str = ""
    """What the guard saw, in words for the fix (``dim 0 of feats: 8 -> 4``)."""
    subject_words: str | None = None
    """What an internal name of Dynamo's in the guard stands for, in the user's terms (``___stack2``: "the value
    made at c3.py:12 before the graph break"; review 18: the headline showed the internal name only)."""
    located: str | None = None
    """Which line ``location`` is: ``call`` (the user's call, from TORCH_TRACE), ``guard`` (the line Dynamo's
    guard names), ``definition`` (the compiled function's ``def``: a TORCH_LOGS text log holds no call stack),
    ``xla_call`` (the call, read from the stack of the XLA graph the recompilation compiled, where Dynamo's records
    name only the ``def``), ``source_call`` (the one call of the function in its source file, read from disk), ``compiled_call`` (Dynamo named
    torch's wrapper of a compiled module: the one call of a ``torch.compile`` result in the user's files),
    ``mode_call`` (of several such calls, the one the source runs in the mode a failed ``training`` guard did not
    hold), ``backend_call`` (no guard failed: the one call of the function's torch.compile with another backend
    than torch_xla's, read from disk: :mod:`hlodiff.explain.dynamo_backends`)."""
    limit: int | None = None
    """Dynamo's recompile limit, when its log says this frame hit it (fact ``limit_hit``)."""
    called_at: SourceFrame | None = None
    """The user's call of the compiled function, read from the source, when ``location`` is the guard's line in the
    function (:mod:`hlodiff.explain.dynamo_call_line`): the line that passed the new value."""
    guard_at: SourceFrame | None = None
    """The line Dynamo's guard names inside the compiled function (a Python value's use), kept beside the call when
    the call leads (``source_call``: review 14, F4, the README promises the call first)."""

    @property
    def expected(self) -> bool:
        return self.fix_rule in EXPECTED

    def to_json(self) -> dict:
        return {"compile_id": self.compile_id, "function": self.function, "kind": self.kind,
                "guard": self.guard.guard, "against": self.guard.against, "subject": self.subject,
                "subject_words": self.subject_words,
                "location": self.location.to_json() if self.location else None, "located": self.located,
                "called_at": self.called_at.to_json() if self.called_at else None,
                "guard_at": self.guard_at.to_json() if self.guard_at else None,
                "xla": self.xla,
                "difference": self.difference, "difference_graph": self.difference_graph,
                "fix": self.fix, "fix_rule": self.fix_rule, "expected": self.expected}


@dataclass(slots=True)
class GraphBreakFinding:
    """The graph breaks at one user line: how many, why, and how to remove them."""

    reason: str
    explanation: str | None
    location: SourceFrame | None
    call: SourceFrame | None
    count: int
    graphs: int
    """How many graphs Dynamo made of the function (the pieces around the breaks)."""
    fix: str | None = None
    fix_rule: str | None = None
    raised: bool = False
    """Dynamo raised it (``torch.compile(fullgraph=True)``): the program stopped at the call, nothing compiled."""

    kind = "graph_break"

    def to_json(self) -> dict:
        return {"reason": self.reason, "explanation": self.explanation,
                "location": self.location.to_json() if self.location else None,
                "call": self.call.to_json() if self.call else None, "count": self.count, "graphs": self.graphs,
                "fix": self.fix, "fix_rule": self.fix_rule, "raised": self.raised}


@dataclass(slots=True)
class DynamoFindings:
    logs: list[str]
    compiles: list[DynamoCompile] = field(default_factory=list)
    recompiles: list[DynamoRecompile] = field(default_factory=list)
    graph_breaks: list[GraphBreakFinding] = field(default_factory=list)
    bridge_compilations: list[str] = field(default_factory=list)
    """Refs of XLA graphs compiled by the bridge (Dynamo's graphs, their backward, the bridge's own syncs)."""
    bridge_recompilations: list[str] = field(default_factory=list)
    """Refs of XLA recompilations in the bridge's families: told by Dynamo's reason, not as XLA's own."""
    cache_hits: int = 0
    """Dynamo recompilations that found their XLA graph compiled already (only Dynamo paid)."""
    xla_graphs: dict[str, list[str]] = field(default_factory=dict)
    """Per Dynamo compile id, the XLA graphs the bridge compiled for it (joined by compile order)."""
    xla_sizes: list[DynamoRecompile] = field(default_factory=list)
    """XLA recompilations for new input sizes with no Dynamo recompilation behind them: Dynamo traced once with a
    symbolic size (``dynamic=True``, ``mark_dynamic``) and the bridge compiles each concrete size. One finding
    for them all; ``xla_size_graphs`` lists the graphs."""
    xla_size_graphs: list[str] = field(default_factory=list)
    follows_expected: list[str] = field(default_factory=list)
    """Refs of XLA recompilations outside the bridge that changed with Dynamo's expected recompilations (the step
    around the compiled call, in the step the bridge compiled the new graph): expected with them."""
    past_limit_graphs: list[str] = field(default_factory=list)
    """Refs of XLA recompilations outside the bridge that hold the code of a frame past Dynamo's recompile limit,
    run eagerly (:mod:`hlodiff.explain.dynamo_past_limit`): they follow from the limit, never a headline's reason."""
    eager_break_graphs: list[str] = field(default_factory=list)
    """Refs of XLA recompilations of a run where a graph break left Dynamo with no graph at all: the compiled
    function ran uncompiled in the step (:mod:`hlodiff.explain.dynamo_eager_break`); told by the break."""
    first_call_syncs: list[str] = field(default_factory=list)
    """Refs of XLA recompilations outside the bridge whose family differs on its first graph only: the first
    compiled call's step, cut by the bridge's own syncs while it compiled (expected, never a headline's reason)."""
    compilations_only: list[str] = field(default_factory=list)
    """Refs of XLA recompilations of a run read from compilations only (a dump without torch_xla's execution log)
    that fit the bridge's warm-up (:mod:`hlodiff.explain.dynamo_compiled_only`): which step they ran on is not
    known, expected if the first; never a headline's reason."""
    random_inputs: list[DynamoRecompile] = field(default_factory=list)
    """The bridge's sync of the call's inputs compiled anew each call because an input was drawn on the device and
    never synced (:mod:`hlodiff.explain.dynamo_random_inputs`): one finding, unexpected; ``random_input_graphs``
    lists the graphs."""
    random_input_graphs: list[str] = field(default_factory=list)
    resets: list[DynamoRecompile] = field(default_factory=list)
    """Functions Dynamo compiled from scratch again (kind ``reset``: its caches emptied, torch._dynamo.reset()),
    one finding each (:mod:`hlodiff.explain.dynamo_reset`)."""
    converted: list[DynamoRecompile] = field(default_factory=list)
    """The compiled model's parameters converted to another float type after compiling, with no retrace after it
    (:mod:`hlodiff.explain.dynamo_converted`): one finding, unexpected; no guard failed."""
    traced: bool = False
    limit_hits: list[tuple[str, int]] = field(default_factory=list)
    no_log: bool = False
    """The run has the bridge's graphs but no Dynamo log was given or found: what Dynamo did is unknown."""
    empty_log: str | None = None
    """With ``no_log``: an empty stderr / TORCH_LOGS file beside the dump (review 19, F6: README's recipe leaves a
    0-byte stderr.log when Dynamo logged nothing): told as empty, not as missing."""
    fx_compilations: list[str] = field(default_factory=list)
    """Refs of the bridge's compilations of Dynamo's FX graphs (torch_xla: "dynamo is compiling a FX graph to
    HLO"): a new one is a Dynamo trace, whose reason only Dynamo's log tells (:func:`hlodiff.explain.explanation.
    Explanation.xla_headline` without it)."""
    """Where Dynamo hit its recompile limit (compile id, limit): later calls of that frame ran without Dynamo."""
    """A TORCH_TRACE log was read (it records the caller of a compiled nn.Module, not of a compiled function)."""

    @property
    def headline(self) -> DynamoRecompile | GraphBreakFinding | None:
        unexpected = self.unexpected
        if unexpected:
            return recurring_lead(unexpected)
        # a break inside library code (the optimizer's own graph_break()) asks nothing of the user: an expected
        # recompilation of theirs says more (dyn_unfreeze_group: a compiled opt.step after add_param_group)
        mine = [b for b in self.graph_breaks if b.fix_rule != "dynamo_graph_break_library"]
        if mine or (self.graph_breaks and not self.recompiles):
            return (mine or self.graph_breaks)[0]
        return self.recompiles[0] if self.recompiles else None

    @property
    def unexpected(self) -> list[DynamoRecompile]:
        return ([r for r in self.recompiles if not r.expected] + [r for r in self.xla_sizes if not r.expected]
                + [r for r in self.random_inputs if not r.expected] + [r for r in self.resets if not r.expected]
                + [r for r in self.converted if not r.expected])

    def unexpected_after(self, warmup: int | None, steps: dict[str, int]) -> list[DynamoRecompile]:
        """The unexpected ones past ``--warmup N`` (``steps``: XLA graph ref -> call, :func:`call_positions`). A
        recompilation is warm-up only when every XLA graph it compiled ran before call N; one whose XLA graph was a cache hit has no step
        in the dump and stays unexpected (hlodiff cannot place it, so it does not excuse it)."""
        if warmup is None:
            return self.unexpected
        late = []
        for r in self.unexpected:
            refs = (self.xla_size_graphs if r in self.xla_sizes else self.random_input_graphs
                    if r in self.random_inputs else [r.difference_graph] if r.difference_graph else [])
            if not refs or any(steps.get(ref, warmup) >= warmup for ref in refs):
                late.append(r)
        return late

    def sentence(self) -> str:
        """One line for the top of the report."""
        if self.no_log and self.empty_log:
            k = len(self.bridge_compilations)
            name = self.empty_log.replace("\\", "/").rsplit("/", 1)[-1]
            return (f"torch.compile run whose {name} beside the dump is empty: if it was captured with "
                    f"TORCH_LOGS=recompiles,graph_breaks, Dynamo logged no recompilation and no graph break; {k} XLA compilation"
                    f"{'s' if k != 1 else ''} by torch_xla's Dynamo bridge")
        if self.no_log:
            k = len(self.bridge_compilations)
            # review 8 F2: a TORCH_LOGS=recompiles log of a run Dynamo never retraced is empty, and an empty file
            # says nothing of what wrote it: the sentence says so instead of asking for a log the user captured
            return (f"torch.compile run without Dynamo's log (none found beside the dump; TORCH_LOGS=recompiles,"
                    f"graph_breaks or TORCH_TRACE=DIR says whether Dynamo retraced, and an empty TORCH_LOGS file "
                    f"means it never did); {k} XLA compilation{'s' if k != 1 else ''} by torch_xla's Dynamo bridge")
        functions = sorted({compiled_name(c) for c in self.compiles if c.function and not c.resume}) or sorted(
            {b.location.function for b in self.graph_breaks if b.location and b.location.function})  # a breaks-only log
        # a log of guard trees only (TORCH_LOGS=guards) names no function: their comments name the lines traced,
        # inlined code's too, so the words say how many frames were compiled, not a name they cannot back
        nameless = {c.frame for c in self.compiles if not c.function and not c.resume}
        what = ", ".join(functions) or (f"{len(nameless)} functions its log does not name" if len(nameless) > 1
                                        else "a function its log does not name")
        n = len(self.recompiles)
        # a TORCH_LOGS=recompiles log names only the recompilations: frame F's compile F/k says k came before it
        attempts: dict[int, int] = {}
        gave_up = {cid for cid, _ in self.limit_hits}  # the attempt that hit the limit compiled nothing
        # a function Dynamo gave up (WON'T CONVERT: its backend failed) was never compiled: it runs eagerly
        given_up = {b.location.function for b in self.graph_breaks
                    if b.fix_rule == "dynamo_gave_up" and b.location is not None}
        for c in self.compiles:
            if not c.resume and c.compile_id not in gave_up and c.function not in given_up:
                attempts[c.frame] = max(attempts.get(c.frame, 0), c.attempt + 1)
        times = sum(attempts.values()) or (0 if given_up else 1)
        times += sum(int(r.seen.split()[0]) - 1 for r in self.resets)  # compiled from scratch again after a reset
        raised = not self.compiles and any(b.raised for b in self.graph_breaks)
        # a break that left Dynamo with no graph at all (round 20: inside a loop it gives the frame up)
        no_graph = not raised and bool(self.graph_breaks) and all(
            b.graphs == 0 and not b.raised and b.fix_rule != "dynamo_gave_up" for b in self.graph_breaks)
        parts = [f"Dynamo compiled nothing: it raised at the first call of {what} (a graph break under "
                 f"fullgraph=True) and the program stopped" if raised
                 else f"Dynamo made no graph of {what}: a graph break gave it up, and it runs uncompiled on every "
                      f"call" if no_graph
                 else f"Dynamo compiled {what} {times} time{'s' if times != 1 else ''}" if times
                 else f"Dynamo compiled nothing: it gave up on {what}, which runs eagerly"]
        for cid, limit in self.limit_hits:
            # review 18 F1: the fact a user needs first: the function left torch.compile for the rest of the run
            fn = self.limited_function(cid) or "the function"
            parts.append(f"then it gave up on {fn} at its recompile limit ({limit}): the attempt {cid} compiled "
                         f"nothing, and from that call on {fn} ran without torch.compile (eagerly, op by op)")
        if n:
            head = recurring_lead(self.recompiles)
            where = f" at {head.location.short()}" if head.location else ""
            guard = (head.guard.guard.replace(head.subject, head.subject_words, 1)
                     if head.subject_words and head.subject else head.guard.guard)
            parts.append(f"{n} recompilation{'s' if n != 1 else ''} ({head.compile_id}{where}: {guard})")
        for r in self.resets:
            parts.append(f"{r.function} compiled from scratch {r.seen} (no guard failed: Dynamo's cache was emptied, "
                         "torch._dynamo.reset())")
        for r in self.converted:
            parts.append(f"then the compiled model's parameters were converted {r.seen} and it traced nothing "
                         "again (no guard on them)")
        if self.cache_hits:
            parts.append(f"{self.cache_hits} of them found the XLA graph compiled already (only Dynamo paid)")
        if self.xla_sizes:
            k = len(self.xla_size_graphs)
            parts.append(f"{k} XLA recompilation{'s' if k != 1 else ''} for new sizes Dynamo traced once "
                         f"({self.xla_sizes[0].seen})")
        for r in self.random_inputs:
            k = len(self.random_input_graphs)
            parts.append(f"{k} XLA compilation{'s' if k != 1 else ''} of the call's inputs, a new one each call "
                         "(an input drawn on the device, never synced)")
        if self.graph_breaks:
            b = self.graph_breaks[0]
            more = len(self.graph_breaks) - 1
            count = b.count
            # review 18: the count is the first finding's, as its entry below says it ("1 in the log"), not the sum
            # of every finding beside the first's reason ("6 graph breaks at :12 (.item())" over "1 in the log")
            others = f" (+{more} more graph break finding{'s' if more != 1 else ''} below)" if more else ""
            parts.append(f"{count} graph break{'s' if count != 1 else ''}"
                         f"{' at ' + b.location.short() if b.location else ''} ({b.reason}){others}"
                         if b.fix_rule != "dynamo_gave_up" else
                         f"WON'T CONVERT{' at ' + b.location.short() if b.location else ''} (the backend failed)")
        if self.bridge_compilations:
            k = len(self.bridge_compilations)
            parts.append(f"{k} XLA compilation{'s' if k != 1 else ''} by torch_xla's Dynamo bridge")
        return "; ".join(parts)

    def limited_function(self, cid: str) -> str | None:
        """The function whose frame hit the recompile limit at ``cid``, as the user compiled it."""
        frame = int(cid.split("/")[0])
        return next((compiled_name(c) for c in self.compiles if c.frame == frame and c.function and not c.resume),
                    None)

    def xla_summary(self, explanation) -> str:
        """The XLA side of the report's first line. The bridge's recompilations that Dynamo's story tells
        (:func:`hlodiff.explain.dynamo_bridge_words.bridge_consequences`) are counted, not told again family by
        family (review F5: one-line headlines of 600-900 characters, their patterns read as causes of their own)."""
        text = explanation.summary
        told = set(self.bridge_recompilations) - set(self.xla_size_graphs)
        counts = getattr(explanation, "counts", None)
        if self.no_log or not told or counts is None or counts.loaded:
            return text
        of_family: dict[int, list[bool]] = {}
        for r in explanation.recompilations:
            of_family.setdefault(id(r.family), []).append(r.graph.ref in told)
        rest = [_in_brief(p) for f, p in zip(explanation.families, explanation.pattern_facts)
                if p.name != "steady" and not all(of_family.get(id(f), [False]))]
        k = sum(1 for r in explanation.recompilations if r.graph.ref in told)
        return (f"{counts.head()} ({k} by the bridge)"
                + (": " + "; ".join(rest) if rest else ""))

    def to_json(self) -> dict:
        head = self.headline
        return {"logs": self.logs, "compiles": [c.to_json() for c in self.compiles],
                "recompiles": [r.to_json() for r in self.recompiles],
                "graph_breaks": [b.to_json() for b in self.graph_breaks],
                "bridge_compilations": self.bridge_compilations,
                "bridge_recompilations": self.bridge_recompilations,
                "cache_hits": self.cache_hits, "xla_graphs": self.xla_graphs,
                "limit_hits": [{"compile_id": c, "limit": n, "function": self.limited_function(c)}
                               for c, n in self.limit_hits],
                "xla_sizes": [r.to_json() for r in self.xla_sizes], "xla_size_graphs": self.xla_size_graphs,
                "resets": [r.to_json() for r in self.resets],
                "converted": [r.to_json() for r in self.converted],
                "random_inputs": [r.to_json() for r in self.random_inputs],
                "random_input_graphs": self.random_input_graphs,
                "first_call_syncs": self.first_call_syncs, "compilations_only": self.compilations_only, "past_limit_graphs": self.past_limit_graphs, "eager_break_graphs": self.eager_break_graphs, "follows_expected": self.follows_expected,
                "no_log": self.no_log, "empty_log": self.empty_log,
                "headline": head.to_json() | {"kind": head.kind} if head is not None else None,
                "unexpected": [r.compile_id for r in self.unexpected]}


_VALUE = re.compile(r"-?\b\d+(?:\.\d+)?(?:e-?\d+)?\b|(?<=== )(?:'[^']*'|\"[^\"]*\")|\b(?:True|False|None)\b")
"""A literal in a guard's text: the value it checked (``self.layer_idx == 1``), not what it checks."""


def _reason(r) -> tuple | None:
    """What a recompilation's guard checks, whatever the value: the frame, the guard's kind and its text with the
    values left out (``self.layer_idx == _`` for ``== 1`` and ``== 2``). Two checks of one name (``not acts``, then
    ``len(acts) == 1``: a list a hook grows) are two reasons. None for a finding that is no guard's."""
    if not isinstance(r, DynamoRecompile):
        return None
    return (r.compile_id.split("/")[0], r.kind, _VALUE.sub("_", r.guard.guard or ""))


def recurring_lead(found: list) -> object:
    """The recompilation that leads the story: the first, unless its reason came once in its frame while another
    reason of that frame recurs, then the first of the most recurring one. One frame's retraces are read in their
    order, and the first compile's own difference (block 0's input is data, the others' carry gradients: round 19,
    r19_d_layer_idx_attr) fails once before a per-layer guard fails five times: the recurring guard is what grows
    with the model, the single one is incidental."""
    first = found[0]
    key = _reason(first)
    if key is None:
        return first
    counts = Counter(_reason(r) for r in found if _reason(r) is not None)
    if counts[key] > 1:
        return first
    frame = key[0]
    recurring = [(n, k) for k, n in counts.items() if k[0] == frame and n > 1]
    if not recurring:
        return first
    best = max(n for n, _ in recurring)
    return next(r for r in found if _reason(r) is not None and counts[_reason(r)] == best and _reason(r)[0] == frame)


def wrapped_module(c: DynamoCompile) -> bool:
    """Dynamo names library code, never a line of the user's, when its log gives a library definition: torch's own
    wrapper when an ``nn.Module`` was compiled (``torch.compile(model)``: ``inner`` in
    ``torch/_dynamo/external_utils.py``), or a library function compiled as it is."""
    return c.definition is not None and c.definition.is_library


def compiled_name(c: DynamoCompile) -> str | None:
    """What the user compiled, in their terms, when Dynamo names only torch's wrapper of it (``inner`` in
    ``external_utils.py``): torch wraps a compiled nn.Module and a compiled bound method alike
    (``torch.compile(model)``, ``torch.compile(opt.step)``: dyn_sched_lr), so the words claim neither."""
    if wrapped_module(c) and "/torch/_dynamo/" in c.definition.file.replace("\\", "/"):
        # review 5 F8: torch's wrapper is no name of the user's; review 6: the object the user's call names, when
        # the call's line is known and its file is here (`cmodel` in `out = cmodel(req)`)
        return f"`{c.callee}`" if c.callee else "the module or method you passed to torch.compile"
    return c.function
