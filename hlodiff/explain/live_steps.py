"""The step numbers the live lines of a ``torch.compile(backend="openxla")`` run show: the user's, not the graphs'.

The live explainer counts a step per graph that is not an early read (:meth:`hlodiff.explain.live.LiveExplainer._step`):
in a lazy torch_xla or JAX run that is one per sync or jitted call. In a torch.compile run torch_xla's Dynamo bridge
runs graphs of its own around every call (the sync of the call's inputs, each FX graph, its warm-up), so that count
ran ahead of the program: "step 4 recompiled" for the loop's call 2 (review 10 F6). Here, once a graph of the bridge
was read from a capture of executions, a shown step is:

* the number of the user's own syncs before it (graphs outside the bridge that end a step), once the run has one;
* before that (a loop that never syncs anything of its own: inference with `out.cpu()`), the number of calls of the
  compiled function before it: a call begins with the bridge's sync of its inputs and its first compiled graph's
  run; the graphs after a graph break (or a backward) run in the same call. (Calls whose inputs need no sync and
  that break into several graphs are counted once per graph: nothing in the graphs tells them apart.)

The internal count is left as it is (the decisions that rest on it: a family's second step, a look again); only
the numbers the events carry out are translated (:meth:`UserSteps.shown`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

FX_CAUSE = "dynamo is compiling"
"""torch_xla's debug-log cause for an FX graph the bridge compiled (its later runs reuse the graph hash)."""
RUN_CAUSE = "dynamo is executing a compiled program"
"""torch_xla's debug-log cause for a later run of a compiled FX graph (a cache hit, or a Dynamo recompilation whose
graph XLA had compiled already): a call of the compiled function, as a compilation of one is (review 15, F3:
tc_warmup_step's five recompilations were each told as "step 1", the runs after the first not counted)."""


@dataclass(slots=True)
class UserSteps:
    active: bool = False
    """A bridge graph was read from a capture of executions: shown steps are translated."""
    syncs: int = 0
    """The user's own step-ending graphs read so far."""
    calls: int = 0
    """Calls of the compiled function begun so far (before the user's first sync)."""
    opened: bool = False
    """A sync of the call's inputs was read since the last run of a compiled graph: the next run begins a call."""
    inputs_seen: bool = False
    """Any sync of a call's inputs was read: runs of compiled graphs between two of them are one call's."""
    at: dict[int, int] = field(default_factory=dict)
    """A compilation's internal step -> the step shown for it."""
    refs: dict[str, int] = field(default_factory=dict)
    """A compilation's ref -> its internal step: a finding of Dynamo's log is told at the step of the graph it
    joined."""
    poll_start: int = 0
    """:meth:`upcoming` when the graphs of the current look began to be read."""
    in_call: set[str] = field(default_factory=set)
    """Cache keys of the compiled graphs run in the call under way: the same graph run again begins the next call
    (a call runs each of its graphs once), whether or not a sync of its inputs came first."""
    fx_reads: list[tuple[int, int]] = field(default_factory=list)
    """(the user's syncs read before it, its shown step) of each new FX graph the bridge compiled to HLO, in order:
    where Dynamo's compiles reached XLA (:meth:`compile_step`)."""

    def read(self, ref: str, step: int, bridge: bool, cut: bool, traced: bool, debug_cause: str | None,
             hit: bool = False, key: str | None = None) -> None:
        """One graph read at internal ``step``: ``bridge`` run by the Dynamo bridge, ``cut`` an early read,
        ``traced`` from a capture of executions, ``hit`` a cache hit, ``key`` its cache key. Only compilations are
        remembered (the events' steps and the graphs Dynamo's findings join are compilations'), so what is kept
        grows with the run's compilations, not its steps."""
        if bridge and traced:
            self.active = True
        if cut:
            return
        if not bridge:
            shown = self.syncs
            self.syncs += 1
        elif self.syncs:
            shown = self.syncs
        elif debug_cause and (FX_CAUSE in debug_cause or RUN_CAUSE in debug_cause):
            # a compiled FX graph run: the first of a call begins it, and so does a graph the call under way ran
            if self.opened or not self.inputs_seen or (key is not None and key in self.in_call):
                shown = self.calls
                self.calls += 1
                self.opened = False
                self.in_call = set()
            else:  # the code after a graph break, a backward: the same call
                shown = max(self.calls - 1, 0)
            if key is not None:
                self.in_call.add(key)
        else:  # the sync of a call's inputs (the bridge's own while it compiles): the next call begins
            self.inputs_seen = self.opened = True
            shown = self.calls
        if not hit:
            self.at.setdefault(step, shown)
            self.refs.setdefault(ref, step)
            if bridge and traced and debug_cause and FX_CAUSE in debug_cause:
                self.fx_reads.append((self.syncs, shown))

    def now(self) -> int:
        """The step under way: the next sync's, or the call in progress (or about to begin)."""
        if self.syncs:
            return self.syncs
        return self.calls if self.opened else max(self.calls - 1, 0)

    def poll_begins(self) -> None:
        """The graphs of another look at the capture are about to be read."""
        self.poll_start = self.upcoming()

    def unjoined(self, n: int, after: int) -> int:
        """The step of the ``n``-th (from 0) Dynamo recompilation read at this look and joined to no graph (its
        graph was compiled already: only Dynamo paid); ``after``: the step of the frame's compilation before it.
        Dynamo writes it before its call's graph runs, and a look most often reads both: the graphs are read first,
        so the upcoming step would be the call after (review 15, F3). The calls this look's graphs began are the
        candidates, in order; a recompilation read before its call's graph is the upcoming step's. While steps
        count calls (no sync of the user's), each compilation of a frame is a call of its own, after the one
        before it."""
        step = min(self.poll_start + n, self.upcoming())
        return step if self.syncs else max(step, after + 1)

    def compile_step(self, n: int) -> int | None:
        """The shown step of Dynamo's ``n``-th compile (from 0: the first compile, then each recompilation) in a run
        of one compiled frame whose compiles each reach XLA as new graphs (a size guard's: XLA's graphs are shaped):
        the ``n``-th step at which the bridge compiled a new FX graph; None while that step is still to come.
        Dynamo's log is written ahead of torch_xla's debug log, so the step the evidence has reached is no guide
        (new-user review 19, F3: "step 1 recompiled" for the 4th step, "step 5" for the 7th)."""
        # a training call compiles its forward and, at backward(), its backward: once the user syncs, the FX graphs
        # compiled between two syncs are one step's (one Dynamo compile); before, each call is a step of its own
        steps = list(dict.fromkeys(syncs if self.syncs else shown for syncs, shown in self.fx_reads))
        return steps[n] if 0 <= n < len(steps) else None

    def upcoming(self) -> int:
        """The step whose graphs are still to come: the next sync's, or the next call (a Dynamo recompilation read
        before its graph is that call's)."""
        return self.syncs if self.syncs else self.calls

    def shown(self, step: int | None) -> int | None:
        if step is None or not self.active:
            return step
        return self.at.get(step, self.now())

    def of_ref(self, ref: str | None) -> int | None:
        """The step shown for the graph ``ref`` (None when it was not read)."""
        step = self.refs.get(ref) if ref else None
        return None if step is None else self.shown(step)

    def translate(self, events: list) -> list:
        """The events with their steps as the user counts them (in place; the same list)."""
        if self.active:
            for e in events:
                e.step = self.shown(e.step)
                e.of_step = self.shown(e.of_step)
        return events
