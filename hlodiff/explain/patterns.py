"""Name the shape of a family's compilations the way users describe it.

``steady`` (compiled once), ``warm-up only`` (the first graphs differ, then one graph for good), ``alternating``
(A,B,A,B) and ``periodic`` (A,B,B,B,A,B,B,B: gradient accumulation, an eval every k steps) with their period,
``one-off`` (one graph in the middle of a steady run, then back), ``switched`` (one change, then steady: autocast
turned on), ``last only`` (the last graph differs: a short final batch), ``setup`` (graphs that each ran once
while the program set up, before another family's steady steps: FSDP wrapping, initialisation), and
``unbounded`` (a new graph every time, to the end of the run), ``split`` (every step is the same pair: the
graph an early read like ``.item()`` ran, then the rest of the step), ``eager op`` (JAX: a primitive run outside
jit, such as ``jnp.ones``, compiled once per shape it was called with; never the headline), ``cut short`` (the graphs
of a save-tensors file cut off mid-graph, too few to name how the run goes on: review F10). XLA dump folders hold
only compilations; there the
letters follow the normalized graph, so the same HLO compiled again shows as a repeated letter.

A pattern is a typed :class:`Pattern` (name, period, letters, ...): the fixes and the HTML decide on its fields,
and :func:`hlodiff.explain.pattern_words.pattern_text` words it, run-length once a sequence is long (``A×41, then
B,A,B,...``). Which recompilation heads the run's report is :mod:`hlodiff.explain.headline`'s; whether a JAX family
is an eager op, :mod:`hlodiff.explain.eager_ops`'.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection

from hlodiff.explain.cycles import period_of, schedule_like, wraps
from hlodiff.explain.eager_ops import CONTEXT, PLACEMENT, SHAPE, called_for, is_eager_op, result_resized
from hlodiff.explain.families import first_step_piece, is_partial
from hlodiff.hlo.model import SourceFrame, user_frame

if TYPE_CHECKING:
    from hlodiff.explain.families import Family


@dataclass(frozen=True, slots=True)
class Because:
    """The family's most common leading cause: its kind and first user line (None when it has none)."""

    kind: str
    location: SourceFrame | None = None


@dataclass(frozen=True, slots=True)
class Pattern:
    """The shape of one family's compilations, as facts: what the renderers word and the fixes decide on.

    ``name`` is one of :data:`PATTERN_NAMES`; ``letters`` names each member's distinct graph (A, B, ...) in run
    order; ``period`` is set for ``alternating`` (2) and ``periodic``; ``at`` is the 0-based member index where a
    ``switched``/``one-off`` happened (``alternating``/``periodic``: 1 when a first graph of its own, never seen
    again, comes before the rounds) (``split``: 1 when the first step's group differs, a warm-up); ``split_at``
    the early read's line (``t.py:9``) of a ``split`` family.
    """

    name: str
    family: str
    graphs: int
    compilations: int
    letters: tuple[str, ...] = ()
    variants: int = 0
    period: int = 0
    at: int = 0
    split_at: str = ""
    parts: int = 0
    """``split``: how many graphs each step is cut into (2: one early read; 3: two reads, e.g. isnan then isinf)."""
    cut_reason: str = "read"
    """``split``/``one-off`` by cuts: why the step's graphs ran early (:data:`hlodiff.explain.cuts.CUT_REASONS`, or
    ``mixed``): the words follow it, as the cause and fix below do (round 11: an op run on the CPU is no read)."""
    seen_again: int = 0
    because: Because | None = None
    loaded: int = 0
    """Of the family's programs, how many were loaded from a persistent compilation cache, not compiled."""
    at_ref: str = ""
    """``#N``, the number the dump (and the detail below the headline) gives the graph at ``at``: "graph 4 of 6"
    counts the family's graphs from 1, the dump its graphs from 0 (review 4, F8), so the words give both."""
    hidden_again: int = 0
    """``dump``: of the graphs ``seen_again``, how many print constants elided as ``{...}`` (a baked table, the
    dump's size limit): their text is the same, their values are not shown, so "the same HLO" is not known."""
    called_for: tuple[str, ...] = ()
    """``eager op``: what its recompilations were compiled for (:func:`hlodiff.explain.eager_ops.called_for`): a new
    shape, a config context, another device; the words name each, so ``(A,B,A,B)`` is not told as "once per shape"
    when the second A is the first under a context (review 12, F5)."""
    hits_unknown: bool = False
    """The family was read from a log without cache hits (``PT_XLA_DEBUG_LEVEL=1``): each member is a compilation,
    and how many steps ran between them is not seen, so no name that counts steps (``unbounded``) is given."""

    @property
    def benign(self) -> bool:
        """Needs no attention: compiled once, a warm-up, the program's setup, or a JAX eager op."""
        return self.name in _BENIGN

    def to_json(self) -> dict:
        return {"name": self.name, "period": self.period or None, "letters": "".join(self.letters)
                if all(len(x) == 1 for x in self.letters) else list(self.letters),
                "runs": [[letter, n] for letter, n in runs(self.letters)]}


