"""A graph break Dynamo raised instead of taking: ``torch.compile(..., fullgraph=True)`` (or ``torch.export``) turns
the first graph break into an exception, and the program stops with Python's traceback on stderr before XLA
compiles anything. No ``[__graph_breaks]`` record is written; the traceback is the log (Dynamo round 12)::

    Traceback (most recent call last):
      File "/home/user/project/train.py", line 27, in <module>        <- the user's call
        loss = loss_fn(net(x), y)
      File ".../torch/_dynamo/eval_frame.py", line 841, in compile_wrapper
    torch._dynamo.exc.Unsupported: Unsupported Tensor.item() call with capture_scalar_outputs=False
      Explanation: Dynamo does not support tracing `Tensor.item()` ...
    from user code:
       File "/home/user/project/train.py", line 17, in loss_fn       <- where it broke
        if ce.item() > 4.0:

A recompile Dynamo refused is read here too: under ``torch.compiler.set_stance("fail_on_recompile")`` a call whose
guards fail raises ``RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'`` before any
guard is logged, and the program stops at that call (Dynamo round 20)::

    Traceback (most recent call last):
      File "/home/user/project/train.py", line 22, in <module>        <- the call that needed a new graph
        loss = loss_fn(model(x), y)
      ...
    RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: '.../external_utils.py', function name: 'inner', line number: 66

Read from the lines of a TORCH_LOGS text log (stderr) that carry no channel; kept apart from
:mod:`hlodiff.dumps.dynamo_log`, which reads the channels."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlodiff.hlo.model import SourceFrame

_RAISED = re.compile(r"^torch\._dynamo\.exc\.(?P<cls>Unsupported|UserError|TorchRuntimeError): (?P<what>.+)$")
"""The exception line of a break Dynamo raised (``Unsupported``: a graph break under fullgraph=True)."""
_FILE_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)')
_STANCE = re.compile(r"^RuntimeError: Detected recompile when torch\.compile stance is '(?P<stance>[\w-]+)'"
                     r"(?:\. filename: '(?P<file>[^']*)', function name: '(?P<fn>[^']*)')?")
"""The error a refused recompile raises (``torch.compiler.set_stance("fail_on_recompile")``, torch 2.6+): the frame
it names is the compiled code's (torch's wrapper of a compiled module), never the user's call."""
STANCE_MARK = "Detected recompile when torch.compile stance is"
"""Text only that error holds: a log whose head has it is read as Dynamo's."""


@dataclass(frozen=True, slots=True)
class StanceRaise:
    """A recompile the stance refused: the program stopped at ``call`` (the traceback's first user frame), and no
    guard was logged for it."""

    stance: str
    call: SourceFrame | None
    function: str | None
    """The compiled frame Dynamo names (``inner`` for torch's wrapper of a compiled nn.Module)."""
    definition: str | None
    """That frame's file as Dynamo names it."""
    log_line: int


@dataclass(slots=True)
class RaisedBreak:
    """One break Dynamo raised, as its traceback tells it: filled in while the lines after the exception line are
    read (its ``Explanation:``, the ``from user code:`` frame), and kept only once that frame was seen."""

    reason: str
    """The exception's message (``Unsupported Tensor.item() call with capture_scalar_outputs=False``)."""
    log_line: int
    """The exception line's line number in the log."""
    call: SourceFrame | None = None
    """The user's call that started the compiled function (the traceback's first user frame), when a traceback
    came before the exception line."""
    explanation: str | None = None
    """Dynamo's ``Explanation:`` line, when it wrote one."""
    at: SourceFrame | None = None
    """Where it broke: the innermost frame under ``from user code:``."""


class RaisedReader:
    """Fed the log's lines that carry no Dynamo channel; :meth:`breaks` gives what Dynamo raised, one per exception
    line with the user's frame it names (``from user code:``), in log order."""

    def __init__(self) -> None:
        self._stack: list[SourceFrame] = []  # the traceback read so far (its user frames hold the call)
        self._in_traceback = False
        self._current: RaisedBreak | None = None
        self._user_code = False
        self.found: list[RaisedBreak] = []
        self.stances: list[StanceRaise] = []

    def line(self, text: str, lineno: int) -> None:
        stripped = text.strip()
        if stripped.startswith("Traceback (most recent call last)"):
            self._close()
            self._stack, self._in_traceback = [], True
            return
        if (m := _STANCE.match(stripped)) is not None:
            self._close()
            call = next((f for f in self._stack if not f.is_library), None) if self._in_traceback else None
            self.stances.append(StanceRaise(m.group("stance"), call, m.group("fn"), m.group("file"), lineno))
            self._in_traceback = False
            return
        if (m := _RAISED.match(stripped)) is not None:
            self._close()
            call = next((f for f in self._stack if not f.is_library), None) if self._in_traceback else None
            self._current = RaisedBreak(m.group("what").strip(), lineno, call)
            self._in_traceback, self._user_code = False, False
            return
        frame = _FILE_LINE.match(text)
        if self._in_traceback:
            if frame is not None:
                self._stack.append(SourceFrame(frame.group("file"), int(frame.group("line")), frame.group("fn")))
            return
        if self._current is None:
            return
        if stripped.startswith("Explanation:") and self._current.explanation is None:
            self._current.explanation = stripped.split(":", 1)[1].strip()
        elif stripped == "from user code:":
            self._user_code = True
        elif self._user_code and frame is not None:  # the innermost user frame is the last one listed
            self._current.at = SourceFrame(frame.group("file"), int(frame.group("line")), frame.group("fn"))

    def _close(self) -> None:
        if self._current is not None and self._current.at is not None:
            self.found.append(self._current)
        self._current, self._user_code = None, False

    def breaks(self) -> list[RaisedBreak]:
        self._close()
        return self.found
