"""Explain a run while it runs: each graph that arrives is analysed against what is known so far, and the
recompilations come out as typed events (``hlodiff record``'s live lines, ``hlodiff watch``).

**Incremental, bounded.** A cache hit costs a dictionary lookup and a place in its family's recent window. A
compilation is explained by the same analysis as the final report (:func:`hlodiff.explain.recompile.explain_records`)
over a bounded window of its family: the family's last :data:`~hlodiff.explain.candidates.POOL` compiled graphs
(the candidates the final report compares with) and its last
:data:`~hlodiff.explain.live_families.RECENT` executions. So the cost of a new graph
does not grow with the run, and memory holds one record per compilation plus the windows.

**The final story is the live one, completed.** What a window can say depends on what came after: a batch that
is short at the newest step reads as "the last batch" until the next steps show the size stayed. So each family's
newest recompilation is looked at again as its cache hits come in (after 1, 2, 4, 8, ... hits: a logarithmic
number of times) and when the run ends; if its root, line or fix changed, an ``update`` event says so. The last word
on each story is then the final report's. What is told, and told again, is :mod:`hlodiff.explain.live_telling`'s;
this module places each graph in its family and explains a recompilation over the family's window.
"""

from __future__ import annotations

from hlodiff.dumps.evidence import Run
from hlodiff.dumps.graph_record import TRACED_KINDS, GraphRecord
from hlodiff.explain.live_told import lazy_random_input
from hlodiff.errors import HlodiffError, InputWarning
from hlodiff.explain.dynamo_bridge import bridge_ops, bridge_run, bridge_text
from hlodiff.explain.live_bridge_steps import AWAIT_STEPS, BridgeStepReader, BridgeSteps
from hlodiff.explain.live_events import LiveEvent
from hlodiff.explain.live_cuts import HeldCuts
from hlodiff.explain.live_families import DEFERRED, SETTLED, Held, Latest, LiveFamily
from hlodiff.explain.live_telling import LiveTelling

AWAIT_DYNAMO = 8
"""Cache hits a held step around a compiled call waits, at most, for Dynamo's reason once the bridge has compiled
again and the Dynamo log being written has told no recompilation yet: its guard comes a few lines later
(d12_ids_int32: the step was told "a value is kept on some steps only" before the dtype guard was read)."""


