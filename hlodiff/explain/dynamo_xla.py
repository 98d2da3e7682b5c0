"""The XLA side of a torch.compile run where Dynamo's log says nothing or is missing: XLA compiling each concrete
size of a graph Dynamo traced once with a symbolic size (``dynamic=True``, ``mark_dynamic``), the call each bridge
graph ran at (for ``--warmup``), and the bridge's own graphs told apart from a changed program when no Dynamo log
was captured. Joined to Dynamo's findings by :mod:`hlodiff.explain.dynamo`."""

from __future__ import annotations

import re

from hlodiff.dumps.dynamo_log import DynamoCompile, GuardFailure
from hlodiff.explain.dynamo_types import DynamoFindings, DynamoRecompile, compiled_name, size_guard_groups
from hlodiff.explain.dynamo_recompile_fixes import choose_fix
from hlodiff.explain.dynamo_bridge import bridge_compiling


def call_positions(explanation) -> dict[str, int]:
    """XLA graph ref -> its position in its family: the bridge runs a compiled function's graph once per call, so
    the position is the call it ran at, or later when a family holds more than one graph per call (never earlier:
    --warmup then excuses less, never more). The run's step numbers do not serve: the bridge's executions have no
    sync of their own."""
    return {g.ref: i for family in explanation.families for i, g in enumerate(family.members)}


def xla_sizes(found: DynamoFindings, traced: list[DynamoCompile], xla_recompiles) -> list:
    """The bridge's XLA recompilations whose leading cause is a new input size and that no Dynamo recompilation
    explains (none paired with them, and Dynamo recompiled nothing for a size): Dynamo traced a symbolic size once,
    torch_xla compiles every concrete one. The bridge's own warm-up variants differ in ops and inputs, not sizes. A
    Python int Dynamo guarded that sets a shape (``sets_shape``: a slice bound, torch.split's sizes, the size of an
    nn.ParameterList growing per task, Dynamo round 24) is a recompilation for a size too: each size its own
    static graph, no symbolic one to blame on the bridge."""
    if any(r.kind == "shape" or "sets_shape" in r.facts for r in found.recompiles) or not traced:
        return []
    grown = [x for x in xla_recompiles if sized(x, found)]
    if not grown:
        return []
    first = traced[0]
    sizes = []
    for x in grown:
        named = x.causes[0].named
        before, now = named.details.get("shape", ("?", "?")) if named is not None else ("?", "?")
        sizes.append(re.sub(r"\{[^{}]*\}", "", f"{before} -> {now}"))  # the layouts say nothing here
    seen = ", ".join(dict.fromkeys(sizes))
    user = next((loc for x in grown for loc in x.causes[0].locations if not loc.is_library), None)
    location = first.call or user or first.definition
    # review 9 F6 (c2): torch.compile(enc) is traced as torch's wrapper `inner`: named as the user's call names it
    r = DynamoRecompile(first.compile_id, compiled_name(first), "shape",
                        GuardFailure(None, "no guard failed: Dynamo's graph has a symbolic size, XLA compiled a new "
                                           "concrete one"), location,
                        facts=frozenset({"dynamo", "xla_per_size"}), seen=seen,
                        located="call" if first.call else None if user else "definition" if location else None)
    r.xla, r.difference, r.difference_graph, r.difference_kind = "compiled", grown[0].causes[0].summary, \
        grown[0].graph.ref, "shape"
    choose_fix(r)
    return [r]


