"""Python frames as torch_xla prints them: ``function (file:line)`` and ``function@file:line``.

Both the save-tensors file (``TensorsGraphInfo:``), the live-tensor report (``Frames:``) and the debug log
(``Python Frame Triggered Execution:``) print the frames of the sync, innermost first, in the first form; IR
nodes carry the second form (``location=step@train.py:8``, file without its directory).
"""

from __future__ import annotations

import re

from hlodiff.hlo.model import SourceFrame

# Function names never contain " (", but file paths may contain spaces, parentheses and colons: the function is
# the shortest prefix, the line number the last ":digits" before the closing parenthesis.
_FRAME_RE = re.compile(r"^(\S.*?) \((.*):(-?\d+)\)$")


def parse_frame(text: str) -> SourceFrame | None:
    """``sync (/site-packages/torch_xla/torch_xla.py:87)`` -> SourceFrame; None when the text is not a frame."""
    m = _FRAME_RE.match(text.strip())
    if m is None:
        return None
    return SourceFrame(file=m.group(2), line=int(m.group(3)), function=m.group(1))


def parse_location(text: str) -> SourceFrame | None:
    """``step@train.py:8`` (an IR node's ``location=`` tag) -> SourceFrame; None when it has no ``@``."""
    function, at, where = text.partition("@")
    if not at:
        return None
    file, colon, line = where.rpartition(":")
    if colon and _is_int(line):
        return SourceFrame(file=file, line=int(line), function=function or None)
    return SourceFrame(file=where, line=None, function=function or None)


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()
