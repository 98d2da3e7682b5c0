"""Dynamo's recompilations joined to the XLA graphs, told as the user of ``torch.compile(backend="openxla")`` sees
them.

Two levels compile in such a program: Dynamo traces the Python function into an FX graph (guarded: a failed guard
means a new trace, compile id ``0/1``), and torch_xla's bridge compiles each FX graph, and the syncs it does on its
own, to XLA. What changed for Dynamo is in Dynamo's log (:mod:`hlodiff.dumps.dynamo_log`); what changed in the
graphs is in the XLA dump. This module takes the reason from Dynamo's log (the failed guard, at the user's call of
the compiled function) and the difference from the graphs, and says which level paid:

* a Dynamo recompilation whose XLA graph was already compiled (torch_xla passes Python scalars as device data):
  only Dynamo paid;
* XLA compilations with no Dynamo recompilation behind them: the bridge's own graphs (the backward, its syncs while
  compiling, its warm-up): expected;
* graph breaks: a finding of their own (how many, why, the user's line), never a recompilation.

Facts are typed here; the words of the fixes are rows of :mod:`hlodiff.diff.fix_rules` (kinds ``shape``, ``dtype``,
``python_value``, ``mode``, ``guard``, ``graph_break`` with the fact ``dynamo``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.diff.fixes import FixChoice, choose
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.errors import InputWarning
from hlodiff.explain.dynamo_bridge import bridge_run
from hlodiff.hlo.model import SourceFrame

_SIZE = re.compile(r"tensor '(?P<name>.+?)' (?:size|stride) mismatch at index (?P<dim>\d+)\. expected "
                   r"(?P<expected>\d+), actual (?P<actual>\d+)")
_DTYPE = re.compile(r"tensor '(?P<name>[^']+)' dtype mismatch\. expected (?P<expected>\w+), actual (?P<actual>\w+)")
_VALUE = re.compile(r"^(?P<name>[\w.\[\]'\"]+) == (?P<value>-?[\d.]+(?:e[-+]?\d+)?|True|False)$")
_MODULE_ATTRIBUTE = re.compile(r"^(?:self|L\['self'\])(?:\._modules\[['\"][^'\"]+['\"]\])*\.\w+$")
"""A guard on a plain attribute of the compiled module or a submodule (``self.step == 0``; torch 2.9 guards an
nn.Module's int and float attributes by value: pytorch/pytorch#115711). An item of a container on ``self``
(``self.param_groups[0]['lr']`` of a compiled ``opt.step``: dyn_sched_lr) is no module attribute."""
_STRING = re.compile(r"^(?P<name>[\w.\[\]'\"]+) == (?P<value>'[^']*'|\"[^\"]*\")$")
"""A Python string argument or attribute guarded by value (``mode == 'train'``, ``task == 'cls'``): one traced
graph per name; a string can never be a tensor."""
_MODE = re.compile(r"GLOBAL_STATE changed: (?P<what>grad_mode|autocast\w*)|\.training\b")
_LENGTH = re.compile(r"^len\((?P<name>[^()]+)\) (?:==|!=) (?P<value>\d+)$")
"""A container's length: the guard as compiled (``len(crops) == 2``) or, for an nn.Module's container, as torch
2.9 prints the failure (``len(self._modules['blocks']._modules) != 2``); either way the value is the length the
failed entry was compiled for."""
_MODULES = re.compile(r"\._modules\[(?P<q>['\"])(?P<key>[^'\"]+)(?P=q)\]")
_DICT_KEY = re.compile(r"^(?P<negated>not )?___dict_contains\((?P<key>'[^']*'|\"[^\"]*\"), (?P<name>[^()]+)\)$")
_NONE = re.compile(r"^(?P<name>[\w.\[\]'\"]+) is (?P<negated>not )?None$")
_HOOKS = re.compile(r"(?P<name>[\w.\[\]'\"]+?)\._(?P<which>(?:forward|forward_pre|backward|backward_pre)_hooks)\b")
"""A guard on an nn.Module's hook dict (``not fn._forward_hooks``, ``len(L['self']._forward_pre_hooks) == 1``):
Dynamo guards a compiled module's hooks when ``skip_nnmodule_hook_guards`` is off (review 3, F4)."""
_GLOBAL = re.compile(r"^G\[")
"""A name Dynamo reads from the module's globals (``G['__import___main__'].acts``): no argument of the call."""
_GLOBAL_TRUTH = re.compile(r"^(?P<negated>not )?(?P<name>G\[[^\]]+\](?:\.\w+)*)$")
"""A guard on a global's truth (``not G['__import___main__'].acts``): it was empty (or false), now it is not."""
_IMPORTED = re.compile(r"^G\['__import_[^']*'\]\.")
_REQUIRES_GRAD = re.compile(r"tensor '(?P<name>[^']+)' requires_grad mismatch")
# Dynamo round 5: a tensor argument's exact type (an nn.Parameter, then a plain tensor: torch 2.9 prints the guard
# with a stray quote), its dispatch keys (an inference tensor has no Autograd key), an object's class
_TENSOR_TYPE = re.compile(r"expected type of '(?P<name>[^']+)' to be a tensor type, '? ?but found (?P<found><class '[^']+'>)")
_DISPATCH = re.compile(r"tensor '(?P<name>[^']+)' dispatch key set mismatch\. expected DispatchKeySet\((?P<expected>[^)]*)\), "
                       r"actual DispatchKeySet\((?P<actual>[^)]*)\)")
_TYPE_ID = re.compile(r"^___check_type_id\((?P<name>[^,()]+), \d+\)$")


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
    located: str | None = None
    """Which line ``location`` is: ``call`` (the user's call, from TORCH_TRACE), ``guard`` (the line Dynamo's
    guard names), ``definition`` (the compiled function's ``def``: a TORCH_LOGS text log holds no call stack)."""
    limit: int | None = None
    """Dynamo's recompile limit, when its log says this frame hit it (fact ``limit_hit``)."""

    @property
    def expected(self) -> bool:
        return self.fix_rule in EXPECTED

    def to_json(self) -> dict:
        return {"compile_id": self.compile_id, "function": self.function, "kind": self.kind,
                "guard": self.guard.guard, "against": self.guard.against, "subject": self.subject,
                "location": self.location.to_json() if self.location else None, "located": self.located,
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

    kind = "graph_break"

    def to_json(self) -> dict:
        return {"reason": self.reason, "explanation": self.explanation,
                "location": self.location.to_json() if self.location else None,
                "call": self.call.to_json() if self.call else None, "count": self.count, "graphs": self.graphs,
                "fix": self.fix, "fix_rule": self.fix_rule}


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
    first_call_syncs: list[str] = field(default_factory=list)
    """Refs of XLA recompilations outside the bridge whose family differs on its first graph only: the first
    compiled call's step, cut by the bridge's own syncs while it compiled (expected, never a headline's reason)."""
    traced: bool = False
    limit_hits: list[tuple[str, int]] = field(default_factory=list)
    no_log: bool = False
    """The run has the bridge's graphs but no Dynamo log was given or found: what Dynamo did is unknown."""
    """Where Dynamo hit its recompile limit (compile id, limit): later calls of that frame ran without Dynamo."""
    """A TORCH_TRACE log was read (it records the caller of a compiled nn.Module, not of a compiled function)."""

    @property
    def headline(self) -> DynamoRecompile | GraphBreakFinding | None:
        unexpected = self.unexpected
        if unexpected:
            return unexpected[0]
        # a break inside library code (the optimizer's own graph_break()) asks nothing of the user: an expected
        # recompilation of theirs says more (dyn_unfreeze_group: a compiled opt.step after add_param_group)
        mine = [b for b in self.graph_breaks if b.fix_rule != "dynamo_graph_break_library"]
        if mine or (self.graph_breaks and not self.recompiles):
            return (mine or self.graph_breaks)[0]
        return self.recompiles[0] if self.recompiles else None

    @property
    def unexpected(self) -> list[DynamoRecompile]:
        return [r for r in self.recompiles if not r.expected] + [r for r in self.xla_sizes if not r.expected]

    def unexpected_after(self, warmup: int | None, steps: dict[str, int]) -> list[DynamoRecompile]:
        """The unexpected ones past ``--warmup N`` (``steps``: XLA graph ref -> call, :func:`call_positions`). A
        recompilation is warm-up only when every XLA graph it compiled ran before call N; one whose XLA graph was a cache hit has no step
        in the dump and stays unexpected (hlodiff cannot place it, so it does not excuse it)."""
        if warmup is None:
            return self.unexpected
        late = []
        for r in self.unexpected:
            refs = self.xla_size_graphs if r in self.xla_sizes else [r.difference_graph] if r.difference_graph else []
            if not refs or any(steps.get(ref, warmup) >= warmup for ref in refs):
                late.append(r)
        return late

    def sentence(self) -> str:
        """One line for the top of the report."""
        if self.no_log:
            k = len(self.bridge_compilations)
            return (f"torch.compile run without Dynamo's log (TORCH_LOGS=recompiles,graph_breaks or TORCH_TRACE=DIR "
                    f"says whether Dynamo retraced); {k} XLA compilation{'s' if k != 1 else ''} by torch_xla's "
                    "Dynamo bridge")
        functions = sorted({compiled_name(c) for c in self.compiles if c.function and not c.resume}) or sorted(
            {b.location.function for b in self.graph_breaks if b.location and b.location.function})  # a breaks-only log
        what = ", ".join(functions) or "the compiled function"
        n = len(self.recompiles)
        # a TORCH_LOGS=recompiles log names only the recompilations: frame F's compile F/k says k came before it
        attempts: dict[int, int] = {}
        gave_up = {cid for cid, _ in self.limit_hits}  # the attempt that hit the limit compiled nothing
        for c in self.compiles:
            if not c.resume and c.compile_id not in gave_up:
                attempts[c.frame] = max(attempts.get(c.frame, 0), c.attempt + 1)
        times = sum(attempts.values()) or 1
        parts = [f"Dynamo compiled {what} {times} time{'s' if times != 1 else ''}"]
        if n:
            head = self.recompiles[0]
            where = f" at {head.location.short()}" if head.location else ""
            parts.append(f"{n} recompilation{'s' if n != 1 else ''} ({head.compile_id}{where}: {head.guard.guard})")
        for cid, limit in self.limit_hits:
            fn = next((compiled_name(c) for c in self.compiles if c.frame == int(cid.split("/")[0]) and c.function),
                      None)
            parts.append(f"Dynamo hit its recompile limit ({limit}) at {cid}: later calls of {fn or 'the function'} "
                         "ran without Dynamo (eagerly, op by op)")
        if self.cache_hits:
            parts.append(f"{self.cache_hits} of them found the XLA graph compiled already (only Dynamo paid)")
        if self.xla_sizes:
            k = len(self.xla_size_graphs)
            parts.append(f"{k} XLA recompilation{'s' if k != 1 else ''} for new sizes Dynamo traced once "
                         f"({self.xla_sizes[0].seen})")
        if self.graph_breaks:
            count = sum(b.count for b in self.graph_breaks)
            b = self.graph_breaks[0]
            parts.append(f"{count} graph break{'s' if count != 1 else ''}"
                         f"{' at ' + b.location.short() if b.location else ''} ({b.reason})")
        if self.bridge_compilations:
            k = len(self.bridge_compilations)
            parts.append(f"{k} XLA compilation{'s' if k != 1 else ''} by torch_xla's Dynamo bridge")
        return "; ".join(parts)

    def xla_summary(self, explanation) -> str:
        """The XLA side of the report's first line. The bridge's recompilations that Dynamo's story tells
        (:func:`bridge_consequences`) are counted, not told again family by family (review F5: one-line headlines of
        600-900 characters, their patterns read as causes of their own)."""
        text = explanation.summary
        told = set(self.bridge_recompilations) - set(self.xla_size_graphs)
        head = re.match(r"\d+ graphs?, \d+ compilations?, \d+ recompilations?", text)
        if self.no_log or not told or head is None:
            return text
        from hlodiff.explain.recompile import _in_brief

        of_family: dict[int, list[bool]] = {}
        for r in explanation.recompilations:
            of_family.setdefault(id(r.family), []).append(r.graph.ref in told)
        rest = [_in_brief(p) for f, p in zip(explanation.families, explanation.pattern_facts)
                if p.name != "steady" and not all(of_family.get(id(f), [False]))]
        k = sum(1 for r in explanation.recompilations if r.graph.ref in told)
        return (f"{head.group(0)} ({k} by the bridge)"
                + (": " + "; ".join(rest) if rest else ""))

    def to_json(self) -> dict:
        head = self.headline
        return {"logs": self.logs, "compiles": [c.to_json() for c in self.compiles],
                "recompiles": [r.to_json() for r in self.recompiles],
                "graph_breaks": [b.to_json() for b in self.graph_breaks],
                "bridge_compilations": self.bridge_compilations,
                "bridge_recompilations": self.bridge_recompilations,
                "cache_hits": self.cache_hits, "xla_graphs": self.xla_graphs,
                "limit_hits": [{"compile_id": c, "limit": n} for c, n in self.limit_hits],
                "xla_sizes": [r.to_json() for r in self.xla_sizes], "xla_size_graphs": self.xla_size_graphs,
                "first_call_syncs": self.first_call_syncs, "follows_expected": self.follows_expected,
                "no_log": self.no_log,
                "headline": head.to_json() | {"kind": head.kind} if head is not None else None,
                "unexpected": [r.compile_id for r in self.unexpected]}


# -- reading and merging the logs -------------------------------------------------------------------------------------


def read_logs(logs: list[DynamoLog]) -> DynamoLog | None:
    """All Dynamo logs given or found (read by the run's evidence, :meth:`hlodiff.dumps.evidence.Run.read_dynamo`),
    merged by compile id: a TORCH_TRACE log first (it holds the call stacks), a TORCH_LOGS text log fills what it
    lacks."""
    logs = list(logs)
    logs.sort(key=lambda log: log.form != "trace")
    if not logs:
        return None
    merged = DynamoLog(logs[0].path, logs[0].form)
    for log in logs:
        for c in log.compiles:
            have = next((m for m in merged.compiles if m.compile_id == c.compile_id), None)
            if have is None:
                merged.compiles.append(c)
                continue
            have.function = have.function or c.function
            have.definition = have.definition or c.definition
            have.call = have.call or c.call
            have.failures = have.failures or c.failures
        if not merged.graph_breaks:
            merged.graph_breaks = list(log.graph_breaks)
        merged.limit_hits += [hit for hit in log.limit_hits if hit not in merged.limit_hits]
    merged.compiles.sort(key=lambda c: (c.frame, c.attempt))
    return merged


# -- the join --------------------------------------------------------------------------------------------------------


def findings(log: DynamoLog, paths: list[str], explanation, events: dict) -> DynamoFindings:
    """Dynamo's compiles and breaks, joined to the explanation's XLA graphs (``events``: PT_XLA_DEBUG compilations
    by graph hash)."""
    found = DynamoFindings(paths, list(log.compiles))
    cause_of = {h: e.cause for h, e in events.items()}
    bridge = [g for g in explanation.graphs if g.compiled and (bridge_run(g.record.frames,
                                                                          cause_of.get(g.record.graph_hash))
                                                               or _bridge_ops(g))]
    found.bridge_compilations = [g.ref for g in bridge]
    bridge_refs = set(found.bridge_compilations)
    xla_recompiles = [r for r in explanation.recompilations if r.graph.ref in bridge_refs]
    found.bridge_recompilations = [r.graph.ref for r in xla_recompiles]
    traced = [c for c in log.compiles if not c.resume]
    # Dynamo graphs that reached XLA as a compilation "dynamo is compiling a FX graph": fewer than Dynamo's compiles
    # (forward graphs; AOTAutograd's backward compiles later, with its own) means XLA reused graphs.
    fx = sum(1 for g in bridge if "dynamo is compiling" in (cause_of.get(g.record.graph_hash) or ""))
    backward = _has_backward(bridge, cause_of)
    # a TORCH_LOGS=recompiles log names only the recompilations: frame F's first compile F/0 is there all the same
    # (dyn_global_cfg: 5 compiles, not 4); the attempt that hit the recompile limit compiled nothing
    gave_up = {cid for cid, _ in log.limit_hits}
    firsts = {c.frame for c in traced if c.recompiled} - {c.frame for c in traced if not c.recompiled}
    made = sum(1 for c in traced if c.compile_id not in gave_up) + len(firsts)
    dynamo_graphs = made * (2 if backward else 1)
    found.cache_hits = max(0, dynamo_graphs - fx) // (2 if backward else 1) if fx else 0
    calls = [c for c in log.compiles if c.recompiled]
    found.recompiles = [_recompile(c, log, position == len(calls) - 1) for position, c in enumerate(calls)]
    limited = {cid.split("/")[0] for cid, _ in log.limit_hits}
    limits = {cid.split("/")[0]: n for cid, n in log.limit_hits}
    for r in found.recompiles:
        if r.compile_id.split("/")[0] in limited:  # this frame ran past Dynamo's recompile limit
            r.facts = r.facts | {"limit_hit"}
            r.limit = limits[r.compile_id.split("/")[0]]
    # XLA reused graphs for the last ones (new graphs come first: its cache only grows), and the bridge's XLA
    # recompilations in compile order belong to the Dynamo recompilations that compiled: the last that many
    # (the first bridge graphs are the first Dynamo compile's forward, backward and syncs)
    # never more cache hits than recompilations: a compiled library method (torch.compile(opt.step)) breaks into
    # frames whose compiles reach XLA as fewer graphs than the count above assumes (dyn_sched_lr: 4 of 2)
    found.cache_hits = min(found.cache_hits, len(found.recompiles))
    paid = len(found.recompiles) - found.cache_hits
    for r in found.recompiles[paid:]:
        r.xla = "cache_hit"
    from hlodiff.explain.dynamo_xla import paired_graphs

    for r, x in zip(found.recompiles[:paid], paired_graphs(explanation, bridge_refs, xla_recompiles, paid)):
        lead = x.causes[0] if x.causes else None
        r.difference, r.difference_graph = (lead.summary if lead else None), x.graph.ref
        r.difference_kind = lead.kind if lead else None
        r.difference_rule = lead.fix_rule if lead else None
        if any(c.kind == "shape" for c in x.causes):  # a size changed with it (a slice's bounds lead, a shape follows)
            r.difference_kind = "shape"
        r.xla = "compiled"
        if r.location is None and r.located == "wrapper":  # the XLA graph's own source lines are the user's then
            r.location = next((f for c in x.causes for f in c.locations if not f.is_library), None)
            r.located = "xla" if r.location is not None else r.located
    from hlodiff.explain.dynamo_xla import padded_buckets, sized, xla_sizes

    padded_buckets(found.recompiles)
    for r in found.recompiles:
        if r.xla is None and fx:
            r.xla = "compiled"
        if "python_int" in r.facts and r.xla == "compiled" and r.difference_kind == "shape":
            r.facts = r.facts | {"sets_shape"}  # the int sets a size: XLA compiled a graph of another shape for it
        choose_fix(r)
    found.xla_sizes = xla_sizes(found, traced, xla_recompiles)
    found.xla_size_graphs = [x.graph.ref for x in xla_recompiles if found.xla_sizes and sized(x, found)]
    found.xla_graphs = _graphs_by_compile(found, traced)
    found.graph_breaks = _breaks(log)
    from hlodiff.explain.dynamo_xla import first_call_syncs

    found.first_call_syncs = first_call_syncs(explanation, found)
    return found


def _bridge_ops(g) -> bool:
    """A dumped graph with no stack and no debug log whose ops name the bridge's file as their source (review F5:
    a dump with XLA_HLO_DEBUG only: the bridge's graphs carry ``source_file=.../torch_xla/_dynamo/...``)."""
    module = g._module
    if g.record.frames or module is None:
        return False
    sources = {m.group(1).replace("\\", "/") for comp in module.computations for ins in comp.instructions
               if (m := _SOURCE_FILE.search(ins.attrs.get("metadata", ""))) is not None}
    # an FX graph the bridge runs dispatches every op through torch's OpOverload (torch/_ops.py); eager user code
    # names the user's file
    return any("torch_xla/_dynamo/" in f for f in sources) or (
        bool(sources) and all(f.endswith("/torch/_ops.py") for f in sources))


_SOURCE_FILE = re.compile(r'source_file="([^"]*)"')


def _graphs_by_compile(found: DynamoFindings, traced: list[DynamoCompile]) -> dict[str, list[str]]:
    """The bridge's XLA compilations cut in compile order at each paired recompilation's graph: the first Dynamo
    compile owns what comes before the first cut, each recompilation XLA paid for what follows its own; a cache
    hit owns none."""
    if not traced:
        return {}
    owned: dict[str, list[str]] = {c.compile_id: [] for c in traced}
    cuts = {r.difference_graph: r.compile_id for r in found.recompiles if r.difference_graph}
    owner = traced[0].compile_id
    for ref in found.bridge_compilations:
        owner = cuts.get(ref, owner)
        owned.setdefault(owner, []).append(ref)
    return owned


def recompiles_of(log: DynamoLog) -> list[DynamoRecompile]:
    """Dynamo's recompilations alone, each with its kind and fix (no XLA side: the pytest plugin's check)."""
    calls = [c for c in log.compiles if c.recompiled]
    found = [_recompile(c, log, position == len(calls) - 1) for position, c in enumerate(calls)]
    for r in found:
        choose_fix(r)
    return found


def _has_backward(bridge, cause_of) -> bool:
    """AOTAutograd's backward graph is compiled by the bridge too: its stacks pass through the backward wrapper."""
    return any(any("_backward" in (f.function or "") for f in g.record.frames) for g in bridge)


def _recompile(c: DynamoCompile, log: DynamoLog, last: bool) -> DynamoRecompile:
    failure = c.failures[0] if c.failures else GuardFailure(None, "a guard failed (Dynamo's log names none)")
    kind, subject, seen, facts = _classify(failure.guard)
    if last and "leading_dim_shrank" in facts:
        facts.add("last_call")
    definition = None if wrapped_module(c) else c.definition
    location = c.call or failure.source or definition
    located = ("call" if c.call else "guard" if failure.source else "definition" if definition
               else "wrapper" if wrapped_module(c) else None)
    if location is not None and location.is_library and not c.call:
        # Dynamo compiled library code (torch.compile(opt.step): torch's step in sgd.py) and its guard names a
        # library line; the user's line that reached it is the one the graph breaks' tracebacks share, if one
        users = {(b.call.file, b.call.line): b.call for b in log.graph_breaks
                 if b.call is not None and not b.call.is_library}
        if len(users) == 1:
            location, located = next(iter(users.values())), "call"
    return DynamoRecompile(c.compile_id, compiled_name(c), kind, failure, location, subject,
                           facts=frozenset(facts), seen=seen, located=located)


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
        return "your compiled module or method (torch's wrapper of it)"
    return c.function


def _classify(guard: str) -> tuple[str, str | None, str, set[str]]:
    facts: set[str] = {"dynamo"}
    if (m := _SIZE.search(guard)) is not None:
        expected, actual = int(m.group("expected")), int(m.group("actual"))
        if m.group("dim") == "0" and actual < expected:
            facts.add("leading_dim_shrank")
        if "._parameters[" in m.group("name"):  # a module's parameter (self._modules['head']._parameters['bias'])
            facts.add("parameter_shape")  # the module was replaced or resized between calls, not an input's size
        return "shape", m.group("name"), f"dim {m.group('dim')} of {m.group('name')}: {expected} -> {actual}", facts
    if (m := _DTYPE.search(guard)) is not None:
        seen = f"{_dtype(m.group('expected'))} then {_dtype(m.group('actual'))}"
        return "dtype", m.group("name"), seen, facts
    if (m := _MODE.search(guard)) is not None:
        if (m.group("what") or "").startswith("autocast"):
            facts.add("autocast")  # torch.autocast on for some calls only (GLOBAL_STATE changed: autocast)
        return "mode", None, guard, facts
    if (m := _REQUIRES_GRAD.search(guard)) is not None:
        return "guard", m.group("name"), guard, facts | {"requires_grad"}
    if (m := _TENSOR_TYPE.search(guard)) is not None:
        return "guard", m.group("name"), f"a {m.group('found')} where a tensor of another type came first", \
            facts | {"tensor_type"}
    if (m := _DISPATCH.search(guard)) is not None:
        if ("Autograd" in m.group("expected")) != ("Autograd" in m.group("actual")):
            facts.add("inference_tensor")  # made under torch.inference_mode() on one side only
        return "guard", m.group("name"), guard.strip(), facts
    if (m := _TYPE_ID.match(guard.strip())) is not None:
        return "guard", _global(m.group("name")), guard.strip(), facts | {"object_type"}
    if (m := _HOOKS.search(guard)) is not None:
        return "guard", f"the compiled module (`{m.group('name')}`)", guard.strip(), facts | {"module_hooks"}
    if (m := _GLOBAL_TRUTH.match(guard.strip())) is not None:
        return "guard", _global(m.group("name")), guard.strip(), facts | {"global_name", "global_truth"}
    if (m := _LENGTH.match(guard.strip())) is not None:
        name = m.group("name")
        if _GLOBAL.match(name):
            facts.add("global_name")
            name = _global(name)
        if "._modules" in name:  # an nn.Module's ModuleList / Sequential / ModuleDict: its submodules, not data
            facts.add("module_container")
            name = _MODULES.sub(lambda k: "." + k.group("key"), name).removesuffix("._modules")
        if name.endswith(".param_groups"):  # a compiled optimizer step's groups (opt.add_param_group)
            facts.add("optimizer_groups")
        return "guard", name, f"len({name}) was {m.group('value')}", facts | {"container_length"}
    if (m := _NONE.match(guard.strip())) is not None:
        return "guard", m.group("name"), guard.strip(), facts | {"optional_none"}
    if (m := _DICT_KEY.match(guard.strip())) is not None:
        return "guard", m.group("name"), m.group("key"), facts | {"dict_keys"}
    if (m := _STRING.match(guard.strip())) is not None:
        return "python_value", m.group("name"), f"{m.group('name')} was {m.group('value')}", facts | {"python_string"}
    if (m := _VALUE.match(guard.strip())) is not None:
        value = m.group("value")
        facts.add("python_flag" if value in ("True", "False") else "python_int" if re.fullmatch(r"-?\d+", value)
                  else "python_float")
        if _MODULE_ATTRIBUTE.match(m.group("name")):
            facts.add("module_attribute")  # a number kept on the compiled module (a step counter): a buffer fits
        return "python_value", m.group("name"), f"{m.group('name')} was {value}", facts
    return "guard", None, guard, facts


def _global(name: str) -> str:
    """``G['__import___main__'].acts`` -> ``acts``: the user's global, as their script names it."""
    return _IMPORTED.sub("", name)


def _dtype(name: str) -> str:
    return {"Float": "float32", "BFloat16": "bfloat16", "Half": "float16", "Double": "float64",
            "Long": "int64", "Int": "int32", "Bool": "bool"}.get(name, name)


def choose_fix(r: DynamoRecompile) -> None:
    rule = choose(r.kind, r.facts)
    args = {"function": r.function or "the compiled function", "seen": r.seen or r.guard.guard,
            "tensor": r.subject or "an argument", "limit": str(r.limit) if r.limit is not None else "8"}
    r.fix, r.fix_rule = FixChoice(rule, args).text, rule.name


def _breaks(log: DynamoLog) -> list[GraphBreakFinding]:
    by_line: dict[tuple, list[GraphBreak]] = {}
    for b in log.graph_breaks:
        key = (b.at.file, b.at.line) if b.at else (b.reason,)
        by_line.setdefault(key, []).append(b)
    resumes = sum(1 for c in log.compiles if c.resume)
    found = []
    for group in by_line.values():
        first = group[0]
        graphs = 1 + max(resumes, len(group))
        facts = {"dynamo"}
        if "print" in (first.explanation or "") or "`print`" in first.reason:
            facts.add("op:print")
        elif "Tensor.item()" in first.reason or "Tensor.item()" in (first.explanation or ""):
            facts.add("op:item")
        location = first.at
        if first.at is not None and first.at.is_library and first.call is not None and not first.call.is_library:
            # inside torch's own code (torch.compile(opt.step): the optimizer's graph_break(), a wrapper Dynamo
            # skips): no line of the user's breaks it; their call is the line, the library frame is what was seen
            facts.add("in_library")
            location = first.call
        rule = choose("graph_break", frozenset(facts))
        seen = (str(graphs) if "op:print" in facts
                else f"{first.reason}, at {first.at.short()}" if "in_library" in facts else first.reason)
        finding = GraphBreakFinding(first.reason, first.explanation, location, first.call, len(group), graphs)
        finding.fix, finding.fix_rule = FixChoice(rule, {"seen": seen}).text, rule.name
        found.append(finding)
    return found


BRIDGE_HINT = ("the graph's frames end in torch.compile's XLA bridge; Dynamo's log names your line (above)")
"""For a cause of the bridge's XLA graphs with no user line: where the line is (a live-tensor report would not
reach it: the bridge's stacks never leave torch)."""


def quiet_bridge_hints(explanation, found: DynamoFindings) -> None:
    """The bridge's XLA recompilations are told by Dynamo's reason: their causes point there, and the run's hint to
    capture live-tensor reports (which cannot reach lines through the bridge) goes when only they lack a line."""
    told = set(found.bridge_recompilations)
    unknown = [r for r in explanation.recompilations if any(not c.locations for c in r.causes)]
    for r in explanation.recompilations:
        if r.graph.ref in told:
            for cause in r.causes:
                if not cause.locations:
                    cause.hint = BRIDGE_HINT
    if unknown and all(r.graph.ref in told for r in unknown):
        explanation.hints[:] = [h for h in explanation.hints if "--tensors-report" not in h
                                and not h.startswith("source lines unknown")]


def explain_dynamo(dynamo_logs: list[str], explanation, events: dict,
                   warnings: list[InputWarning], *, logs: list[DynamoLog]) -> DynamoFindings | None:
    """The findings for a run with Dynamo logs (``dynamo_logs`` their paths, ``logs`` them read), or None when none
    were given or found."""
    if not dynamo_logs:
        from hlodiff.explain.dynamo_xla import bridge_without_log

        return bridge_without_log(explanation, events)
    log = read_logs(logs)
    if log is None or (not log.compiles and not log.graph_breaks and not log.limit_hits):
        return None
    found = findings(log, dynamo_logs, explanation, events)
    found.traced, found.limit_hits = log.form == "trace", list(log.limit_hits)
    quiet_bridge_hints(explanation, found)
    bridge_consequences(explanation, found)
    from hlodiff.explain.dynamo_xla import follows_expected

    found.follows_expected = follows_expected(explanation, found)
    position = {g.ref: i for i, g in enumerate(explanation.graphs)}
    for x in explanation.recompilations:
        if x.graph.ref not in found.follows_expected:
            continue
        # the Dynamo recompilation whose XLA graph came last before this one (the one the step changed with)
        before = [r for r in found.recompiles if r.difference_graph
                  and position.get(r.difference_graph, len(position)) < position.get(x.graph.ref, 0)]
        dyn = before[-1] if before else found.recompiles[-1]
        args = {"cid": dyn.compile_id, "guard": dyn.guard.guard}
        for cause in x.causes:
            rule = choose(cause.kind, frozenset({"dynamo", "step_follows_expected", f"is:{cause.kind}"}))
            cause.fix, cause.fix_rule = FixChoice(rule, args).text, rule.name
    return found


def bridge_consequences(explanation, found: DynamoFindings) -> None:
    """The fixes of the bridge's XLA recompilations, once Dynamo's log says what Dynamo did (review F5: a dtype
    cast, a metric and gradient accumulation were told for graphs the bridge made). A graph the bridge compiled
    for a Dynamo recompilation follows from it; one it compiled for Dynamo's first graph (its backward, the sync
    of the call's inputs) is the bridge's own. Sizes Dynamo traced once and XLA compiles per size keep their own
    finding (``xla_sizes``): there the XLA graphs are the story."""
    told = set(found.bridge_recompilations) - set(found.xla_size_graphs)
    if not told:
        return
    owner = {ref: cid for cid, refs in found.xla_graphs.items() for ref in refs}
    by_id = {r.compile_id: r for r in found.recompiles}
    unexpected = any(not r.expected for r in found.recompiles)
    position = {g.ref: i for i, g in enumerate(explanation.graphs)}
    joined = {d.difference_graph: d for d in found.recompiles if d.difference_graph}
    for r in explanation.recompilations:
        if r.graph.ref not in told:
            continue
        same = joined.get(r.graph.ref)
        if same is not None and r.causes and r.causes[0].kind == same.kind:
            continue  # the joined graph tells the guard's own change (a new size seen from both sides): its story
        dyn = by_id.get(owner.get(r.graph.ref))
        if dyn is not None and position.get(r.graph.ref, 0) < position.get(dyn.difference_graph, len(position)):
            dyn = None  # before the graph XLA compiled for it: the first compile's (a TORCH_LOGS log omits 0/0)
        facts = {"dynamo", "bridge_graph"}
        if dyn is not None:
            facts |= {"follows_dynamo"} | ({"dynamo_expected"} if dyn.expected else set())
        elif unexpected:
            facts.add("dynamo_unexpected")
        args = {"cid": dyn.compile_id if dyn else "?", "guard": dyn.guard.guard if dyn else "?"}
        for cause in r.causes:
            rule = choose(cause.kind, frozenset(facts | {f"is:{cause.kind}"}))
            cause.fix, cause.fix_rule = FixChoice(rule, args).text, rule.name