def paired_graphs(explanation, bridge_refs: set[str], xla_recompiles: list, paid: int) -> list:
    """The bridge's XLA recompilation to join to each of the last ``paid`` Dynamo recompilations, in order. A Dynamo
    (re)compile of a training call compiles a forward and, at ``backward()``, its backward, both before the step's
    own sync: the bridge's recompilations between two of the user's syncs are one Dynamo compile's, and its first
    is the forward the guard changed (dyn_modulelist_grow: 0/1 compiled #8 and #10, 0/2 #16 and #18; one graph
    each took 0/1 to #16). The group of the bridge's first graph is Dynamo's first compile's (its backward is
    already a recompilation of a family: dyn_global_cfg's #2). The recompilations XLA paid for come first (its
    cache only grows), so the first groups after it are theirs; later groups are the bridge's own (the sync of a
    call's inputs whose pending ops changed: dyn_autocast_steps' #9 and #13, where the last group took 0/1 to #13
    instead of its forward #4). A no_grad call compiles the forward alone, a group of one. When fewer groups than
    recompilations are seen (two frames recompiled in one step) the last ``paid`` recompilations are taken one
    each, as before. The bridge's stacks are cut at 8 frames, so a backward is never told by its own frames."""
    if paid <= 0:
        return []
    one_each = xla_recompiles[max(0, len(xla_recompiles) - paid):]
    user_keys = {g.cache_key for g in explanation.graphs if g.compiled and g.ref not in bridge_refs}
    wanted = {x.graph.ref: x for x in xla_recompiles}
    groups: list[list] = [[]]
    first = None  # the group of the bridge's first graph: Dynamo's first compile (its backward is a recompilation)
    for g in explanation.graphs:
        if g.cache_key in user_keys and g.ref not in bridge_refs:
            groups.append([])
            continue
        if first is None and g.ref in bridge_refs:
            first = len(groups) - 1
        if g.ref in wanted:
            groups[-1].append(wanted[g.ref])
    groups = [group for i, group in enumerate(groups) if group and i != first]
    if len(groups) < paid:
        return one_each
    return [group[0] for group in groups[:paid]]


BUCKET_ROWS = ("shape_buckets", "shape_buckets_inner")
"""The rows hlodiff gives an XLA size recompilation whose sizes recur, each compiled once
(:func:`hlodiff.explain.buckets.verdict`)."""


def padded_buckets(recompiles: list[DynamoRecompile]) -> None:
    """Dynamo's size recompilations of one tensor dimension that are the user's own buckets get the fact
    ``buckets``: every size Dynamo's guards name is padded (a multiple of 8, the test :mod:`hlodiff.explain.buckets`
    applies to sizes the data sets: raw lengths such as 20 or a batch of 6 are not), and the XLA graphs say those
    sizes recur, each compiled once (the XLA recompilation joined to each was told ``shape_buckets``). Sizes XLA
    never compiled (a cache hit) or told otherwise leave the dimension unexpected."""
    from hlodiff.explain.buckets import ALIGNED, MAX_ALIGNED_VALUES

    groups = size_guard_groups(recompiles)
    for (name, dim), members in groups.items():
        sizes = sorted({v for _, a, b in members for v in (a, b)})
        told = [r.difference_rule for r, _, _ in members if r.xla == "compiled"]
        if (len(sizes) > MAX_ALIGNED_VALUES or any(v % ALIGNED for v in sizes) or not told
                or any(rule not in BUCKET_ROWS for rule in told)):
            continue
        for r, _, _ in members:
            r.facts = r.facts | {"buckets"}
            r.seen = f"dim {dim} of {name}: {', '.join(map(str, sizes))}"


def sized(x, found: DynamoFindings) -> bool:
    """An XLA recompilation of the bridge led by a new input size and paired with no Dynamo recompilation."""
    paired = {r.difference_graph for r in found.recompiles if r.difference_graph}
    return (x.graph.ref not in paired and bool(x.causes) and x.causes[0].kind == "shape" and _on_input(x.causes[0])
            and _same_element_type(x.causes[0]))


_ELEMENT = re.compile(r"^\s*([a-z]+[0-9]*)\[")


def _same_element_type(cause) -> bool:
    """The input kept its element type: a symbolic size never changes one, so an input that went from f32[4,8] to
    bf16[16,8] is a new Dynamo specialisation (its dtype guard), not XLA compiling another size of one symbolic
    graph; while Dynamo's log has not said so yet (a run still going), the size story would be wrong (Dynamo round
    8, dyn_dtype_two_sites: "pad to a few fixed sizes" for a bf16 bank at a second call site)."""
    named = cause.named
    before, now = named.details.get("shape", (None, None)) if named is not None else (None, None)
    a, b = (_ELEMENT.match(str(v)) if v else None for v in (before, now))
    return a is None or b is None or a.group(1) == b.group(1)


def _on_input(cause) -> bool:
    """The cause's first origin is a parameter of the graph (an input's size), not an op inside it."""
    first = cause.origins[0] if cause.origins else None
    left = getattr(first, "left", None) or getattr(first, "right", None)
    return getattr(left, "opcode", None) == "parameter"


