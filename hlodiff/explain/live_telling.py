"""What the live story says of a family's newest recompilation, and what it says again: a recompilation told in
full (or as one more of a story already told), counted as expected or as following from what Dynamo did, held
as ``pending`` until the next step settles it; then, as the run goes on, looked at again (and the recompilations
whose fix was put off while the family compiled again), with an event only when its words changed.

:class:`hlodiff.explain.live.LiveExplainer` is a :class:`LiveTelling`: it places each graph in its family, explains
a recompilation over its family's window (``_explain``) and holds the run (``run``, ``dynamo``, ``graphs``,
``bridge_seen``); this keeps the counts and stories told.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hlodiff.diff.fix_rules import EAGER
from hlodiff.dumps.graph_record import TRACED_KINDS, GraphRecord
from hlodiff.explain.dynamo_bridge import bridge_run
from hlodiff.explain.live_events import LiveEvent, Told
from hlodiff.explain.live_families import Latest, LiveFamily, Story
from hlodiff.explain.live_told import ONCE_RULES, told_of as _told


class LiveTelling:
    """The stories told so far (one per family and line), and the recompilations counted as expected (JAX's eager
    ops apart), with the events that tell a family's newest recompilation and look at it again."""

    def __init__(self) -> None:
        self.stories: dict[tuple, Story] = {}
        self.expected = 0
        self.eager = 0  # expected recompilations of JAX operations run outside jit (told once, then counted)

    def _tell(self, family: LiveFamily, record: GraphRecord, step: int, cut: bool = False) -> list[LiveEvent]:
        """A new recompilation: expected ones counted in one line, a family's first one on its second step
        (an optimizer's warm-up, if the next steps reuse the graph) held as ``pending`` until its next execution
        shows whether it settles, the others told in full (or as one more of a story already told)."""
        found = self._explain(family, record)
        if found is None:
            return [LiveEvent("unread", step, record.ref, family.label, graphs=self.graphs)]
        if not isinstance(found, tuple):
            return [LiveEvent("compiled", step, record.ref, found.label, graphs=self.graphs)]
        recompilation, expected, follows = found
        told = _told(recompilation, running=True, dynamo_log=bool(self.run.dynamo_logs))
        family.told, family.expected, family.story, family.pending = told, expected or follows, None, False
        family.counted = False
        family.follows = follows
        if follows:  # counted: Dynamo's line (or the report at exit) tells why
            self.expected += 1
            lead = recompilation.causes[0] if recompilation.causes else None
            told.location = (self.dynamo.call_of(self.run, record.ref, lead) if self.run.dynamo_logs else None) \
                or _the_call(recompilation, told.location)
            return [LiveEvent("follows", step, record.ref, family.label, told, count=self.expected,
                              expected=True, graphs=self.graphs)]
        if self._before_bridge() and not self.dynamo.told and record.kind in TRACED_KINDS \
                and not bridge_run(record.frames, self._debug_cause(record)):
            # a torch.compile run before any bridge graph and any word of Dynamo's: whether the step follows from a
            # break Dynamo gave the function up on is known once its log says so; held silently till then
            # (at most AWAIT_DYNAMO cache hits, and the end of the run tells everything)
            family.pending = True
            return []
        if expected and family.full == (1 if cut else 2) and record.kind in TRACED_KINDS \
                and recompilation.causes and recompilation.causes[0].fix_rule in ONCE_RULES:
            # "expected once" rests on the next steps reusing the graph: the next execution says (as an optimizer's
            # warm-up is held), never "expected" now and "not expected" at the next line
            family.pending, family.expected = True, False
            return [LiveEvent("pending", step, record.ref, family.label, told, graphs=self.graphs)]
        if expected:
            self.expected += 1
            eager = 0
            if recompilation.causes and recompilation.causes[0].fix_rule in EAGER:
                self.eager += 1
                eager = self.eager
            family.counted = bool(eager)
            return [LiveEvent("expected", step, record.ref, family.label, told, count=self.expected,
                              expected=True, graphs=self.graphs, eager=eager)]
        if family.full == (1 if cut else 2) and record.kind in TRACED_KINDS:
            # compiled, then compiled again at once; the next execution says whether it settles (a dump of
            # compilations alone shows no cache hits: nothing would settle it before the end)
            family.pending = True
            return [LiveEvent("pending", step, record.ref, family.label, told, graphs=self.graphs)]
        if self.bridge_seen and record.kind in TRACED_KINDS and bridge_run(record.frames) \
                and not self.run.dynamo_logs:
            # a graph of the bridge recompiled before Dynamo's log was found: why Dynamo traced again comes with
            # its log (each bridge recompilation then follows from it, as the report at exit tells it); held
            # silently till then, told as it is at the end if no log comes (dyn_varargs_len)
            family.pending = True
            return []
        if self.bridge_seen and record.kind in TRACED_KINDS and not bridge_run(record.frames):
            # torch.compile run, the step around a compiled call: whether it follows from what Dynamo did is known
            # once Dynamo's message is in its log, by the next execution at the latest; held silently till then
            family.pending = True
            return []
        return [self._story_event(family, record, told)]

    def _story_event(self, family: LiveFamily, record: GraphRecord, told: Told) -> LiveEvent:
        """The first of a story (told in full) or one more of a story already told (a count)."""
        skey = (family.key, told.location.file if told.location else None,
                told.location.line if told.location else told.kind)
        story = self.stories.get(skey)
        if story is None:
            story = self.stories[skey] = Story(len(self.stories), family.latest_step, told=told,
                                                       kinds={record.ref: told.kind},
                                                       firsts={told.kind: (record.ref, told)})
            family.story = story.number
            return LiveEvent("recompiled", family.latest_step, record.ref, family.label, told, story.number,
                             graphs=self.graphs)
        story.count += 1
        family.story = story.number
        told = family.told = self._under_its_lead(family, told)
        return LiveEvent("repeat", family.latest_step, record.ref, family.label, told, story.number, story.count,
                         story.first_step, graphs=self.graphs)

    def _look_again(self, family: LiveFamily, running: bool = True, settled: bool = False) -> list[LiveEvent]:
        """The family's newest recompilation with what is known now: an event only when its words changed (and
        first, the recompilations whose waiting fix was put off while the family compiled again)."""
        return (self._look_deferred(family, len(family.deferred), running, settled)
                + self._look_again_one(family, running, settled))

    def _look_deferred(self, family: LiveFamily, count: int, running: bool = False,
                       settled: bool = False) -> list[LiveEvent]:
        """The ``count`` oldest put-off recompilations looked at again: their fixes told now, or (``running``)
        once the steps settle them; those still waiting stay put off."""
        out: list[LiveEvent] = []
        newest = Latest.of(family)
        kept = []
        for earlier in family.deferred[:count]:
            earlier.put(family)
            out += self._look_again_one(family, running, settled)
            if family.told is not None and family.told.waits:
                kept.append(Latest.of(family))
        family.deferred[:count] = kept
        newest.put(family)
        return out

    def _look_again_one(self, family: LiveFamily, running: bool, settled: bool = False) -> list[LiveEvent]:
        record = family.latest
        found = self._explain(family, record) if record is not None else None
        if not isinstance(found, tuple) or family.told is None:
            return []
        recompilation, expected, follows = found
        told = _told(recompilation, running=running, dynamo_log=bool(self.run.dynamo_logs), settled=settled)
        pending, family.pending = family.pending, False
        if follows:
            was, family.follows, family.told, family.expected = family.follows, True, told, True
            if was:
                return []
            self.expected += 1
            kind = "follows" if pending or family.story is None else "update"
            return [LiveEvent(kind, family.latest_step, record.ref, family.label, told, family.story,
                              count=self.expected, of_step=family.latest_step, expected=True, graphs=self.graphs)]
        if family.follows and not expected and running and self.bridge_seen:
            # review 20, F4: the step around a compiled call was told as following Dynamo's compile; a later look
            # that reads it otherwise mid-run (Dynamo's next compile not joined yet) is held, not told "not
            # expected after all" and then "expected" again: the end of the run has the last word
            return []
        family.follows = False
        if not expected:
            told = self._under_its_lead(family, told)
        if not pending and told.key() == family.told.key() and expected == family.expected \
                and told.waits == family.told.waits:
            return []
        if not pending and expected == family.expected and family.story is not None \
                and told.same_advice(family.told):
            family.told = told  # the same row's words with more facts (steps, values): the report at exit has them
            return []
        was_expected = family.expected
        family.told, family.expected = told, expected
        if expected and was_expected and family.counted and not pending:
            return []  # counted with the eager ops: the report lists it with what it now knows
        family.counted = family.counted and expected
        if expected:
            if pending or not was_expected:
                self.expected += 1
            return [LiveEvent("update", family.latest_step, record.ref, family.label, told, family.story,
                              count=self.expected, of_step=family.latest_step, expected=True, graphs=self.graphs)]
        if was_expected:
            self.expected = max(0, self.expected - 1)
        if family.story is None:  # held (pending) or counted as expected until now: told in full now
            event = self._story_event(family, record, told)
            if pending:  # told after later steps' lines (review F5: step 2, 3, then 1): say it is a late word
                event.of_step = family.latest_step
            elif was_expected and event.kind == "recompiled":  # review 15, F4: after an "expected" line of its step
                event.of_step, event.revises_expected = family.latest_step, True
            return [event]
        return [LiveEvent("update", family.latest_step, record.ref, family.label, told, family.story,
                          of_step=family.latest_step, graphs=self.graphs)]

    def _under_its_lead(self, family: LiveFamily, told: Told) -> Told:
        """A recompilation counted into a story already told ("same story as step 2") whose root is another kind or
        fix row than the story's lead's is told under the lead's fix (or waits while the lead's does), as the report
        at exit tells a story's members under its lead: the first member of the story's most common kind so far, the
        first seen on a tie (:func:`hlodiff.explain.stories._story`), with its newest own words. Round 25 (r25_tx_resume_state_to_device): AdamW's step counters read back as inputs at opt.step()
        were told the generic "a Python `if` ... such as a causal mask" live, where the report tells them under the
        cut step's "keep the optimizer's step counters on the CPU"; round 16 (r16_tx_randaug_ops): an augmentation
        drawn again was told "the same tensors are combined in another order" under a story whose `if` the report
        tells with "Python code decides per step what is traced"."""
        story = next((s for s in self.stories.values() if s.number == family.story), None)
        ref = family.latest.ref if family.latest is not None else None
        if story is None or ref is None:
            return told
        story.kinds[ref] = told.kind
        if story.firsts.setdefault(told.kind, (ref, told))[0] == ref:
            story.firsts[told.kind] = (ref, told)  # the first of its kind: its newest own words
        counts = Counter(story.kinds.values())
        lead_ref, lead = story.firsts[max(dict.fromkeys(story.kinds.values()), key=counts.__getitem__)]
        if lead_ref == ref or (lead.kind == told.kind and (lead.rule is None or told.rule is None
                                                           or lead.rule == told.rule)):
            return told
        return replace(told, fix=lead.fix, rule=lead.rule, waits=lead.waits)


def _the_call(recompilation, at):
    """The user's call of the compiled function whose frame ``at`` is (the bridge's graph names the ``def``, its
    stack the loop's call), as Dynamo's line and the report at exit place it (review 14, F3: live said :9, the
    report :16); else ``at``."""
    from hlodiff.explain.dynamo import caller_in_graph

    if at is None or not at.function:
        return at
    return caller_in_graph(recompilation, at.function) or at
