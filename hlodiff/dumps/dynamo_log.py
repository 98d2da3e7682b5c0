"""TorchDynamo's own account of a run: which frames it compiled (compile ids ``0/0``, ``0/1``...), which guard failed
before each recompilation, and where the graph broke. Read from either of the two things users capture:

* ``TORCH_LOGS=recompiles,graph_breaks`` text (stderr, or a file it went to), lines like
  ``V1126 19:04:16.483000 10392 torch/_dynamo/guards.py:4181] [0/1] [__recompiles] Recompiling function forward in
  FILE:LINE`` / ``triggered by the following guard failure(s):`` / ``- 0/0: tensor 'feats' size mismatch ...``, and
  ``[__graph_breaks] Graph break in user code at FILE:LINE`` / ``Graph Break Reason: ...`` / ``User code traceback:``;
* a ``TORCH_TRACE`` structured log (what tlparse reads), read by :mod:`hlodiff.dumps.dynamo_trace` into the same
  types, with the guard and graph-break readers of this module.

Which of the two a file is, and a ``TORCH_TRACE`` folder, is decided by :mod:`hlodiff.dumps.dynamo_read`.

The reader keeps typed facts only (no words of hlodiff's); a damaged line costs itself and a warning. The Dynamo log
is the anchor for *why* Dynamo compiled again; :mod:`hlodiff.explain.dynamo` joins it to the XLA graphs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from hlodiff.dumps.dynamo_guards import VerboseReader
from hlodiff.dumps.dynamo_raised import STANCE_MARK, RaisedReader, StanceRaise
from hlodiff.dumps.dynamo_wont_convert import LooseGaveUp
from hlodiff.errors import InputWarning
from hlodiff.hlo.model import SourceFrame

LOG_PREFIX = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ (?P<src>[^\]]*)\] ")
_TEXT = re.compile(r"\[(?P<cid>\d+/\d+)(?:_\d+)?\] \[__(?P<channel>recompiles|recompiles_verbose|graph_breaks)\] "
                   r"?(?P<body>.*)$")
_RECOMPILING = re.compile(r"Recompiling function (?P<fn>\S+) in (?P<file>.+):(?P<line>\d+)\s*$")
_FAILURE = re.compile(r"^\s*- (?:(?P<against>\d+/\d+): )?(?P<guard>.*?)\s*$")
_GUARD_COMMENT = re.compile(r"\s{2,}# (?P<code>.*?)\s+# (?P<file><[^>]+>|\S+?):(?P<line>\d+) in (?P<fn>\S+)"
                            r"(?:\s+\(HINT: .*\))?\s*$")
"""A guard's source comment: the code line, its file:line and function, and, for an int attribute of an
nn.Module (torch 2.9), Dynamo's ``(HINT: ...)`` after them (dyn_step_attr: without it the guard kept its comment
and was told as an unknown guard at the function's ``def``). A frozen module's frame has no code and a space in its
name (``#   # <frozen os>:680 in __getitem__``: an ``os.environ`` read, d23_env_debug: without it the comment stayed
in the guard's text and the fix quoted it)."""
_BREAK_AT = re.compile(r"Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at "
                       r"(?P<file>.+):(?P<line>\d+)\s*$")
_SKIP_AT = "Graph break: skip: from user code at:"
"""Dynamo gave up the rest of a frame at a line it cannot trace (an unsupported context manager: a
``threading.Lock`` or an open file in a ``with``): the user's frame follows, then Dynamo's traceback and its
``Unsupported: ...`` line (d32_lock_forward; d23_file_log_break's resume function)."""
_WONT_CONVERT = re.compile(r"WON'T CONVERT (?P<fn>\S+) (?P<file>.+) line (?P<line>\d+)\s*$")
"""Dynamo gave a whole frame up (its backend failed on the traced graph, e.g. openxla on the unbacked ints of
``.tolist()``): the function runs eagerly on every call. Read as a graph break whose reason is ``GAVE_UP``."""
GAVE_UP = "WON'T CONVERT"
_EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Unsupported): (?P<what>.+)$")
_FILE_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')
SNIFF_MARKS = ("[__recompiles]", "[__graph_breaks]", "[__recompiles_verbose]", '{"dynamo_start"',
               '{"compilation_metrics"', '"recompile_reasons"', "torchdynamo start compiling", "[__guards]",
               "torch._dynamo hit config.", "torch._dynamo.exc.", STANCE_MARK)