SAME_PROGRAM = 0.5
"""A recompilation at least this alike its closest earlier graph is that program changed; a forward and its
backward share far less (6-20 % on the Dynamo fixtures and scenarios; 62-94 % for a new size, input or branch)."""


UNRELATED = 0.05
"""A bridge graph this little alike its closest earlier graph shares almost nothing with it (review 8, F11: the
sampler's input sync against the graph that made torch.randn, 2-3 %): listing their differences misleads. Sizes,
dtypes and branches of one program stay far above it on the Dynamo fixtures (11-48 % for a changed small graph:
dyn_break_then_float, dyn_kv_cat), where the differences are the story."""


def _mostly_alike(r) -> bool:
    diff = getattr(r, "diff", None)
    return diff is not None and diff.similarity >= SAME_PROGRAM


def inference_variant(r) -> bool:
    """The graph is an earlier one returning fewer values, nothing else: outputs removed only, with the
    instructions computing only them. A bridge graph like that is AOTAutograd's forward without the tensors it
    saves for the backward (grad off, eval: Dynamo compiles one graph per grad mode): one graph per mode, not a
    changed program. Outputs *added* only stay a changed program: an input that now requires grad makes the
    forward save more for its backward (dyn_requires_grad), which the dump alone cannot tell from a training
    forward after a validation that ran first."""
    if not r.causes or any(c.kind != "outputs" for c in r.causes):
        return False
    pairs = [p for c in r.causes for p in c.instructions]
    return bool(pairs) and all(b is None for _, b in pairs)


def first_call_syncs(explanation, found: DynamoFindings) -> list[str]:
    """XLA recompilations outside the bridge in a family whose first graph alone differs (``warm-up only``) in a
    run the bridge compiled graphs for: the step of the first compiled call, which torch_xla's bridge cuts with
    syncs of its own while it compiles (a tensor it materialises then is device data on that step only, an output
    on every later one); every later step reuses one graph. Expected, as any warm-up, whatever its fix row says."""
    from hlodiff.explain.patterns import pattern_names

    bridge = set(found.bridge_compilations)
    if not bridge:
        return []
    kinds = pattern_names(explanation)
    return [r.graph.ref for r in explanation.recompilations
            if not any(g.ref in bridge for g in r.family.members)
            and ((kinds.get(id(r.family)) == "warm-up only" and _follows_a_compiling_step(r, bridge, explanation))
                 or _first_graph_alone(r, bridge, explanation)
                 or _compiling_steps_first(r, bridge, explanation, found)
                 or _compiling_steps_only(r, bridge, explanation, found)
                 or _after_a_retrace_s_cut_step(r, bridge, explanation, found))]


def _follows_a_compiling_step(r, bridge: set[str], explanation) -> bool:
    """Thirteenth stop (d27_tie_late: A,B,C,C,C,C, a weight tied at step 2): a ``warm-up only`` family's change is
    the first compiled call's warm-up only while the graph before it ran in a step the bridge compiled in (its syncs
    cut that step, so the next one differs); a change after a plain step (B ran where Dynamo compiled nothing) is a
    change of the program made later, and keeps its own story. Without positions, as before: warm-up."""
    members = r.family.members
    j = next((i for i, g in enumerate(members) if g.ref == r.graph.ref), None)
    if j is None or j < 2:
        return True
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    where = [at.get(g.ref) for g in members[j - 2:j]]
    if None in where:
        return True
    return any(where[0] < b < where[1] for b in _bridged_at(explanation, bridge, at))


def _first_graph_alone(r, bridge: set[str], explanation) -> bool:
    """Dynamo round 7 (dyn_freeze_backbone: A,B,B,C,C,C,C): the family's first recompilation, when its first graph
    never comes back, the next graph ran again, and the bridge compiled before that first graph (the first compiled
    call's step, cut by the bridge's syncs): a warm-up like ``warm-up only``'s, though the family changes again
    later (that later change keeps its own story)."""
    members = r.family.members
    if len(members) < 3 or r.graph.ref != members[1].ref:
        return False
    keys = [g.cache_key for g in members]
    if keys.count(keys[0]) != 1 or keys.count(keys[1]) < 2:
        return False
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    first = at.get(members[0].ref)
    return first is not None and any(at.get(ref, first) < first for ref in bridge)