PATTERN_NAMES = ("steady", "warm-up only", "setup", "split", "alternating", "periodic", "unbounded", "last only",
                 "switched", "one-off", "recurring", "eager op", "dump", "compilations", "cut short")
"""Every pattern name; ``dump`` is an XLA dump folder's compilations (no cache hits to see), ``compilations`` a
family none of the named shapes fits."""


def runs(letters) -> list[tuple[str, int]]:
    """Run-length groups: A,A,A,B -> [(A, 3), (B, 1)]."""
    out: list[tuple[str, int]] = []
    for letter in letters:
        if out and out[-1][0] == letter:
            out[-1] = (letter, out[-1][1] + 1)
        else:
            out.append((letter, 1))
    return out


def _cuts_reason(cuts) -> str:
    """The reason shared by a step's cut graphs (``mixed`` when they differ)."""
    from hlodiff.explain.cuts import cut_reason

    reasons = {cut_reason(g) for g in cuts}
    return reasons.pop() if len(reasons) == 1 else "mixed"


def _hidden_again(members, letters) -> int:
    """How many of a dump family's repeated graphs elide a constant's values (checked once per distinct graph)."""
    from hlodiff.diff.hidden import hidden_count

    hides: dict[str, bool] = {}
    seen: set[str] = set()
    count = 0
    for g, letter in zip(members, letters):
        if letter in seen:
            if letter not in hides:
                module = g._module
                hides[letter] = (hidden_count(module) > 0 if module is not None
                                 else "{...}" in g.record.text() and not g.record.proto_path)
            count += hides[letter]
        seen.add(letter)
    return count


def pattern_of(family: "Family", recompilations, families: list["Family"] | None = None,
               cut: Collection[str] = ()) -> Pattern:
    """Name the shape of a family's compilations (see the module docstring for each name). ``cut``: sources
    (save-tensors files) cut off mid-graph; a family read from one shows only the beginning of its sequence, and
    a name that rests on how the sequence goes on is not given (:func:`_cut_short`)."""
    pattern = _pattern_of(family, recompilations, families)
    if cut and any(g.record.source in cut for g in family.members):
        return _cut_short(pattern, family)
    return pattern


def _cut_short(pattern: Pattern, family: "Family") -> Pattern:
    """Review F10: a sequence cut off (A,B,B,A,B of a period-3 run) is not evidence of how the run goes on.
    Kept: ``steady``, ``split`` and a period seen at least twice in full (what was read shows it); any other name
    (warm-up then steady, switched, last only, one-off, unbounded, recurring in no order, ...) claims the end of a
    run that was not read, so the family is told as ``cut short``: what was seen, and no name."""
    if pattern.name in ("steady", "split", "eager op", "dump"):
        return pattern
    if pattern.name in ("alternating", "periodic"):
        keys = [g.cache_key for g in family.members]
        period, offset = period_of(keys)
        if period is not None and len(keys) - offset >= 2 * period:
            return pattern
    return Pattern("cut short", pattern.family, pattern.graphs, pattern.compilations, pattern.letters,
                   pattern.variants, because=pattern.because)