"""Text that only Dynamo's logs hold: a file whose head has one is read as a Dynamo log."""


@dataclass(frozen=True, slots=True)
class GuardFailure:
    """One failed guard as Dynamo printed it: against which earlier compile (``0/0``), the guard's text, and the
    user's source line the guard came from when Dynamo names it (Python values: ``temperature == 1.0  # ...``)."""

    against: str | None
    guard: str
    source: SourceFrame | None = None
    code: str | None = None
    """The source line's code as Dynamo quoted it (``for blk in self.blocks[:depth]:``, the user's own trailing
    comment cut off): how the guarded value is used, read for facts (an int bounding a loop); ``source`` is what
    ``--json`` shows of it."""

    def to_json(self) -> dict:
        return {"against": self.against, "guard": self.guard,
                "source": self.source.to_json() if self.source else None}


@dataclass(slots=True)
class DynamoCompile:
    """One Dynamo compilation (a compile id): its frame, the function it compiled, and what failed before it."""

    compile_id: str
    function: str | None = None
    definition: SourceFrame | None = None
    """Where the compiled function is defined (``forward`` at its ``def`` line)."""
    call: SourceFrame | None = None
    """The user's call of the compiled function (the outermost user frame of ``dynamo_start``'s stack)."""
    callee: str | None = None
    """What that call calls, as the user wrote it (``cmodel`` in ``out = cmodel(req)``), read from the source when
    the file is here: the name of what was compiled where Dynamo names only torch's wrapper (review 6). Not in
    ``to_json``."""
    failures: list[GuardFailure] = field(default_factory=list)
    resume: bool = False
    """Dynamo's resume function after a graph break (``torch_dynamo_resume_in_forward_at_30``), not a new frame."""
    log_line: int | None = None

    @property
    def frame(self) -> int:
        return int(self.compile_id.split("/")[0])

    @property
    def attempt(self) -> int:
        return int(self.compile_id.split("/")[1])

    @property
    def recompiled(self) -> bool:
        """A later compile of a frame Dynamo already compiled: what a failed guard set off."""
        return self.attempt > 0

    def to_json(self) -> dict:
        return {"compile_id": self.compile_id, "function": self.function,
                "definition": self.definition.to_json() if self.definition else None,
                "call": self.call.to_json() if self.call else None,
                "failures": [f.to_json() for f in self.failures], "resume": self.resume}


@dataclass(slots=True)
class GraphBreak:
    """A graph break: its reason (Dynamo's first line and explanation), where in the user's code, who called."""

    compile_id: str
    reason: str
    explanation: str | None = None
    at: SourceFrame | None = None
    call: SourceFrame | None = None
    duplicate: bool = False
    """Dynamo's repeat of a break it already reported in full (``user stack suppressed``)."""
    log_line: int | None = None
    raised: bool = False
    """Dynamo raised it instead of breaking (``fullgraph=True``): the program stopped at this call."""
    frames: tuple[SourceFrame, ...] = ()
    """The ``User code traceback``, outermost first: which user line entered the library code where it broke."""
    context: str | None = None
    """Dynamo's ``Developer debug context`` (the kinds of value it could not trace: ``UserDefinedObjectVariable(Generator)``)."""
    codes: tuple[str | None, ...] = ()
    """The source text Dynamo quotes under each of ``frames`` (None where it quotes none)."""
    skipped: bool = False
    """Dynamo gave up the frame from this line on (``Graph break: skip``): what follows runs without Dynamo."""
    given_up: str | None = None
    """The function a ``WON'T CONVERT fn ...`` record names (``<genexpr>``: a generator expression reached the
    compiled code; a name of the user's: that function itself, a generator function compiled: stop 51)."""

    def to_json(self) -> dict:
        return {"compile_id": self.compile_id, "reason": self.reason, "explanation": self.explanation,
                "at": self.at.to_json() if self.at else None, "call": self.call.to_json() if self.call else None,
                "raised": self.raised}


