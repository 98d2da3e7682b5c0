"""The words of the live events (:mod:`hlodiff.explain.live`): what ``hlodiff record`` writes on stderr while the
command runs, and what ``hlodiff watch`` prints (or, with ``--json``, one JSON object per line).

One line per recompilation, readable in a job log among the job's own output, each starting ``hlodiff:``::

    hlodiff: step 4 recompiled (sync at train.py:14): shape at train.py:10: input shape changed ...; fix: ...

under the first recompilation of a story a few indented lines (the other causes, the closest earlier graph), and
for the next ones of the same story one line with the count (a fix already printed for the story is referred to,
not printed again: review 22, F7). Expected recompilations (warm-up, setup, one graph
per bucket) get one short line with their count, never a block.
"""

from __future__ import annotations

import json

from hlodiff.errors import printable
from hlodiff.explain.live_events import LiveEvent
from hlodiff.render.plural import counted

PREFIX = "hlodiff: "

AT_EXIT = "the full report at exit"
"""Where the last word is under ``hlodiff record``: it prints the report once the command ended."""

UNREAD = "not read while the run went on (its file still being written, or a form hlodiff does not read here)"
"""Of a graph the live lines could not read yet: no failure of the run or of the graph (review 14, F3: "compiled,
but it could not be read or explained now" read as one); the report at exit reads it again."""

SO_FAR = "from the steps so far: a later line may revise it, {report} has the last word"
"""Under a story's first line: the live words are what the steps so far show (a reader new to the live lines
learns there that a ``now that more of the run is known`` line may follow, and where the last word is: ``report``,
:data:`AT_EXIT` under ``record``, :func:`watch_report` under ``watch``, which prints no report of its own)."""


def explain_command(path: str) -> str:
    """The command that reads the finished capture at ``path``, ready to paste."""
    import shlex

    return f"hlodiff explain-recompile {shlex.quote(str(path))}"


def watch_report(path: str) -> str:
    """Where the last word is for ``hlodiff watch PATH`` (review 6: it promised "the full report at exit", which
    watch never prints): the full report, on the finished capture."""
    return f"the full report once the run ended ({explain_command(path)})"


def watch_stopped(path: str, end=None) -> str:
    """The line ``watch`` ends with, on stderr (its stdout is the events): where the full report is, and when it
    stopped for --until-idle, what it waited for (review 11, F6: stopped before the run's first graph, the bare line
    read like "nothing recompiled"). ``end``: the :class:`hlodiff.live_run.WatchEnd`."""
    full = f"the full report: {explain_command(path)}"
    if end is None or end.idle is None:
        return f"{PREFIX}stopped following {path}; {full}"
    idle = f"{end.idle:g} s"
    if end.graphs:
        return (f"{PREFIX}stopped following {path}: nothing changed for {idle} ({counted(end.graphs, 'graph')} "
                f"read); {full}")
    waited = ("an XLA dump module, a PT_XLA_DEBUG log or a save-tensors file in it" if not end.decided
              else "a graph in " + ", ".join(f.rstrip("/").rsplit("/", 1)[-1] or f for f in end.files))
    return (f"{PREFIX}stopped following {path}: nothing changed for {idle} and no graph was written yet (waited for "
            f"{waited}); the run may still be starting, so nothing is known about its recompilations: watch again "
            f"with a longer --until-idle, or once the run ended: {explain_command(path)}")


def _where(event: LiveEvent) -> str:
    t = event.told
    if t is None:
        return ""
    at = f" at {t.location.short()}" if t.location else " (line unknown)"
    return f"{t.label or t.kind}{at}"


def _fix(event: LiveEvent) -> str:
    t = event.told
    if t is not None and t.waits:
        if t.kind == "shape":
            return "; fix: told once the next steps show whether the new size stays"
        return "; fix: told once the next steps show whether it comes back"
    if t is not None and t.fix and event.fix_told_at is not None:
        return f"; fix: as told for {_step_name(event, event.fix_told_at)} above"
    return f"; fix: {t.fix}" if t is not None and t.fix else ""


def _step_name(event: LiveEvent, step: int) -> str:
    """``step 3``, or ``compilation 4`` in a dump of compilations alone (review 8, F10)."""
    return f"compilation {step + 1}" if event.compilations_only else f"step {step}"


def lines(event: LiveEvent, report: str = AT_EXIT) -> list[str]:
    """The lines of one event (none for a family's first graph: compiling once is what a run does), with anything
    unprintable in paths or names escaped (a job log must not get terminal control codes from a file name);
    ``report`` names where the last word is (:data:`SO_FAR`)."""
    return [printable(line) for line in _lines(event, report)]


