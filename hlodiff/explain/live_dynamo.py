"""Dynamo's story while a ``torch.compile(backend="openxla")`` run goes: its recompilations and graph breaks, told
live from Dynamo's log as the report at exit tells them (:func:`hlodiff.explain.dynamo.explain_dynamo`).

The XLA graphs alone cannot say why Dynamo traced again (a failed guard on a Python float, a list's length, a hook);
Dynamo's log can. Without it, the live lines tell the bridge's graphs by their XLA difference and point to the report
at exit (:data:`hlodiff.explain.live_told.BRIDGE_LIVE`). With it, each Dynamo recompilation (and each size XLA compiled
for a symbolic one, each graph break) gets its own line, with the same kind, line and fix as the report, and the
bridge's XLA recompilations are counted as following from it.

**Cost.** Dynamo's findings join its compile ids to the bridge's XLA graphs by compile order, so they are computed
over every compilation of the run so far (not a window), each time Dynamo's log grew: a run's Dynamo recompilations
are bounded by Dynamo's recompile limit (8 per frame by default), and the bridge compiles a graph per Dynamo graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlodiff.errors import HlodiffError

BRIDGE_FOLLOWS = ("a graph torch_xla's Dynamo bridge compiled: it follows from what Dynamo did, told on its own "
                  "line from Dynamo's log")
"""The live fix of a recompilation of the bridge's graphs once Dynamo's log is read."""

WAITS_FOR_MORE_CALLS = frozenset({"dynamo_shape_last_batch", "dynamo_shape_short_batch", "dynamo_python_int_once",
                                  "dynamo_python_float_once"})
"""Rows whose fix depends on the calls still to come: a size guard's (an epoch's last batch, or sizes that vary),
and an int whose guard failed once ("... after which both graphs served every call: another value, or the same
number as a float": review 15, F4, told at tc_warmup_step's first recompilation, which four more followed); a float whose guard failed once likewise ("changed once in this run": review 22, F4)."""

WAITS_FOR_DYNAMO = frozenset({"dynamo_xla_per_size"})
"""Rows that rest on Dynamo's log staying silent: "Dynamo traced forward once with a symbolic size, but torch_xla
compiles one XLA graph per concrete size ... pad to buckets" is said of an XLA graph of a new size for which no
failed guard is read yet; the bridge's graph can come before Dynamo's log says why it traced again (Dynamo round
24, d24_prompt_pool_grow: a ParameterList's new length, `..._size == 1`, told as a size to pad, a confident wrong
answer). While the run goes on, the fix waits for the next look (an update) or the end."""

GRAPH_TO_COME = frozenset({"dynamo_mode"})
"""Rows whose recompilation traces another graph (train or eval, grad on or off: dropout, batch norm, a backward
differ), which the bridge compiles to an XLA graph of its own, joined to it by compile order. Dynamo's log is
written ahead of torch_xla's (the debug log, a capture's executions), so such a recompilation read before its graph
would be told at the step the run's evidence has reached, not its call's (review 17, F4: "step 1" for the 5th call,
step 4 in the line after it): it waits for its graph (its step), or the end."""

COMPILES_A_GRAPH = frozenset({"dynamo_shape", "dynamo_shape_sizes_vary", "dynamo_shape_buckets",
                              "dynamo_shape_rank", "dynamo_shape_zero_one",
                              "dynamo_number_only_positional"})
"""Rows of a size guard whose recompilation always reaches XLA as new graphs (XLA compiles one graph per shape): in
a run of one compiled frame, Dynamo's ``F/n`` is told at the ``n``-th step at which the bridge compiled an FX graph
(:meth:`hlodiff.explain.live_steps.UserSteps.compile_step`), and waits for it (new-user review 19, F3). A limit hit
(eager past it), a data-dependent size (a break) and a short batch (its size may have been compiled before a reset)
are left out: their graphs need not come. A module's number baked into the graph as a constant (a dropout rate, a
step count kept on the module; no limit hit) reaches XLA as new graphs too, each value another constant (new-user
review 20, F4: C1's first recompilation told at step 1 under `record`, the step before its call's)."""

KEPT_LOOKS = 4
"""How many looks' findings are kept for a look again at the same evidence (the log's own look, the step around
the call, the bridge's call: a few per poll)."""

UNNAMED = "a guard failed (Dynamo's log names none)"
"""What :mod:`hlodiff.explain.dynamo` says of a recompilation whose failed guard the log does not name: while the
run goes on, the guard's lines may still be on their way (told at the next look, or at the end as they are)."""


@dataclass(slots=True)
class GuardTrees:
    """How far Dynamo's verbose log (``TORCH_LOGS=+dynamo``: no recompiles record) has written its compiles' guard
    trees. There the failed guard is recovered by comparing a compile's tree with the one before
    (:mod:`hlodiff.dumps.dynamo_guards`); while the newer tree is still being written, every guard it has not
    printed yet looks gone, and the first one (a tensor's ``check_tensor``) would be told as the failure, with the
    fix "keep that value the same ... or pass it as a tensor" (dyn_mode_string, dyn_eval_mode). So such a
    recompilation is told once its tree is complete (Dynamo ends each with ``Guard eval latency``), or at the end."""

    used: bool = False
    """The log prints guard trees (``[__guards]`` lines)."""
    complete: set[str] = field(default_factory=set)
    """Compile ids (``0/1``) whose tree is written in full."""

    def waits(self, compile_id: str) -> bool:
        return self.used and compile_id not in self.complete


@dataclass(slots=True)
class LiveDynamo:
    """What was told of Dynamo's findings so far: per finding (a compile id, a size, a graph break's line), the
    words told and whether they were expected, so that a look again says only what changed."""

    told: dict[str, tuple] = field(default_factory=dict)
    stories: dict[str, int] = field(default_factory=dict)
    first_step: dict[str, int] = field(default_factory=dict)
    by_where: dict[tuple, list] = field(default_factory=dict)
    """(kind, file, line, expected) -> [story number, recompilations told, first step]: a story per user line."""
    failures: list[str] = field(default_factory=list)
    frame_steps: dict[str, int] = field(default_factory=dict)
    """Dynamo frame (``0`` of ``0/3``) -> the step its latest recompilation was told at: the next one is a later
    call (:meth:`hlodiff.explain.live_steps.UserSteps.unjoined`)."""
    graphs_told: dict[str, str] = field(default_factory=dict)
    """An XLA graph's ref -> the key of the finding first told for it: a later finding joined to the same graph
    (Dynamo's guard read after the XLA graph of its size was told as a size Dynamo traced once) is that story told
    again with more known, an ``update``, not a second recompilation (rev6_batch_sizes_record)."""
    sizes_waiting: dict[str, str] = field(default_factory=dict)
    """Dynamo frame -> the key of a size told as one its symbolic graph left to XLA (``dynamo sizes 0/0``) whose fix
    waits for Dynamo's log: when a later look reads a recompilation of that frame instead (under ``+dynamo`` the
    failed guard is read after the XLA graph: d31_multiscale_interp's ``scale == 0.5``), that recompilation is the
    same story told with more known, an ``update``, even where its graph is another of the compile's (the forward's
    rather than the input's)."""
    around_words: dict[str, list] = field(default_factory=dict)
    """Per ref the last :meth:`around_the_call` returned, its causes' (fix, fix_rule, written_stance) as the report
    tells them."""
    _explanation: object = None
    _kept: dict = field(default_factory=dict)
    """(without the log, the evidence's :meth:`~hlodiff.dumps.evidence.Run.state`) -> (findings, explanation, the
    records they were made of) of the latest looks: a look again at evidence that has not changed since (Dynamo's
    line and the bridge's call read at one poll, a poll whose files did not grow) keeps them instead of explaining
    the held graphs and reading Dynamo's log again."""
    broke: bool = False
    """Dynamo's log, at the last look, holds a graph break it took (not raised): the compiled function runs split,
    and step graphs of its eager part can come before the bridge's own (d23_file_log_break)."""
    guard_story: bool = False
    """Dynamo's log, at the last look, holds a recompilation of its own that is not expected (a failed guard, a size
    XLA compiled for a symbolic one, a reset): that story heads, and the bridge's graphs follow from it."""

    def look(self, run, current: int, graphs: int, first_story: int, final: bool = False,
             trees: GuardTrees | None = None, place=None, upcoming=None, records=None, compile_step=None) -> list:
        """The events Dynamo's log now makes true (``run``: the growing evidence; ``current``: the step under way;
        ``first_story``: the number the next new story takes; ``trees``: how far the guard trees are written, when
        the log prints them; ``place``: a graph's ref -> its step, or None: a finding joined to an XLA graph is told
        at that graph's step, not at the step its log line was read in, and a recompilation not joined to one yet
        at ``upcoming(n)``, the step of the ``n``-th such recompilation of this look, whose graphs are still to come
        or were read at this look; review 10 F6, review 15 F3). ``records``: the run's compilations and the executions
        still held, as :meth:`around_the_call` reads them: whether full batches came after a short one is in the
        executions (lead47_d_filtered_batch: 8, 8, 7, 8, 8 told "the last batch is short" at the end of the run,
        from the compilations alone). ``compile_step(n)``: the step of Dynamo's ``n``-th compile when its graphs
        were read (:data:`COMPILES_A_GRAPH`)."""
        from hlodiff.explain.live_events import LiveEvent

        found = self._findings(run, records=records)
        if found is None:
            return []
        self.guard_story = any(not r.expected for r in (*found.recompiles, *found.xla_sizes, *found.resets))
        self.broke = self.broke or any(not b.raised for b in found.graph_breaks)
        out = []
        unjoined = 0  # recompilations of this look joined to no graph, in order
        for key, item, expected, family in _items(found):
            if not final and ((item.location is None and not _no_line_to_come(item))
                              or (item.location is not None and item.location.is_library)
                              or (item.kind != "graph_break" and item.guard.guard == UNNAMED)):
                continue  # the message is still being written: its guard and the user's line come with the next lines
            if not final and item.kind == "graph_break" and item.explanation is None \
                    and item.fix_rule != "dynamo_gave_up":
                continue  # its explanation (what Dynamo could not trace: a print(), an .item()) comes with the next lines
            if not final and item.kind != "graph_break" and key.startswith("dynamo ") \
                    and not getattr(item, "function", None):
                # its compile is still being written (the function's name comes with its end): told with the guard's
                # line now, it would move to the call once the name is read, and the next recompilation of the
                # story, told at the guard's line again, would read as another story (review 15, F4)
                continue
            if not final and trees is not None and item.kind != "graph_break" and key.startswith("dynamo ") \
                    and not key.startswith("dynamo sizes ") and trees.waits(item.compile_id):
                continue  # its guard tree is still being written: the guard that failed is not known yet
            placed = place(getattr(item, "difference_graph", None)) if place is not None else None
            if not final and placed is None and place is not None and getattr(item, "fix_rule", None) in GRAPH_TO_COME:
                continue  # its graph is still to come: its step with it
            frame = (getattr(item, "compile_id", None) or "").partition("/")[0]
            compiled_at = _compile_step(item, found, compile_step)
            if compiled_at is False and not final:
                continue  # its graphs are still to come: its step with them
            if isinstance(compiled_at, int) and not isinstance(compiled_at, bool):
                placed = compiled_at
            step = placed if placed is not None else (
                upcoming(unjoined, self.frame_steps.get(frame, 0)) if upcoming is not None
                and item.kind != "graph_break" else current)
            told = _told_of(item, final)
            was = self.told.get(key)
            now = (told.key(), expected)
            if was == now:
                continue
            self.told[key] = now
            graph = getattr(item, "difference_graph", None)
            earlier = self.graphs_told.get(graph) if graph else None
            if key not in self.stories and earlier is not None and earlier != key and earlier in self.stories:
                self.stories[key], self.first_step[key] = self.stories[earlier], self.first_step[earlier]
            elif graph:
                self.graphs_told.setdefault(graph, key)
            self._join_waiting_size(key, frame, found, told)
            if key not in self.stories:
                where = (item.kind, told.location.file if told.location else None,
                         told.location.line if told.location else None, expected)
                same = self.by_where.get(where)
                unjoined += placed is None and item.kind != "graph_break"
                if frame and item.kind != "graph_break" and step is not None:
                    self.frame_steps[frame] = max(step, self.frame_steps.get(frame, 0))
                if same is not None and item.kind != "graph_break":  # one more of a story told: a count
                    self.stories[key] = same[0]
                    same[1] += 1
                    self.first_step[key] = step
                    out.append(LiveEvent("expected" if expected else "repeat", step, key, family, told, same[0],
                                         same[1], same[2], graphs=graphs, expected=expected))
                    continue
                self.stories[key] = first_story + len(self.by_where)
                self.by_where[where] = [self.stories[key], 1, step]
                kind = ("graph_break" if item.kind == "graph_break" and expected
                        else "expected" if expected else "recompiled")  # a function given up: XLA compiles per value
            else:
                kind = "update"
            if kind == "update":
                out.append(LiveEvent(kind, self.first_step[key], key, family, told, self.stories[key],
                                     of_step=self.first_step[key], graphs=graphs, expected=expected))
            else:
                self.first_step[key] = step
                out.append(LiveEvent(kind, step, key, family, told, self.stories[key], graphs=graphs,
                                     expected=expected))
        return out

    def _join_waiting_size(self, key: str, frame: str, found, told) -> None:
        """Note a size told waiting for Dynamo's log; join a recompilation of its frame read later, once the size is
        no longer a finding of its own, to its story (:attr:`sizes_waiting`)."""
        if key.startswith("dynamo sizes "):
            if told.waits and frame:
                self.sizes_waiting.setdefault(frame, key)
            return
        waiting = self.sizes_waiting.get(frame) if key.startswith("dynamo ") else None
        if waiting is None or key in self.stories or waiting not in self.stories \
                or any(r.compile_id.partition("/")[0] == frame for r in found.xla_sizes):
            return
        self.stories[key], self.first_step[key] = self.stories[waiting], self.first_step[waiting]
        del self.sizes_waiting[frame]

    def around_the_call(self, run, records=None, broke_only: bool = False) -> set[str]:
        """Refs of XLA recompilations outside the bridge that the report tells as following from Dynamo: the step
        around the compiled call changed with Dynamo's expected recompilation (``follows_expected``), or the first
        compiled call's step cut by the bridge's own syncs (``first_call_syncs``); with or without Dynamo's log.
        ``records``: the run's compilations and the executions still held (the families' recent windows): a family
        that warms up is ``warm-up only`` by its later cache hits, which the compilations alone do not show
        (dyn_eval_mode: its first compiled call's step, A then B reused)."""
        found = self._findings(run, without_log=True, records=records)
        refs = (set(found.compilations_only) | set(found.eager_break_graphs) if found is not None else set())
        if found is not None and not broke_only:
            # before the bridge compiled, only what a graph break explains is known (``broke_only``): which step
            # the first compiled call cut, or followed a retrace, waits for the bridge's graphs
            refs |= set(found.follows_expected) | set(found.first_call_syncs)
        # the words the report at exit gives each of them (dynamo_step_follows_expected, dynamo_first_call_sync):
        # the live line of one counted as following says the same, not its window's own fix
        self.around_words = {r.graph.ref: [(c.fix, c.fix_rule, c.written_stance) for c in r.causes]
                             for r in self._explanation.recompilations if r.graph.ref in refs} if refs else {}
        return refs

    def call_of(self, run, ref: str, cause):
        """The user's call a bridge graph's live line names (review 15, F8: the report at exit and Dynamo's line say
        :12, the bridge's line said :10), from Dynamo's findings so far; None when its own line stands."""
        from hlodiff.explain.dynamo_call_line import bridge_call

        return bridge_call(self._findings(run), ref, cause)

    def _findings(self, run, without_log: bool = False, records=None):
        from hlodiff.explain.dynamo import explain_dynamo
        from hlodiff.explain.dynamo_backends import place_other_backends
        from hlodiff.explain.dynamo_call_line import place_bridge_inputs_at_calls, place_dynamo_calls
        from hlodiff.explain.dynamo_instance_attrs import mark_per_instance
        from hlodiff.explain.decision_line import place_dynamo_decisions
        from hlodiff.explain.dynamo_parametrized import mark_parametrized
        from hlodiff.explain.dynamo_branch_only import mark_branch_only
        from hlodiff.explain.dynamo_converted import converted_after_compile
        from hlodiff.explain.dynamo_detach_pair import mark_detached_pairs
        from hlodiff.explain.dynamo_uneven_chunks import mark_uneven_chunks
        from hlodiff.explain.dynamo_grown_cat import mark_grown_in_source
        from hlodiff.explain.recompile import explain_records, user_files

        if not (run.dynamo_logs or without_log) or not run.records:
            return None
        held = list(records or run.records)
        key = (without_log, run.state(held))
        if key in self._kept:
            found, self._explanation, _ = self._kept[key]
            return found
        try:
            explanation = explain_records(run.window(held), warnings=[])
            self._explanation = explanation
            logs = run.read_dynamo([]) if run.dynamo_logs else []
            found = explain_dynamo(run.dynamo_logs, explanation, run.events, [], logs=logs)
            if found is None and without_log and run.dynamo_logs:
                # Dynamo's log has said nothing yet (a TORCH_TRACE file still being written, a TORCH_LOGS log of
                # a run that never recompiles): the bridge's graphs alone still say which step the first
                # compiled call cut (dyn_grad_hook_control: its A,B,B,... sync family is a warm-up)
                from hlodiff.explain.dynamo import bridge_without_log

                found = bridge_without_log(explanation, run.events)
            if found is not None:
                # as the report at exit (review 14, F3: live said the def :9, the report the call :16): the one
                # call of the compiled function in a source file on disk is its line
                users = user_files(explanation)
                mark_per_instance(found, run.sources, users)
                # the line of the decision read from the source, as the report at exit (round 20: a pruning call)
                place_dynamo_decisions(found, run.sources, users)
                mark_parametrized(found, run.sources, users)
                mark_branch_only(found, run.sources)
                mark_uneven_chunks(found, run.sources)
                mark_detached_pairs(found, run.sources)
                mark_grown_in_source(found, run.sources, users)
                place_dynamo_calls(found, run.sources, users)
                place_other_backends(found, run.sources, users)  # no failed guard: the other backend's call
                place_bridge_inputs_at_calls(found, explanation.recompilations)
                found.converted = converted_after_compile(explanation, found, run.sources, users)
            if len(self._kept) >= KEPT_LOOKS:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = (found, explanation, held)  # the records held: their ids in the key stay theirs
            return found
        except HlodiffError:
            return None  # a line still being written: read again at the next look
        except Exception as exc:  # noqa: BLE001 - the live lines go on; the report at exit says it again
            self.failures.append(f"Dynamo: {type(exc).__name__}: {exc}")
            return None


def _no_line_to_come(item) -> bool:
    """A value guard of torch's wrapper of a compiled nn.Module (a submodule's number, a flag, a mode) names no line
    of the user's, and no later line will: tell it when read (dyn_dropout_anneal was told after the eager fallback's
    XLA graphs). A size keeps waiting: the XLA graph of the new size gives the user's line (dyn_module_logs_only),
    and the sizes that follow choose the fix (rev6_batch_sizes)."""
    return getattr(item, "located", None) == "wrapper" and item.kind not in ("shape", "graph_break")


def _items(found):
    """(key, finding, expected, family label) for each finding the report would tell, in the report's order."""
    for r in [*found.recompiles, *found.xla_sizes]:
        key = f"dynamo {r.compile_id}" if r in found.recompiles else f"dynamo sizes {r.compile_id}"
        name = r.function or "compiled function"
        yield key, r, r.expected, f"Dynamo {name}" if " " not in name else f"Dynamo: {name}"
    for r in found.resets:  # Dynamo's cache emptied: the function compiled from scratch again (an update per time)
        yield f"dynamo reset {r.function}", r, r.expected, f"Dynamo {r.function or 'compiled function'}"
    for r in found.converted:  # the compiled model converted to another type after compiling: no retrace
        yield f"dynamo converted {r.difference_graph}", r, r.expected, "Dynamo compiled model"
    for b in found.graph_breaks:
        where = f"{b.location.file}:{b.location.line}" if b.location else b.reason
        # a function Dynamo gave up runs eagerly: what torch_xla compiles per value read there is not expected
        yield f"dynamo break {where}", b, b.fix_rule != "dynamo_gave_up", "Dynamo graph break"


def _told_of(item, final: bool = True):
    from hlodiff.explain.live_events import Told

    if item.kind == "graph_break" and item.fix_rule == "dynamo_gave_up":
        fn = item.location.function if item.location is not None and item.location.function else "the function"
        summary = f"Dynamo gave up on {fn} (WON'T CONVERT): it runs eagerly on every call"
    elif item.kind == "graph_break":
        summary = f"graph break ({item.count}x): {item.reason}"
    elif item.kind == "reset":
        summary = (f"Dynamo compiled {item.function or 'the compiled function'} from scratch again ({item.seen}): "
                   "its cache was emptied, no guard failed")
    elif "converted_after_compile" in item.facts:
        summary = (f"the compiled model's parameters were converted {item.seen} after compiling: Dynamo traced "
                   "nothing again")
    elif item.guard.guard.startswith("no guard failed"):
        summary = f"XLA compiled another size for Dynamo's symbolic graph of {item.function or 'the function'}"
        if item.seen:
            summary += f" ({item.seen})"
    else:
        summary = f"Dynamo traced {item.function or 'the compiled function'} again: guard `{item.guard.guard}` failed"
        if item.seen:
            summary += f" ({_seen_words(item.seen)})"
    fix, waits = item.fix, False
    if not final and item.fix_rule in WAITS_FOR_MORE_CALLS | WAITS_FOR_DYNAMO:
        # "the last batch is short" rests on no later recompilation coming, and "a batch smaller than the one
        # before" on no third size coming, which a run still going cannot know (review 6, p08: told at step 4 for a
        # batch of 3 that an 8 and a 5 followed): the fix waits for the calls to come (an update) or the end
        fix, waits = None, True
    return Told(item.kind, summary, item.location, fix, waits=waits,
                label=mode_label(item) if item.kind == "mode" else None)


MODE_LABELS = (("autocast", "autocast setting"), ("grad_mode", "grad mode"), ("training", "train/eval mode"),
               ("function_mode_stack", "torch function mode stack"))
"""What a Dynamo ``mode`` guard is about, by the fact or the setting its guard names, as the live line says it
(review 21, F5: "mode at p8_tc_amp.py:23" for autocast switched on); the first that holds."""


def mode_label(item) -> str:
    """The words for a ``mode`` recompilation: the setting it names (:data:`MODE_LABELS`, or a global setting's own
    name: ``num_threads setting``), else ``mode``."""
    guard = item.guard.guard
    for key, words in MODE_LABELS:
        if key in item.facts or f"GLOBAL_STATE changed: {key}" in guard or f".{key}" in guard:
            return words
    if "global_setting" in item.facts and item.subject:
        return f"{item.subject} setting"
    return "mode"


def _seen_words(seen: str) -> str:
    """A guard's value as the graph it guards was traced with: ``step was 0`` beside ``guard `step == 0` failed``
    read as the value of the failing call (review 15, F4: it was 1); said as what the earlier graph holds."""
    name, was, value = seen.partition(" was ")
    if not was or "," in name:
        return seen
    return f"the earlier graph was traced for {name} = {value}; this call passed another"


def _compile_step(item, found, compile_step):
    """The step of a size recompilation's graphs in a run of one compiled frame (:data:`COMPILES_A_GRAPH`): an int,
    False while its graphs are still to come, None when the rule does not apply (another row, several frames)."""
    if compile_step is None or getattr(item, "fix_rule", None) not in COMPILES_A_GRAPH or item.kind == "graph_break":
        return None
    frame, _, n = (getattr(item, "compile_id", None) or "").partition("/")
    frames = {c.compile_id.partition("/")[0] for c in getattr(found, "compiles", []) if c.compile_id}
    frames |= {r.compile_id.partition("/")[0] for r in found.recompiles if r.compile_id}
    if not n.isdigit() or frames != {frame}:
        return None
    step = compile_step(int(n))
    return False if step is None else step
