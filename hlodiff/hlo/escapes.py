"""Strings a dump escapes in a way XLA's printer never does (``\\e`` in a ``source_file``): damage to one string.

Metadata is parsed lazily, where a command needs it, far from the file it came from; a string that does not
unescape there would surface as an error without a place, or not at all. So the module's text is checked once when
it is parsed (one regular-expression pass, only when the text holds a backslash), and the commands warn naming the
file and line; metadata keeps such an escape as written (``\\e``: the source line is still known), and every other
instruction and graph is used.
"""

from __future__ import annotations

import re

_BACKSLASHES = re.compile(r"\\+")
_ESCAPE_STARTS = frozenset("01234567xuUntrabfv\\'\"?")
"""The characters a C escape starts with (after its backslash)."""


def bad_escape_line(text: str, first_line: int = 1) -> int | None:
    """The file line of the first unknown escape in ``text`` (which begins on ``first_line``), or None: a run of
    backslashes of odd length (pairs escape each other) followed by a character no C escape starts with. Runs are
    found by a literal scan (a pattern with a look-behind tried at every position took 12 ms of a 0.6 MB parse)."""
    if "\\" not in text:
        return None
    n = len(text)
    for m in _BACKSLASHES.finditer(text):
        end = m.end()
        if (end - m.start()) % 2 and end < n and text[end] not in _ESCAPE_STARTS:
            return first_line + text.count("\n", 0, m.start())
    return None


def note_bad_escapes(module, warnings: list) -> None:
    """A warning naming the file and line of the module's first unknown escape, if it has one."""
    if module.bad_escape_line is not None and warnings is not None:
        from hlodiff.errors import InputWarning

        warnings.append(InputWarning("unknown escape in a quoted string (damaged metadata?): kept as written, "
                                     "the rest is read", module.path, module.bad_escape_line))