def _pattern_of(family: "Family", recompilations, families: list["Family"] | None = None) -> Pattern:
    members = family.members
    n = len(members)
    because = _because(family, recompilations)
    compiled_at = [i for i, g in enumerate(members) if g.compiled]
    base = dict(family=family.label, graphs=n, compilations=len(compiled_at), because=because)
    if len(compiled_at) <= 1:
        return Pattern("steady", **base)
    if all(g.record.kind == "xla_dump" for g in members):  # XLA dumps only what it compiles: no hits to see
        letters = tuple(_letters([g.fingerprint for g in members]))
        if is_eager_op(family):
            return _eager_pattern(family, recompilations, letters, base)
        return Pattern("dump", letters=letters, seen_again=len(members) - len(set(letters)),
                       hidden_again=_hidden_again(members, letters), **base)
    keys = [g.cache_key for g in members]
    base["letters"] = tuple(_letters(keys))
    base["variants"] = distinct = len(set(keys))
    last = compiled_at[-1]
    if compiled_at == list(range(last + 1)) and last <= 2 and len(set(keys[last:])) == 1 and n - last >= 2:
        if last == 1 and _type_switched(members[1], recompilations):
            ref = "#" + members[1].ref.rsplit("#", 1)[1] if "#" in members[1].ref else ""
            return Pattern("switched", at=1, at_ref=ref, **base)
        return Pattern("warm-up only", at=last, **base)
    if len(compiled_at) == n and families and _before_steady_work(family, families):
        return Pattern("setup", **base)
    split, parts, first = _split_by(members)
    if split is not None:
        return Pattern("split", split_at=split, parts=parts, at=first, cut_reason=_cuts_reason(members[:parts - 1]),
                       **base)
    split, parts, odd = _split_once(members)
    if split is not None:
        ref = "#" + members[odd].ref.rsplit("#", 1)[1] if "#" in members[odd].ref else ""
        return Pattern("one-off", split_at=split, parts=parts, at=odd, at_ref=ref,
                       cut_reason=_cuts_reason(members[:parts - 1]), **base)
    split, parts, steps = _split_step_new(members)
    if split is not None:
        return Pattern("unbounded", split_at=split, parts=parts, at=steps, cut_reason=_cuts_reason(members[:parts - 1]),
                       **base)
    period, offset = period_of(keys)
    if period is not None and (n - offset >= 2 * period or wraps(keys[offset:], period)) \
            and (schedule_like(keys[offset:], period) or n - offset >= 3 * period):
        # review 18, F5: a first graph that never comes back (the first step's warm-up) before the cycle's rounds
        first_own = int(offset == 0 and keys[0] != keys[period])
        return Pattern("alternating" if period == 2 else "periodic", period=period, at=first_own, **base)
    unbounded = (len(compiled_at) == n and n >= 3) or (compiled_at == list(range(1, n)) and n >= 4 and distinct == n)
    # (the second: review 10 F1, dc_control_break: the first member reuses a graph compiled in another family (the
    # first call's input synced while the bridge compiled), then a new graph every time to the end: no fewer new)
    if unbounded and not all(g.record.hits_seen for g in members):
        # round 11 (r11_tx_momentum_warmup, spmd_replay_unsharded): a PT_XLA_DEBUG_LEVEL=1 log lists compilations
        # only, so every member is "compiled" whether the run had 3 steps or 300: A,B,C of an 8-step run that
        # compiled at steps 0, 3 and 4 is not "a new graph every time". Say what was seen, and that hits are unknown
        return Pattern("compilations", hits_unknown=True, **base)
    if unbounded:
        return Pattern("unbounded", **base)
    if distinct == 2 and len(compiled_at) == 2 and n >= 3:
        switch = compiled_at[1]
        if switch == n - 1:
            return Pattern("last only", at=switch, **base)
        ref = "#" + members[switch].ref.rsplit("#", 1)[1] if "#" in members[switch].ref else ""
        if all(k == keys[switch] for k in keys[switch:]):
            return Pattern("switched", at=switch, at_ref=ref, **base)
        if keys[switch + 1:] and all(k == keys[0] for k in keys[switch + 1:]) and keys.count(keys[switch]) == 1:
            return Pattern("one-off", at=switch, at_ref=ref, **base)
    if (distinct == 3 and compiled_at[:2] == [0, 1] and len(compiled_at) == 3 and keys.count(keys[0]) == 1
            and keys.count(keys[1]) >= 2 and n - compiled_at[2] >= 2
            and all(k == keys[compiled_at[2]] for k in keys[compiled_at[2]:])):
        # Dynamo round 7 (dyn_freeze_backbone, A,B,B,C,C,C,C): a first graph of its own (the first step's warm-up:
        # a compiled call's first step cut by the bridge, an optimizer creating its state), then one graph, then
        # one change for good: the change is a switch, as it is without the warm-up before it
        switch = compiled_at[2]
        ref = "#" + members[switch].ref.rsplit("#", 1)[1] if "#" in members[switch].ref else ""
        return Pattern("switched", at=switch, at_ref=ref, **base)
    lead = int(distinct == 4 and compiled_at[:2] == [0, 1] and keys.count(keys[0]) == 1)
    # review 24, F4 (p2: A,B,B,C,D,D,D): the same after a first graph of its own (the optimizer's first-step
    # warm-up): a parameter group added mid-run takes its own first step (C), then the new graph for good (D)
    if (distinct == 3 + lead and len(compiled_at) == 3 + lead and compiled_at[1 + lead] >= 2 + lead
            and compiled_at[2 + lead] == compiled_at[1 + lead] + 1
            and all(k == keys[lead] for k in keys[lead:compiled_at[1 + lead]])
            and keys.count(keys[compiled_at[1 + lead]]) == 1
            and n - compiled_at[2 + lead] >= 2 and all(k == keys[compiled_at[2 + lead]] for k in keys[compiled_at[2 + lead]:])):
        # round 9 (embed_vocab_grow, A,A,A,B,C,C,C): a steady run, one step of its own where the change is made (a
        # table rebuilt and its rows copied in, traced into that step), then the new graph for good: one switch
        switch = compiled_at[1 + lead]
        ref = "#" + members[switch].ref.rsplit("#", 1)[1] if "#" in members[switch].ref else ""
        return Pattern("switched", at=switch, at_ref=ref, **base)
    recurring = [k for k in set(keys) if keys.count(k) >= 2]
    switches = sum(1 for a, b in zip(keys, keys[1:]) if a != b)
    if len(recurring) >= 2 and switches >= 3:  # two graphs in no fixed order recur too: "alternating" is A,B,A,B
        return Pattern("recurring", seen_again=len(recurring), **base)
    if distinct >= 3 and _returns(keys) >= 2:
        # thirteenth stop (r27_tx_scan_seq_len, A,A,B,A,C,A,A,A: lengths drawn from a few values): the family came
        # back to a graph it had left twice or more: values from a set, each seen again when drawn again, not a new
        # graph for good; one return (r16_tx_randaug_ops, A,B,A,C,D,E,F,G) is too few to say so
        return Pattern("recurring", seen_again=len(recurring), **base)
    return Pattern("compilations", **base)