class LiveExplainer(LiveTelling):
    """Feed it records in run order (:meth:`feed`); it returns the events each one made true.

    ``run`` is the evidence as it grows (:class:`hlodiff.dumps.evidence.Run`: its PT_XLA_DEBUG events and
    live-tensor reports as the follower reads them); each compilation fed is added to it, and each is explained
    over a window of it (:meth:`Run.window`) with the same side sources as the final report."""

    def __init__(self, run: Run | None = None, *, warnings: list[InputWarning] | None = None):
        self.run = run if run is not None else Run()
        self.warnings = warnings if warnings is not None else []
        self.families: dict[str, LiveFamily] = {}
        super().__init__()
        self.first: dict[str, object] = {}  # cache key -> summary of the graph that compiled it
        self.dump_only: bool | None = None  # every graph read so far came from a dump of compilations alone
        self.graphs = 0
        self.step = 0
        self.compilations = 0
        self.cuts = HeldCuts()
        """Graphs an early read cut short, held for the graph that ends their step
        (:mod:`hlodiff.explain.live_cuts`)."""
        from hlodiff.explain.live_dynamo import LiveDynamo

        self.dynamo = LiveDynamo(failures=[])
        """Dynamo's own story, from its log once the glue found one (:meth:`look_at_dynamo`)."""
        from hlodiff.explain.live_steps import UserSteps

        self.user_steps = UserSteps()
        """The steps the events show in a torch.compile run: the user's, not the graphs' (review 10 F6)."""
        self.bridge_seen = False
        """A graph of torch_xla's Dynamo bridge was read: a torch.compile run."""
        self.bridge_ops_seen = False
        """A recompilation was the bridge's by its ops alone (no stack, no debug log, no Dynamo log:
        :func:`_bridge_ops_of`): a torch.compile run as well."""
        self._bridge_compiled: dict = {}
        """Per bridge family, its compilations: more than one is a recompilation Dynamo's log will give a reason for."""
        self._steps = BridgeStepReader()
        """The steps of the run as held, read as the report at exit reads them
        (:mod:`hlodiff.explain.live_bridge_steps`)."""
        self.failures: list[str] = []
        self.find_dynamo_logs = None
        """Set by the glue (:class:`hlodiff.live_run.LiveRun`): looks for Dynamo's log beside the run now (at most at
        the 1st, 2nd, 4th, ... recompilation), so a step graph is not told before the log that says whether it
        follows from a break is found."""
        """Analyses that failed (a bug in hlodiff: the report at exit says it again); their events are ``unread``."""

    # -- feeding ---------------------------------------------------------------------------------------------------

    def feed(self, records) -> list[LiveEvent]:
        out: list[LiveEvent] = []
        self.user_steps.poll_begins()
        for record in records:
            self.dump_only = self.dump_only is not False and record.kind == "xla_dump"
            out += self._one(record)
        return self._marked(self.user_steps.translate(out))

    def _marked(self, events: list[LiveEvent]) -> list[LiveEvent]:
        """A dump of compilations alone has no steps of the user's: its events say so (review 11, F8)."""
        if self.dump_only:
            for event in events:
                event.compilations_only = True
        return events

    def finish(self) -> list[LiveEvent]:
        """The run ended: each family's newest recompilation looked at with everything known."""
        out: list[LiveEvent] = self._place_apart(self.cuts.release(every=True))
        for family in self.families.values():
            if family.latest is not None:
                out += self._look_again(family, running=False)
        return self._marked(self.user_steps.translate(out))

    def look_at_dynamo(self, final: bool = False, trees=None) -> list[LiveEvent]:
        """Dynamo's log grew (or the run ended: ``final``): its recompilations and graph breaks, told as the report
        tells them (:mod:`hlodiff.explain.live_dynamo`). ``trees``: the guard trees the log has written so far
        (:class:`~hlodiff.explain.live_dynamo.GuardTrees`), read by the glue."""
        steps = self.user_steps
        # in the user's steps already (review 10 F6): a finding joined to a graph at that graph's step
        events = self.dynamo.look(self.run, steps.shown(self.step), self.graphs, len(self.stories), final, trees,
                                  place=steps.of_ref if steps.active else None,
                                  upcoming=steps.unjoined if steps.active else None, records=self._held(),
                                  compile_step=steps.compile_step if steps.active else None)
        self.failures += self.dynamo.failures
        self.dynamo.failures.clear()
        return events

    def _one(self, record: GraphRecord) -> list[LiveEvent]:
        from hlodiff.explain.families import family_key, is_partial
        from hlodiff.explain.inventory import CacheHit, summarize

        self.graphs += 1
        key = record.cache_key()
        if key is not None and record.kind == "xla_dump":
            key = f"{record.source}#{key}"
        known = self.first.get(key) if key is not None else None
        if known is not None:
            summary = CacheHit(record, known, known, keep=False)
        else:
            unread: list[GraphRecord] = []
            found = summarize([record], keep=False, warnings=self.warnings, unread=unread, protos=self.run.protos())
            if not found:
                return [LiveEvent("unread", self._step(None), record.ref, "", graphs=self.graphs)] if unread else []
            summary = found[0]
            self.run.add([record])  # the run's evidence grows by its compilations (hits repeat one of them)
            if key is not None:
                self.first[key] = summary
            self._steps.compiled(record, summary, key)
        # as in the report (issue 31): a graph the Dynamo bridge ran is never a cut step
        bridge = bridge_run(record.frames, self._debug_cause(record))
        self.bridge_seen = self.bridge_seen or bridge
        if not bridge and not self.bridge_ops_seen and known is None and not self.run.dynamo_logs \
                and summary.name.startswith("SyncTensorsGraph"):
            # a compiled graph the bridge made, known by its ops alone (no stack, no debug log, no Dynamo log: an
            # e-nolog capture of a run Dynamo never logged), makes the run a torch.compile one from its first
            # compilation, not only once one of its graphs recompiles (Dynamo round 26, d26_loss_cfg_rebuilt_control:
            # a step graph told "a value is kept on some steps only" in the warm-up, before the bridge was known)
            self.bridge_ops_seen = bridge_text(record, record.text())
        if bridge and known is None:
            self._bridge_compiled[family_key(summary)[0]] = self._bridge_compiled.get(family_key(summary)[0], 0) + 1
        cut = is_partial(summary, self._debug_cause(record)) and not bridge
        self.cuts.read(record, cut, bridge)
        step = self._step(summary, cut)
        held = Held(record, summary, known is not None, cut, step, self.graphs, key)
        own = family_key(summary)
        self.user_steps.read(record.ref, step, bridge, cut, record.kind in TRACED_KINDS, self._debug_cause(record),
                             hit=known is not None, key=key)
        if cut:
            # as in the report: a graph an early read cut short belongs to the family of the graph that ends its
            # step (the sync's), known when that graph comes; held till then
            return self._place_apart(self.cuts.hold(held))
        out: list[LiveEvent] = []
        ended = self.cuts.ended()
        self.cuts.ending = record if ended and known is not None and not self._cut_before(own[0]) else None
        try:
            for waiting in ended:
                out += self._place(waiting, own)
        finally:
            self.cuts.ending = None
        return out + self._place(held, own)

    def _cut_before(self, key: str) -> bool:
        """A graph in the family's windows came after a cut (every step read early so far): its cuts are compared
        with each other there, as before; only a family's first cut needs the step it cut short beside it."""
        family = self.families.get(key)
        return family is not None and any(r.ref in self.cuts.before for r in (*family.compiled, *family.recent))

    def _place_apart(self, released: list[Held]) -> list[LiveEvent]:
        """Held cut graphs placed in families of their own: no graph that ends their step came."""
        from hlodiff.explain.families import family_key

        out: list[LiveEvent] = []
        for waiting in released:
            out += self._place(waiting, family_key(waiting.summary))
        return out

    def _place(self, held: "Held", own: tuple[str, str]) -> list[LiveEvent]:
        """One graph in its family (``own``: its key and label): a cache hit's place in the window (and a look
        again when one is due), or a compilation told."""
        record, step = held.record, held.step
        fkey, label = own
        family = self.families.get(fkey)
        if family is None:
            family = self.families[fkey] = LiveFamily(fkey, label)
        if record.kind == "xla_dump":  # compilations only: a family's k-th module is its k-th step, as in the report
            step = family.steps
        self._keep(family, family.recent, record)
        family.steps += 1
        if not held.cut:
            family.full += 1
        if held.hit:
            family.hits_since += 1
            if held.cut:  # the middle of a step: looked at again once the graph that ends it is placed
                return []
            if family.pending and family.latest is not None and self._awaits(family):
                return []  # Dynamo's reason (or the steps that show the bridge's fixed set) comes later: held
            if family.latest is not None and (family.pending or family.hits_since >= family.next_look):
                family.next_look *= 2
                return self._look_again(family, settled=family.hits_since >= SETTLED)
            return []
        self.compilations += 1
        first_of_family = not family.compiled
        # a family's second step compiled again (pending): settled by what came next, this graph
        earlier = self._look_again_one(family, running=True) if family.pending and family.latest is not None \
            and not self._awaits(family) else []
        # a fix still waiting for the next steps: with executions followed, put off while the family compiles again
        # (no step has reused a graph yet: a warm-up, tasks in rotation, a second graph after an early read that is
        # an optimizer's warm-up), told at its next cache hit or the end (the oldest past DEFERRED, now); else told
        # before the family moves on, or the story it belongs to would never get one
        waiting = family.told is not None and family.told.waits and family.latest is not None
        defer = waiting and record.kind in TRACED_KINDS
        if waiting and not defer:
            earlier += self._look_again_one(family, running=False)
        self._keep(family, family.compiled, record)
        if first_of_family:
            return [LiveEvent("compiled", step, record.ref, label, graphs=held.graphs)]
        before = Latest.of(family)
        family.latest, family.latest_step, family.hits_since, family.next_look = record, step, 0, 1
        told = self._tell(family, record, step, held.cut)
        if told and told[0].kind == "compiled":  # another function of the name: the name's story stays as it was
            before.put(family)
            return earlier + told
        if defer:
            family.deferred.append(before)
            if len(family.deferred) > DEFERRED:
                earlier += self._look_deferred(family, 1)
        return earlier + told

    def _keep(self, family: LiveFamily, window, record: GraphRecord) -> None:
        """``record`` in one of the family's windows; a record that left both has no cut to be explained beside."""
        gone = family.keep(window, record)
        if gone is not None:
            self.cuts.forget(gone)

    def _awaits(self, family: LiveFamily) -> bool:
        return self._awaits_dynamo(family) or self._awaits_steps(family)

    def _awaits_steps(self, family: LiveFamily) -> bool:
        """A held recompilation of the bridge's graphs, no Dynamo log: whether it is the compiled function's fixed
        set (the report at exit tells none) is known from two steady steps (:mod:`hlodiff.explain.live_bridge_steps`);
        at most :data:`~hlodiff.explain.live_bridge_steps.AWAIT_STEPS` cache hits, and the end tells everything."""
        if self.run.dynamo_logs or family.hits_since > AWAIT_STEPS:
            return False
        if not bridge_run(family.latest.frames, self._debug_cause(family.latest)):
            return False
        steps = self._bridge_steps()
        return steps is not None and not steps.known

    def _bridge_steps(self) -> BridgeSteps | None:
        """The held run's steps as the report at exit reads them, read once per graph read."""
        placed = (self.graphs, sum(f.steps for f in self.families.values()))
        return self._steps.steps(placed, self._held, self._debug_cause)

    def _awaits_dynamo(self, family: LiveFamily) -> bool:
        """A held step around a compiled call (not the bridge's graph) waits for Dynamo's line: the bridge compiled
        one of its graphs again, and no Dynamo log has told a recompilation yet (one being written, or one not found
        yet: a TORCH_LOGS log is known as Dynamo's by its first message); at most :data:`AWAIT_DYNAMO` cache hits,
        and the end of the run tells everything."""
        if family.hits_since > AWAIT_DYNAMO:
            return False
        if bridge_run(family.latest.frames, self._debug_cause(family.latest)):
            return False
        if self._before_bridge():
            return not self.dynamo.told
        if not any(n > 1 for n in self._bridge_compiled.values()):
            return False
        return not any(k.startswith("dynamo ") and not k.startswith("dynamo break") for k in self.dynamo.told)

    def _before_bridge(self) -> bool:
        """A torch.compile run (a Dynamo log is read) whose bridge has run no graph yet: a step graph that compiles
        again may be the compiled function run uncompiled (a graph break Dynamo gave the frame up on: no FX graph
        ever reaches XLA, and each call's Python choices trace into the step), which the report at exit tells by
        the break (:mod:`hlodiff.explain.dynamo_eager_break`). Dynamo round 20, d20_layerdrop_random: live told the
        first step as a warm-up and the third as "sync at the same points" before and after the break was read."""
        if self.bridge_seen:
            return False
        if not self.run.dynamo_logs and self.find_dynamo_logs is not None:
            self.find_dynamo_logs()
        return bool(self.run.dynamo_logs)

    def _step(self, summary, partial: bool = False) -> int:
        step = self.step
        if summary is not None and not partial:
            self.step += 1
        return step

    @property
    def events(self) -> dict:
        """PT_XLA_DEBUG compilations read so far, by graph hash."""
        return self.run.events

    def _debug_cause(self, record: GraphRecord) -> str | None:
        event = self.events.get(record.graph_hash or "")
        return event.cause if event is not None else None

    # -- explaining ------------------------------------------------------------------------------------------------

    def _window(self, family: LiveFamily) -> list[GraphRecord]:
        seen: dict[int, GraphRecord] = {}
        for r in (*family.compiled, *family.recent):
            seen.setdefault(r.index, r)
            before = self.cuts.before.get(r.ref)
            if before is not None:
                seen.setdefault(before.index, before)
        if self.cuts.ending is not None:
            seen.setdefault(self.cuts.ending.index, self.cuts.ending)
        return [seen[i] for i in sorted(seen)]

    def _explain(self, family: LiveFamily, record: GraphRecord):
        """(the recompilation of ``record`` in its family's window, whether it is expected, whether it follows from
        what Dynamo did), or None; or, for a graph the window's report puts first in a family of its own (a JAX
        module that compiles another function than the earlier modules of its name: the report's family split,
        :mod:`hlodiff.explain.jax_functions`), that :class:`~hlodiff.explain.families.Family`: its first
        compilation, not a recompilation."""
        from hlodiff.explain.recompile import explain_records
        from hlodiff.explain.verdict import unexpected

        window = self._window(family)
        try:
            explanation = explain_records(self.run.window(window), warnings=[])
        except HlodiffError:
            return None
        except Exception as exc:  # noqa: BLE001 - one graph's analysis failing must not end the live lines
            self.failures.append(f"{record.ref}: {type(exc).__name__}: {exc}")
            return None
        ours = next((r for r in explanation.recompilations if r.graph.ref == record.ref), None)
        if ours is None:
            # the first compilation of a family of the report's own (JAX: another function of the name, review
            # F5; a graph the report groups apart from the live family's name), or None
            return next((f for f in explanation.families if f.compiled and f.compiled[0].ref == record.ref), None)
        shouted = {id(r) for r in unexpected(explanation)}
        # review 10 F1: the call's input drawn on the device and never synced grows by a seed update each call:
        # no consequence of what Dynamo did, but the story itself (told with its own fix, live_told.told_of),
        # unless Dynamo's own recompilation heads (dyn_module_logs_only: new sizes; the report at exit leads
        # with the guard too)
        lazy = lazy_random_input(ours) and not self.dynamo.guard_story
        follows = not lazy and self._follows(explanation, record, ours)
        words = self.dynamo.around_words.get(record.ref) if follows else None
        if words and len(words) == len(ours.causes):
            # the report's words for a step that follows from Dynamo (an expected retrace, the first compiled
            # call's cut step), not the window's own fix ("a value is kept on some steps only")
            for cause, (fix, rule, stance) in zip(ours.causes, words):
                cause.fix, cause.fix_rule, cause.written_stance = fix, rule, stance
        return ours, id(ours) not in shouted, follows

    def _follows(self, explanation, record: GraphRecord, ours) -> bool:
        """A recompilation of the bridge's graphs that the report at exit tells by Dynamo's reason, not as XLA's
        own story: with Dynamo's log, every one (its lines tell why: :mod:`hlodiff.explain.live_dynamo`); without
        it, those the report calls the bridge's own (:func:`hlodiff.explain.dynamo.bridge_without_log`: far
        from their closest graph, another program of the bridge)."""
        ops = _bridge_ops_of(explanation, record)
        by_ops = not self.run.dynamo_logs and ops
        self.bridge_ops_seen = self.bridge_ops_seen or by_ops
        # with Dynamo's log, a graph known as the bridge's by its ops alone (no stack: e-nolog) is the bridge's, as
        # the report at exit counts it (dynamo.findings: bridge_run or bridge_ops; Dynamo round 24,
        # d24_seed_in_forward: the resume function's graphs told live as "drop dtype=", the bridge's own at exit)
        if not bridge_run(record.frames, self._debug_cause(record)) and not ops:
            # the step around a compiled call: the report may tell it as following from Dynamo (its findings are
            # over the whole run: a Dynamo run's compilations only); before any bridge graph, the function run
            # uncompiled after a break (the report's eager-break graphs). A bridge known by its ops alone (no
            # stack, no log: e-nolog) is a torch.compile run too (Dynamo round 21, d21_reseed_control: the step
            # graphs of a dump of compilations only were told live as changes of the user's, "expected if in the
            # first steps" at exit)
            if self.bridge_seen or self.bridge_ops_seen or self._before_bridge():
                return record.ref in self.dynamo.around_the_call(self.run, self._held())
            # in a dump of compilations only, a graph break read before the bridge compiled: the broken call's
            # eager part may sync first, and the report tells those graphs by the break (d23_file_log_break)
            return self.dynamo.broke and bool(self.dump_only) \
                and record.ref in self.dynamo.around_the_call(self.run, self._held(), broke_only=True)
        if self.run.dynamo_logs:
            return True
        from hlodiff.explain.dynamo import bridge_without_log

        found = bridge_without_log(explanation, self.run.events)
        if found is not None and record.ref in found.bridge_recompilations:
            return True
        # the family's window holds the bridge's graphs alone: the run's steps say which run every step
        steps = self._bridge_steps()
        return steps is not None and steps.fixed(ours)

    def _held(self) -> list[GraphRecord]:
        """The run's compilations and the executions its families still hold (their recent windows), in run order:
        what the report's whole-run findings see of the steps, bounded (:data:`~hlodiff.explain.live_families.RECENT` per family)."""
        seen: dict[int, GraphRecord] = {r.index: r for r in self.run.records}
        for family in self.families.values():
            for r in family.recent:
                seen.setdefault(r.index, r)
        return [seen[i] for i in sorted(seen)]


def _bridge_ops_of(explanation, record: GraphRecord) -> bool:
    """The record's graph is the bridge's by its ops alone (no stack, no debug log: an ``e-nolog`` capture, whose
    graphs name torch's OpOverload or the bridge's file as their source), as the report at exit reads it when no
    Dynamo log was found (with one, the report's Dynamo story places such graphs and live waits for its lines)
    (:func:`hlodiff.explain.dynamo_bridge.bridge_ops`; Dynamo round 20, d20_fresh_criterion_control: the backward's
    graph told live as "autocast switched on or off" beside a report with no headline)."""
    g = next((g for g in explanation.graphs if g.ref == record.ref), None)
    return g is not None and bridge_ops(g)