def _compiling_steps_first(r, bridge: set[str], explanation, found: DynamoFindings) -> bool:
    """Dynamo round 11 (d11_attn_flag: A,A,B,B,B,...): the family's first recompilation when every earlier graph ran
    in a step the bridge compiled in (the first compiled call's, then a Dynamo recompilation's: a flag's other
    setting), this one in a step it did not, and the first graph never comes back: each compiling step was cut by
    the bridge's syncs, the step graph of an uncut step is the one every later step reuses. Only when every Dynamo
    recompilation is expected and none ran past the limit (the eager fallback changes the step for good, and
    Dynamo's story tells it)."""
    members = r.family.members
    keys = [g.cache_key for g in members]
    k = next((i for i, key in enumerate(keys) if key != keys[0]), None)
    if k is None or k < 2 or r.graph.ref != members[k].ref or keys.count(keys[k]) < 2 or keys[0] in keys[k:]:
        return False
    if not found.recompiles or any(not d.expected or "limit_hit" in d.facts for d in found.recompiles):
        return False
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    where = [at.get(g.ref) for g in members[:k + 1]]
    if None in where:
        return False
    bridged = _bridged_at(explanation, bridge, at)

    def compiled_between(lo: int, hi: int) -> bool:
        return any(lo < b < hi for b in bridged)
    starts = [-1] + where[:-1]
    return (all(compiled_between(lo, hi) for lo, hi in zip(starts[:k], where[:k]))
            and not compiled_between(where[k - 1], where[k]))


def _after_a_retrace_s_cut_step(r, bridge: set[str], explanation, found: DynamoFindings) -> bool:
    """Dynamo round 29 (d29_paramdict_new_adapter: A,B,B,B,C,D,D,D): the first call after an expected Dynamo
    recompilation is cut by the bridge's syncs as the first compiled call's is (C, the step it compiled in), so the
    next step's graph (D) takes the tensors synced then as outputs, and every later step reuses it: the same
    warm-up as A then B, after the retrace. Holds when this graph is new, runs again, ran in a step the bridge did
    not compile in, and the graph before it ran once, in a step it did, after the family's first change; every
    Dynamo recompilation expected and none past the limit (the eager fallback changes the step for good)."""
    members = r.family.members
    keys = [g.cache_key for g in members]
    j = next((i for i, g in enumerate(members) if g.ref == r.graph.ref), None)
    if j is None or j < 3 or keys[j] in keys[:j] or keys.count(keys[j]) < 2 or keys.count(keys[j - 1]) != 1:
        return False
    if not found.recompiles or any(not d.expected or "limit_hit" in d.facts for d in found.recompiles):
        return False
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    where = [at.get(g.ref) for g in members[j - 2:j + 1]]
    if None in where:
        return False
    bridged = _bridged_at(explanation, bridge, at)
    return (any(where[0] < b < where[1] for b in bridged)
            and not any(where[1] < b < where[2] for b in bridged))


def _bridged_at(explanation, bridge: set[str], at: dict[str, int]) -> list[int]:
    """Positions of the graphs run where Dynamo compiled: the bridge's compile path ran a graph there (cached or
    not); without stacks (no debug log), the bridge's compilations."""
    if any(g.record.frames for g in explanation.graphs):
        return [i for i, g in enumerate(explanation.graphs) if bridge_compiling(g.record.frames)]
    return sorted(at[ref] for ref in bridge if ref in at)


def _compiling_steps_only(r, bridge: set[str], explanation, found: DynamoFindings) -> bool:
    """Review 12 F2 (dc_global_flag: A,B,B,A,B,B,B): the family's first recompilation when its first graph ran in
    every step Dynamo compiled in (the first compiled call's, then its recompilation's, there a cache hit) and in
    no other, and this graph in steps it did not compile in: the compiling steps are cut by the bridge's syncs, the
    uncut steps share the other graph. Not past Dynamo's limit (the eager fallback changes the step for good)."""
    members = r.family.members
    keys = [g.cache_key for g in members]
    k = next((i for i, key in enumerate(keys) if key != keys[0]), None)
    if k is None or r.graph.ref != members[k].ref or keys.count(keys[0]) < 2 or keys.count(keys[k]) < 2:
        return False
    if not found.recompiles or any("limit_hit" in d.facts for d in found.recompiles):
        return False
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    where = [at.get(g.ref) for g in members]
    if None in where:
        return False
    bridged = _bridged_at(explanation, bridge, at)
    starts = [-1] + where[:-1]
    compiling = [any(lo < b < hi for b in bridged) for lo, hi in zip(starts, where)]
    return (all(c == (key == keys[0]) for c, key in zip(compiling, keys))
            and sum(compiling) == 1 + len(found.recompiles))