def _returns(keys: list[str]) -> int:
    """How many times the sequence changes back to a graph it ran before (A,A,B,A,C,A: twice)."""
    return sum(1 for i in range(1, len(keys)) if keys[i] != keys[i - 1] and keys[i] in keys[:i])


_MAX_PARTS = 16
"""The most graphs a step is cut into that :func:`_split_by` looks for: autograd's anomaly mode cuts a step once per
backward node (11 graphs a step for a 3-layer MLP, round 17)."""


def _split_by(members) -> tuple[str | None, int, int]:
    """Where every step is the same cut-short group (graphs early reads ran, then the rest of the step): the line
    of the first read (``t.py:9``), how many graphs a step is cut into, and the step from which the groups are the
    same (0, or 1 when the first step's group warms up: GradScaler's growth tracker starts as a baked 0), else
    (None, 0, 0). Not "alternating" or "periodic": nothing switches, each step runs the same graphs (review F10:
    isnan then isinf read inside clip_grad_norm_, three graphs a step)."""
    for first in (0, 1):
        for k in range(2, _MAX_PARTS + 1):
            if len(members) < (2 + first) * k or len(members) % k:
                continue
            groups = [members[i:i + k] for i in range(0, len(members), k)]
            if any(not all(is_partial(g) for g in grp[:-1]) or is_partial(grp[-1]) for grp in groups):
                continue
            if any(len({grp[j].cache_key for grp in groups[first:]}) != 1 for j in range(k)):
                continue
            cut = groups[0][0]
            where = user_frame(cut.record.frames) if cut.record.frames else None
            return (f"{where.file.rsplit('/', 1)[-1]}:{where.line}" if where is not None else "an unknown line"), k, \
                first
    return None, 0, 0