@dataclass(frozen=True, slots=True)
class CacheRestart:
    """A compile id compiled again for the same function after it had finished (a TORCH_TRACE log numbers frames
    anew once Dynamo is reset: ``0/0`` of ``loss_fn``, then ``0/0`` of ``loss_fn`` again)."""

    compile_id: str
    function: str | None
    definition: SourceFrame | None
    call: SourceFrame | None
    log_line: int | None = None

    def to_json(self) -> dict:
        return {"compile_id": self.compile_id, "function": self.function,
                "definition": self.definition.to_json() if self.definition else None,
                "call": self.call.to_json() if self.call else None}


@dataclass(slots=True)
class DynamoLog:
    path: str
    form: str  # "text" (TORCH_LOGS) or "trace" (TORCH_TRACE)
    compiles: list[DynamoCompile] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    limit_hits: list[tuple[str, int]] = field(default_factory=list)
    """``(compile id, limit)``: Dynamo hit its recompile limit there; later calls of that frame run without it."""
    restarts: list[CacheRestart] = field(default_factory=list)
    """The same function compiled again under a compile id it already finished (``0/0`` twice): Dynamo's caches
    were emptied between the two (``torch._dynamo.reset()``); no guard failed, so no recompile record says so."""
    stance_raises: list[StanceRaise] = field(default_factory=list)
    """Recompiles the stance refused (``fail_on_recompile``): the program stopped at that call, no guard logged."""

    def compile(self, compile_id: str) -> DynamoCompile:
        for c in self.compiles:
            if c.compile_id == compile_id:
                return c
        c = DynamoCompile(compile_id)
        self.compiles.append(c)
        return c

    @property
    def recompiles(self) -> list[DynamoCompile]:
        return [c for c in self.compiles if c.recompiled]


def looks_like_dynamo_log(head: str) -> bool:
    return any(mark in head for mark in SNIFF_MARKS)


# -- TORCH_LOGS text -------------------------------------------------------------------------------------------------


def read_text_log(path: str, lines: Iterable[str], warnings: list[InputWarning] | None) -> DynamoLog:
    log = DynamoLog(path, "text")
    blocks: list[tuple[str, str, int, list[str]]] = []  # (compile id, channel, first line, bodies)
    verbose = VerboseReader(guard_failure, CacheRestart)
    raised = RaisedReader()
    loose = LooseGaveUp(lambda cid, lineno, bodies: _gave_up_block(cid, lineno, bodies, closed=True),
                        lambda file: SourceFrame(file, 1).is_library)
    for lineno, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        prefix = LOG_PREFIX.match(text)
        m = _TEXT.search(text, prefix.end() if prefix else 0)
        if m is None:
            verbose.line(text, prefix, lineno, log)
            loose.line(text, prefix, lineno)
            if prefix is None:
                raised.line(text, lineno)
            continue
        loose.close()
        cid, channel, body = m.group("cid"), m.group("channel"), m.group("body")
        starts = (channel.startswith("recompiles") and _RECOMPILING.search(body)) or \
                 (channel == "graph_breaks" and _BREAK_AT.search(body))
        if starts or not blocks or blocks[-1][0] != cid or blocks[-1][1] != channel:
            blocks.append((cid, channel, lineno, [body]))
        else:
            blocks[-1][3].append(body)
    for cid, channel, lineno, bodies in blocks:
        if channel.startswith("recompiles"):
            _recompile_block(log, cid, lineno, bodies, path, warnings)
        else:
            brk = break_block(cid, lineno, bodies)
            if brk is None:
                if warnings is not None:
                    warnings.append(InputWarning("a graph-break record without its 'Graph break in user code at' "
                                                 "line (cut?); skipped", path, lineno))
                continue
            log.graph_breaks.append(brk)
    log.graph_breaks += loose.found
    _drop_repeated_skips(log)
    for r in raised.breaks():
        log.graph_breaks.append(GraphBreak("raised", r.reason, r.explanation, r.at, r.call if r.call != r.at else None,
                                           log_line=r.log_line, raised=True))
    log.stance_raises += raised.stances
    verbose.finish(log)
    return log