def _at(event: LiveEvent) -> str:
    """Where in the run: the user's step, or in a dump of compilations alone (no steps in it: review 11, F8, "step
    2" for a call of the loop's step 3) the compilation's place among its function's. An event told after a line
    about a later step says so (review 18, F4: step numbers went backwards)."""
    if event.compilations_only:
        return f"compilation {event.step + 1} of {event.family}"
    if event.late:
        return f"(about step {event.step}, told late)"
    return f"step {event.step}"


def _of(event: LiveEvent) -> str:
    """The recompilation an ``update`` is about, as :func:`_at` names places."""
    if event.compilations_only:
        return f"compilation {event.of_step + 1} of {event.family}"
    return f"step {event.of_step}"


def _lines(event: LiveEvent, report: str) -> list[str]:
    t = event.told
    kind = event.kind
    if kind == "compiled":
        return []
    if kind == "expected" and event.eager:
        # review 11, F8: one line per JAX operation run outside jit came before the recompilation that mattered
        if event.eager > 1:
            return []
        return [f"{PREFIX}{_at(event)}: expected: a JAX operation run outside jit compiles once per new shape or "
                "dtype; such compilations are counted, not told one by one (the report lists them after the story)"]
    if kind == "unread":
        return [f"{PREFIX}{_at(event)}: {event.graph} compiled; {UNREAD}: {report} explains it"]
    if kind == "expected":
        return [f"{PREFIX}{_at(event)}: expected recompilation ({event.count} so far): {_where(event)}"
                f"{_fix(event) or f': {t.summary}'}"]
    if kind == "pending":
        family = "" if event.compilations_only else f" ({event.family})"
        return [f"{PREFIX}{_at(event)} compiled a second graph{family}: {_where(event)}: {t.summary}; "
                "a warm-up if the next steps reuse it (told at the next step)"]
    if kind == "follows" and event.warmup:
        # review 18, F4: one quiet line, no cause kind (three "compiled again: dtype" lines read as a dtype problem)
        if event.warmup > 1:
            return []
        return [f"{PREFIX}{_at(event)}: the Dynamo bridge compiled the first call's graphs (expected: torch_xla "
                "compiles a few for what Dynamo traced; counted, not told one by one)"]
    if kind == "follows":
        who = ("the Dynamo bridge compiled again" if "XLA bridge" in event.family
               else f"the step around the compiled call compiled again ({event.family})")
        return [f"{PREFIX}{_at(event)}: {who} ({event.count} counted so far): {_where(event)}{_fix(event)}"]
    if kind == "graph_break":
        return [f"{PREFIX}{_at(event)}: {event.family}: {_where(event)}: {t.summary}{_fix(event)}"]
    if kind == "log":
        return [f"{PREFIX}step {event.step} compiled again ({event.family}): {t.summary}"]
    if kind == "repeat":
        # review 8, F10: "step 1 recompiled again: same story as step 1" named the step itself as the earlier one
        first = _step_name(event, event.of_step) if event.of_step is not None else ""
        same = f"same story as {first} " if event.of_step is not None and event.of_step != event.step \
            else "same story "
        return [f"{PREFIX}{_at(event)} recompiled again: {same}({_where(event)}), "
                f"{event.count} times so far{_fix(event)}"]
    if kind == "update":
        if event.expected:
            return [f"{PREFIX}{_of(event)}, now that more of the run is known: expected, {_where(event)}"
                    f"{_fix(event) or f': {t.summary}'}"]
        return [f"{PREFIX}{_of(event)}, now that more of the run is known: {_where(event)}{_fix(event)}"]
    late = ", now that more of the run is known," if event.of_step is not None else ""
    if event.revises_expected:  # review 15, F4: an "expected" line of this step came first
        late = ", now that more of the run is known, not expected after all:"
    # review 8, F10: the first step has nothing to recompile against; a second graph of its family is compiled
    verb = "compiled a second graph" if event.step == 0 and not late else "recompiled"
    # review 18, F8: "compilation 2 of jit_train_step recompiled (jit_train_step)": a dump's place names the family
    family = "" if event.compilations_only else f" ({event.family})"
    head = (f"{PREFIX}{_at(event)}{late} {verb}{family}: {_where(event)}: {t.summary}{_fix(event)}")
    out = [head]
    for k, summary, loc in t.more:
        out.append(f"{PREFIX}  with it: {k}{f' at {loc.short()}' if loc else ''}: {summary}")
    if t.closest:
        from hlodiff.render.story_view import alike_text

        alike = f", {alike_text(t.similarity, False, [t.kind, *(k for k, _, _ in t.more)])}" \
            if t.similarity is not None else ""
        out.append(f"{PREFIX}  against {t.closest}{alike}; {SO_FAR.format(report=report)}")
    return out