_STEPS_NEW = 4
"""The fewest steps whose own graph, new at each, is told "unbounded" (:func:`_split_step_new`)."""


def _split_step_new(members) -> tuple[str | None, int, int]:
    """Every step cut into the same number of graphs (early executions, then the rest of the step), and the rest of
    the step a new graph, compiled anew, at every step (four steps or more): the step's own graph is unbounded,
    whatever the early graphs do (review 23, F2: an MoE's routing read and per-expert nonzero, the early graphs seen
    again each step, the step's graph new at all 5 steps, was told "recurring"). Three steps are too few to say so:
    the first two are often warm-up (the bridge's first step, an optimizer creating its state), and a third new
    graph alone is no trend (stop 51). The first read's line, the graphs per step and the number of steps, else
    (None, 0, 0)."""
    if not all(g.record.hits_seen for g in members):
        return None, 0, 0  # compilations only (PT_XLA_DEBUG_LEVEL=1): "new every step" is not seen
    for k in range(2, _MAX_PARTS + 1):
        if len(members) < _STEPS_NEW * k or len(members) % k:
            continue
        groups = [members[i:i + k] for i in range(0, len(members), k)]
        if any(not all(is_partial(g) for g in grp[:-1]) or is_partial(grp[-1]) for grp in groups):
            continue
        rests = [grp[-1] for grp in groups]
        if all(g.compiled for g in rests) and len({g.cache_key for g in rests}) == len(rests):
            cut = groups[0][0]
            where = user_frame(cut.record.frames) if cut.record.frames else None
            return (f"{where.file.rsplit('/', 1)[-1]}:{where.line}" if where is not None else "an unknown line"), k, \
                len(groups)
    return None, 0, 0


def _split_once(members) -> tuple[str | None, int, int]:
    """Every step cut into the same group (as :func:`_split_by`) but one step in the middle, whose graphs differ
    and never come back: a split step that took another branch once (review 10, F2: a loss-scaling step skipped on
    a spike, A,B,A,B,A,B,C,D,A,B,A,B), not graphs "in no fixed order". The read's line, the graphs per step, and
    the index of the odd step's first graph, else (None, 0, 0)."""
    for k in (2, 3, 4):
        if len(members) < 4 * k or len(members) % k:
            continue
        groups = [members[i:i + k] for i in range(0, len(members), k)]
        if any(not all(is_partial(g) for g in grp[:-1]) or is_partial(grp[-1]) for grp in groups):
            continue
        keys = [tuple(g.cache_key for g in grp) for grp in groups]
        odd = [i for i, key in enumerate(keys) if key != keys[0]]
        if len(odd) != 1 or odd[0] == len(groups) - 1 or keys.count(keys[0]) < 3:
            continue
        cut = groups[0][0]
        where = user_frame(cut.record.frames) if cut.record.frames else None
        return (f"{where.file.rsplit('/', 1)[-1]}:{where.line}" if where is not None else "an unknown line"), k, \
            odd[0] * k
    return None, 0, 0


def _before_steady_work(family: "Family", families: list["Family"]) -> bool:
    """Every graph of the family ran before another family's graphs that repeat (the training loop), and none of
    them after: the program was setting up."""
    order = {id(g): g.record.index for f in families for g in f.members}
    last = max(order[id(g)] for g in family.members)
    if _runs_again_later(family, families, order, last):
        return False
    for other in families:
        if other is family:
            continue
        hits = [g for g in other.members if not g.compiled]
        if hits and min(order[id(g)] for g in other.members) > last:
            return True
    return False


def _runs_again_later(family: "Family", families: list["Family"], order: dict[int, int], last: int) -> bool:
    """Review 24, F1: a graph the family compiled runs again after the family's last graph (the graph an early read
    cuts off every step, compiled on the first step, a hit at every later step's read): it did not run once while
    the program set up; it is part of every step."""
    keys = {g.cache_key for g in family.members if g.compiled}
    return any(order[id(g)] > last and not g.compiled and g.cache_key in keys
               for other in families if other is not family for g in other.members)


def _letters(keys: list[str]) -> list[str]:
    names: dict[str, str] = {}
    alphabet = string.ascii_uppercase
    out = []
    for key in keys:
        if key not in names:
            i = len(names)
            names[key] = alphabet[i] if i < 26 else f"G{i}"
        out.append(names[key])
    return out