def _drop_repeated_skips(log: DynamoLog) -> None:
    """A skip record at a line Dynamo already broke at is its resume function given up at the same statement
    (d23_file_log_break: the break at `open`, then the resume function skipped at the `with open(...)`): one break
    of the user's, not two, and no graph more."""
    broke = {(b.at.file, b.at.line) for b in log.graph_breaks if not b.skipped and b.at is not None}
    log.graph_breaks = [b for b in log.graph_breaks
                        if not (b.skipped and b.at is not None and (b.at.file, b.at.line) in broke)]


def _recompile_block(log: DynamoLog, cid: str, lineno: int, bodies: list[str], path: str,
                     warnings: list[InputWarning] | None) -> None:
    m = _RECOMPILING.search(bodies[0])
    if m is None:
        if warnings is not None:
            warnings.append(InputWarning("a recompile record without its 'Recompiling function' line (cut?); "
                                         "skipped", path, lineno))
        return
    c = log.compile(cid)
    c.function, c.log_line = m.group("fn"), lineno
    c.definition = SourceFrame(m.group("file"), int(m.group("line")), m.group("fn"))
    for body in bodies[1:]:
        f = _FAILURE.match(body)
        if f is not None and body.lstrip().startswith("- "):
            c.failures.append(with_whole_path(guard_failure(f.group("against"), f.group("guard")), c.definition))


def with_whole_path(failure: GuardFailure, definition: SourceFrame, others: Iterable[str] = ()) -> GuardFailure:
    """torch prints a guard's source file cut to its last characters (``mp/review2/t.py`` for
    ``/tmp/review2/t.py``, review F5; torch's ``shorten_filename`` drops the path it shares with torch's own folder
    and one character more, ``ork/notes/t.py`` when that is only ``/``, review 13 F3); the function's definition, in
    the same record, names the whole path: a cut path that ends the definition's is that file. ``others`` (the file
    names a TORCH_TRACE log lists) are asked next, and only when one alone ends with it."""
    src = failure.source
    if src is None or os.path.isabs(src.file) or src.file == definition.file:
        return failure
    cut = src.file.replace("\\", "/")
    if definition.file.replace("\\", "/").endswith(cut):
        return replace(failure, source=SourceFrame(definition.file, src.line, src.function))
    whole = {f for f in others if os.path.isabs(f) and f.replace("\\", "/").endswith(cut)}
    if len(whole) == 1:
        return replace(failure, source=SourceFrame(whole.pop(), src.line, src.function))
    return failure


def guard_failure(against: str | None, text: str) -> GuardFailure:
    comment = _GUARD_COMMENT.search(text)
    if comment is None:
        return GuardFailure(against, text.strip())
    source = SourceFrame(comment.group("file"), int(comment.group("line")), comment.group("fn"))
    code = re.split(r"\s+#", comment.group("code"), maxsplit=1)[0].strip() or None
    return GuardFailure(against, text[:comment.start()].strip(), source, code)