def follows_expected(explanation, found: DynamoFindings) -> list[str]:
    """XLA recompilations outside the bridge that come with Dynamo's expected recompilations: every Dynamo
    recompilation is expected (a flag switched, a model grown), the eager graph changed in a step where the bridge
    compiled a new graph too (between it and its family's previous graph), and the change is kept (no later graph
    of its family goes back to an earlier one). The step around the compiled call changed with it: the optimizer
    now updates the aux head's or the new block's parameters (dyn_attr_switch, dyn_modulelist_grow)."""
    if not found.recompiles:
        return []
    bridge, rebuilt = set(found.bridge_compilations), set(found.bridge_recompilations)
    at = {g.ref: i for i, g in enumerate(explanation.graphs)}
    if any(not r.expected for r in found.recompiles):
        return [r.graph.ref for r in explanation.recompilations if not _in_bridge(r, bridge)
                and _grads_variant(r, found, at)]
    out = []
    for r in explanation.recompilations:
        members = r.family.members
        if _in_bridge(r, bridge):
            continue
        i = at.get(r.graph.ref)
        before = [at[g.ref] for g in members if at.get(g.ref, i) < i]
        if i is None or not before:
            continue
        between = explanation.graphs[max(before) + 1:i]
        earlier = {g.cache_key for g in members if at[g.ref] < i}
        later = [g.cache_key for g in members if at[g.ref] > i]
        if any(g.ref in rebuilt for g in between) and not any(k in earlier for k in later):
            out.append(r.graph.ref)
        elif _autocast_variant(r, found, at):
            out.append(r.graph.ref)
    return out


def _in_bridge(r, bridge: set[str]) -> bool:
    return r.graph.ref in bridge or any(g.ref in bridge for g in r.family.members)


def _grads_variant(r, found: DynamoFindings, at: dict[str, int]) -> bool:
    """A compiled ``opt.step`` retraced for a parameter's ``.grad is None`` (``grad_none``: a part of the model the
    loss uses on some steps only, zero_grad() setting the others' gradients to None): the eager step around the call
    (that part's forward, its backward, its parameters' update) takes one variant per set of gradients too, and
    cycles with it (Dynamo round 11, d11_opt_grad_none: an aux head every third step, told "gradient accumulation"
    by the XLA cycle row). Its root is the guard's; it follows when it holds no more variants than Dynamo's graphs
    plus the first call's, first changing after Dynamo's first retrace (as :func:`_autocast_variant`)."""
    if not all("grad_none" in d.facts for d in found.recompiles):
        return False
    return _variant_after_retrace(r, found, at)


def _variant_after_retrace(r, found: DynamoFindings, at: dict[str, int]) -> bool:
    keys = {g.cache_key for g in r.family.members}
    first_retrace = min((at.get(d.difference_graph, len(at)) for d in found.recompiles if d.difference_graph),
                        default=None)
    changes = [at.get(g.ref, 0) for g in r.family.members[1:] if g.compiled]
    return (first_retrace is not None and min(changes, default=at.get(r.graph.ref, 0)) > first_retrace
            and len(keys) <= len(found.recompiles) + 2)


def _autocast_variant(r, found: DynamoFindings, at: dict[str, int]) -> bool:
    """torch.autocast switched on some calls only (Dynamo's expected ``autocast`` retrace): the eager code around
    the call (the loss's cast, backward, the optimizer) runs in the other precision too, so the step's sync graph
    takes one variant per setting and alternates with it (dyn_autocast_steps: A,A,B,C,B,C, its first graph the
    first call's cut step). It follows when it holds no more variants than Dynamo compiled graphs, plus that
    first one, and its first change comes after Dynamo's first retrace's graph. A family with more variants, or
    one that changed before Dynamo retraced, is not explained by it. Round 5: a task's head of another class on
    alternate calls (``object_type``, dyn_head_per_task) makes the step alternate the same way (the optimizer
    updates the parameters that got gradients)."""
    if not any("autocast" in d.facts or "object_type" in d.facts for d in found.recompiles):
        return False
    return _variant_after_retrace(r, found, at)