def leading(family: "Family", recompilations):
    """The recompilation whose first cause is the family's most common leading cause (the first such one).

    Most common, not first: a tensor that grows every step differs in structure from step 0 to 1 (torch_xla
    lowers a one-element tensor its own way) and in shape from then on; the user wants to hear "shape".
    """
    from hlodiff.diff.fix_rules import EXPECTED

    mine = [r for r in recompilations if r.family is family and r.causes]
    if not mine:
        return None
    # an expected warm-up never names the family's cause while a change its fix does not excuse is there (review
    # 2, F2: AdamW's warm-up at step 1 named 'inputs at :17' for a weight-decay change at step 4)
    mine = [r for r in mine if r.causes[0].fix_rule not in EXPECTED] or mine
    # a later piece of the first step, cut by its second or third early read, is compiled once and reused: it
    # never names the family while a graph that changes is there (round 25, r25_tx_mlm_mask_assign: the labels'
    # cut at :26 named a run whose graphs change after the cut at :29)
    mine = [r for r in mine if not first_step_piece(family, r.graph.ref)] or mine
    kinds = [r.causes[0].kind for r in mine]
    kind = max(set(kinds), key=lambda k: (kinds.count(k), -kinds.index(k)))
    # of that kind, the first at the most common root line: a queue that grows from its second step on is told at
    # the line that grows it, not at the reader its first step changed (review 2, F11)
    of_kind = [r for r in mine if r.causes[0].kind == kind]
    if kind != "shape":  # a size is told where it keeps changing; other kinds at their first recompilation
        return of_kind[0]
    lines = [(r.causes[0].locations[0].file, r.causes[0].locations[0].line) if r.causes[0].locations else None
             for r in of_kind]
    line = max(set(lines), key=lambda x: (lines.count(x), -lines.index(x)))
    return of_kind[lines.index(line)]


_BENIGN = ("steady", "warm-up only", "setup", "eager op")


def pattern_names(explanation) -> dict[int, str]:
    """``id(family)`` -> its pattern's name (``warm-up only``, ``alternating``, ``eager op``...), from the typed
    facts; from the words' first part only for an explanation built without them (a report cut to some graphs)."""
    facts = getattr(explanation, "pattern_facts", None) or []
    if len(facts) == len(explanation.families):
        return {id(f): p.name for f, p in zip(explanation.families, facts)}
    return {id(f): p.split(":", 1)[0] for f, p in zip(explanation.families, explanation.patterns)}


def _eager_pattern(family: "Family", recompilations, letters: tuple[str, ...], base: dict) -> Pattern:
    """An eager op's family: what each recompilation was called for, and its leading cause, a slice of another
    length told as the shape it is (review 12, F8c)."""
    mine = [r for r in recompilations if r.family is family and r.causes]
    found = {called_for(r.causes[0]) for r in mine}
    because = base["because"]
    if because is not None and because.kind == "attribute" and any(result_resized(r.causes[0]) for r in mine):
        because = Because("shape", because.location)
    return Pattern("eager op", letters=letters, called_for=tuple(k for k in (SHAPE, CONTEXT, PLACEMENT) if k in found),
                   **{**base, "because": because})


def _type_switched(graph, recompilations) -> bool:
    """The second graph of a family recompiled because an input's element type changed, and its fix asks the user
    for a change: no warm-up of a library makes an input float64 where it was float32 (crossings round 10,
    x10c_tx_host_class_weights: weights recomputed with NumPy came back float64 from the second step on, told
    "warm-up only"). The shape A,B,B,... is the same as a warm-up's; the cause says it is a switch."""
    from hlodiff.diff.fix_stance import FixStance

    r = next((r for r in recompilations if r.graph.ref == graph.ref and r.causes), None)
    return r is not None and r.causes[0].kind == "dtype" and r.causes[0].fix_stance is FixStance.CHANGE


def _because(family: "Family", recompilations) -> Because | None:
    """The family's most common leading cause and its first line."""
    r = leading(family, recompilations)
    if r is None:
        return None
    cause = r.causes[0]
    return Because(cause.kind, cause.locations[0] if cause.locations else None)