class StepOrder:
    """The live lines in the order a reader follows a job log (review 18, F4).

    An event whose line is about an earlier step than a line already told is marked
    :attr:`~hlodiff.explain.live_events.LiveEvent.late` ("step 2 recompiled" then "step 1 recompiled again" read as
    time going backwards). Events are not reordered: a story's later lines must come after its first. Only events
    with a line count; a ``now that more of the run is known`` line is about an earlier step by design, and in a
    dump of compilations alone ``step`` is a place among one function's compilations, not the run's step: neither
    moves the mark nor is late.

    The graphs torch_xla's Dynamo bridge compiles again at the step of its first graph or the next, before any line
    of Dynamo's recompilations, are the first call's (a few in any run): marked
    :attr:`~hlodiff.explain.live_events.LiveEvent.warmup`, told in one quiet line, not one "compiled again: dtype"
    line each. The explainer numbers steps per function in a dump; the run's steps are known here."""

    def __init__(self) -> None:
        self.told_up_to = -1
        self.warmup = 0
        self.first_step: int | None = None  # the step of the bridge's first graph
        self.dynamo_told = False
        self.fixes: dict[tuple, tuple[str, int]] = {}  # (family, story) -> (the fix printed last, its step)

    def mark(self, events: list) -> list:
        for e in events:
            if not isinstance(e, LiveEvent):
                continue
            self._first_call(e)
            self._said_once(e)
            if e.kind == "update" or e.compilations_only or not _lines(e, AT_EXIT):
                continue
            if e.step < self.told_up_to:
                e.late = True
            else:
                self.told_up_to = e.step
        return events

    def _said_once(self, e: LiveEvent) -> None:
        """A story's fix is printed once (review 22, F7): a later line of the story whose fix is the one its last
        printed line gave refers to that line; a fix that changed (more of the run known) is printed in full."""
        t = e.told
        if e.story is None or t is None or not t.fix or t.waits or e.kind not in ("recompiled", "repeat", "update"):
            return
        key = (e.family, e.story)
        said = self.fixes.get(key)
        if said is not None and said[0] == t.fix and e.kind != "recompiled":
            e.fix_told_at = said[1]
            return
        self.fixes[key] = (t.fix, e.step)

    def _first_call(self, e: LiveEvent) -> None:
        if e.family.startswith("Dynamo") and e.kind in ("recompiled", "repeat", "expected"):
            self.dynamo_told = True
        if "XLA bridge" not in e.family or self.dynamo_told:
            return
        if self.first_step is None:
            self.first_step = e.step
        # the bridge cuts the first call with syncs of its own: its graphs end the step it began in and the next
        if e.kind == "follows" and e.step <= self.first_step + 1:
            self.warmup += 1
            e.warmup = self.warmup


def json_line(event: LiveEvent) -> str:
    """One JSON object on one line (JSON Lines): the event's :meth:`~LiveEvent.to_json`."""
    return json.dumps({"schema": "hlodiff.live/1", **event.to_json()}, sort_keys=False, ensure_ascii=False)


def echo_event(event, stream=None, report: str = AT_EXIT) -> None:
    """Write an event's lines at once (one write, flushed: a job log gets whole lines, in order with the
    command's own output). An exception (the live analysis failed) is one line, and the report at exit follows."""
    import os
    import sys
    import traceback

    stream = stream or sys.stderr
    if isinstance(event, BaseException):
        debug = bool(os.environ.get("HLODIFF_DEBUG"))
        hint = "its traceback below" if debug else "rerun with HLODIFF_DEBUG=1 for its traceback and report it"
        text = (f"{PREFIX}live lines stopped (internal error: {type(event).__name__}: {event}; a bug in hlodiff: "
                f"{hint}); the report at exit follows\n")
        if debug:  # the traceback a fixer needs (review 8, F6: only the name was shown)
            text += "".join(traceback.format_exception(type(event), event, event.__traceback__))
    else:
        text = "".join(f"{line}\n" for line in lines(event, report))
    if not text:
        return
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass


def echo_json(event, stream=None) -> None:
    """One JSON line per event on stdout (``watch --json``)."""
    import sys

    if isinstance(event, BaseException):
        return
    stream = stream or sys.stdout
    stream.write(json_line(event) + "\n")
    stream.flush()