def break_block(cid: str, lineno: int, bodies: list[str]) -> GraphBreak | None:
    m = _BREAK_AT.search(bodies[0])
    if m is None:
        return _skip_block(cid, lineno, bodies) or _gave_up_block(cid, lineno, bodies)
    reason, explanation, context = "", None, None
    frames: list[SourceFrame] = []
    codes: list[str | None] = []
    for body in bodies[1:]:
        stripped = body.strip()
        if stripped.startswith("Graph Break Reason:"):
            reason = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("Explanation:") and explanation is None:
            explanation = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("Developer debug context:") and context is None:
            context = stripped.split(":", 1)[1].strip()
        elif (f := _FILE_LINE.match(body)) is not None:
            frames.append(SourceFrame(f.group("file"), int(f.group("line")), f.group("fn")))
            codes.append(None)
        elif stripped.startswith("Traceback (most recent call last)"):
            break  # Dynamo's own traceback follows: not the user's frames
        elif codes and codes[-1] is None and stripped:
            codes[-1] = stripped  # the line of source Dynamo quotes under its frame
    at = SourceFrame(m.group("file"), int(m.group("line")))
    inner = next((f for f in reversed(frames) if f.file == at.file and f.line == at.line), None)
    call = next((f for f in frames if not f.is_library), None)
    return GraphBreak(cid, reason or "graph break", explanation, inner or at,
                      call if call is not None and call != (inner or at) else None,
                      duplicate="suppressed" in bodies[0], log_line=lineno, frames=tuple(frames), context=context,
                      codes=tuple(codes))


def _skip_block(cid: str, lineno: int, bodies: list[str]) -> GraphBreak | None:
    """A ``Graph break: skip: from user code at:`` record: the user's frame and the line it quotes come before
    Dynamo's traceback, the reason is its ``Unsupported: ...`` line. A record without a user frame (the backend
    failed on a traced graph: dyn_tolist_split) or without its reason (still being written) is not read."""
    if not bodies[0].strip().startswith(_SKIP_AT):
        return None
    at, code, reason, explanation, context, traceback = None, None, None, None, None, False
    for body in bodies[1:]:
        stripped = body.strip()
        if stripped.startswith("Traceback (most recent call last)"):
            traceback = True
        elif not traceback and at is None and (f := _FILE_LINE.match(body)) is not None:
            at = SourceFrame(f.group("file"), int(f.group("line")), f.group("fn"))
        elif not traceback and at is not None and code is None and stripped:
            code = stripped
        elif reason is None and (e := _EXCEPTION_LINE.match(body)) is not None:
            reason = e.group("what").strip()
        elif stripped.startswith("Explanation:") and explanation is None:
            explanation = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("Developer debug context:") and context is None:
            context = stripped.split(":", 1)[1].strip()
    if at is None or reason is None:
        return None
    return GraphBreak(cid, reason, explanation, at, None, log_line=lineno, frames=(at,), context=context,
                      codes=(code,), skipped=True)


def _gave_up_block(cid: str, lineno: int, bodies: list[str], closed: bool = False) -> GraphBreak | None:
    """A ``WON'T CONVERT fn file line N`` record: the line is the user's frame of its "Original traceback" (where the
    backend failed, e.g. the ``.tolist()``), else the function's def; the explanation is Dynamo's ``Explanation:``
    line, else the last exception line."""
    w = _WONT_CONVERT.search(bodies[0])
    if w is None:
        return None
    definition = SourceFrame(w.group("file"), int(w.group("line")), w.group("fn"))
    explanation, raised, origin, frames, whole = None, None, False, [], False
    for body in bodies[1:]:
        stripped = body.strip()
        if stripped.startswith("Original traceback:"):
            origin, frames, whole = True, [], True
        elif origin and (f := _FILE_LINE.match(body)) is not None:
            frames.append(SourceFrame(f.group("file"), int(f.group("line")), f.group("fn")))
        elif origin and not stripped:
            origin = False
        elif stripped.startswith("Explanation:") and explanation is None:
            explanation = stripped.split(":", 1)[1].strip()
        elif (e := _EXCEPTION_LINE.match(body)) is not None and "Traceback" not in stripped:
            raised = stripped
        elif stripped.startswith("Use tlparse"):
            whole = True
    if not whole and not closed:
        return None  # still being written (a growing log): its traceback and explanation come with the next lines
    at = next((f for f in reversed(frames) if f.file == definition.file), frames[-1] if frames else definition)
    return GraphBreak(cid, GAVE_UP, explanation or raised, at, None, log_line=lineno, given_up=w.group("fn"))
