"""Bracket- and string-aware scanning of HLO text, shared by the parser and the attribute parsers.

Values nest brackets of three kinds and hold C-escaped strings that may contain any bracket or comma; every
question about "where does this group end" or "split at the commas of this level" goes through here.
"""

from __future__ import annotations

import re

from hlodiff.accel import native

STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(")]}")
_INTERESTING = re.compile(r'["()\[\]{},]')


class Unbalanced(ValueError):
    """Brackets or quotes that do not balance; ``offset`` is where the problem shows."""

    def __init__(self, reason: str, offset: int):
        super().__init__(reason)
        self.offset = offset


def closing(text: str, pos: int) -> int:
    """Index of the bracket that closes the one at ``pos`` (kinds must match, strings skipped), or -1."""
    end = group_end(text, pos)
    return end - 1 if end > 0 else -1


def _tokens(text: str, pos: int):
    """(offset, char) of every bracket and comma from ``pos``, strings skipped; raises on an open string."""
    i = pos
    n = len(text)
    while i < n:
        m = _INTERESTING.search(text, i)
        if m is None:
            return
        c, at = m.group(), m.start()
        if c == '"':
            s = STRING.match(text, at)
            if s is None:
                raise Unbalanced("unterminated string", at)
            i = s.end()
            continue
        yield at, c
        i = at + 1


def group_end(text: str, pos: int) -> int:
    """Offset just past the bracket group opening at ``pos``, or -1 when it never closes cleanly."""
    stack: list[str] = []
    try:
        for at, c in _tokens(text, pos):
            if c in _PAIRS:
                stack.append(_PAIRS[c])
            elif c in _CLOSERS:
                if not stack or stack.pop() != c:
                    return -1
                if not stack:
                    return at + 1
    except Unbalanced:
        return -1
    return -1


def value_end(text: str, pos: int) -> int:
    """End of a value starting at ``pos``: the next comma outside brackets, or the end; -1 when unbalanced."""
    if native is not None and (end := native.value_end(text, pos)) is not None:
        return end
    depth = 0
    try:
        for at, c in _tokens(text, pos):
            if c in _PAIRS:
                depth += 1
            elif c in _CLOSERS:
                depth -= 1
                if depth < 0:
                    return -1
            elif depth == 0:
                return at
    except Unbalanced:
        return -1
    return len(text) if depth == 0 else -1


def split_top_level(text: str) -> list[tuple[str, int]]:
    """Split at commas outside brackets and strings: each piece with its offset. Raises :class:`Unbalanced`."""
    pieces: list[tuple[str, int]] = []
    depth = 0
    begin = 0
    for at, c in _tokens(text, 0):
        if c in _PAIRS:
            depth += 1
        elif c in _CLOSERS:
            depth -= 1
            if depth < 0:
                raise Unbalanced(f"unbalanced {c!r}", at)
        elif depth == 0:
            pieces.append((text[begin:at], begin))
            begin = at + 1
    if depth:
        raise Unbalanced("unclosed bracket", len(text))
    pieces.append((text[begin:], begin))
    return pieces


class TokenStream:
    """Tokens read left to right, for the small recursive parsers of attribute values and literals.

    Subclasses fill ``toks``, say what the input is called (``END``) and build their own errors.
    """

    __slots__ = ("toks", "pos")
    END = "input"

    def peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.toks[i] if i < len(self.toks) else ""

    def next(self) -> str:
        tok = self.peek()
        if not tok:
            raise self.error(f"unexpected end of {self.END}")
        self.pos += 1
        return tok

    def error(self, reason: str) -> Exception:
        raise NotImplementedError


# -- lines of a dump -------------------------------------------------------------------------------------------

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def blank_comments(line: str) -> str:
    """Replace ``/* */`` and trailing ``//`` comments outside strings by spaces (columns stay where they were)."""
    if "/*" in line:
        line = _BLOCK_COMMENT.sub(lambda m: " " * len(m.group(0)), line)
    if "//" in line:
        cut = comment_start(line)
        if cut >= 0:
            line = line[:cut]
    return line


def comment_start(line: str) -> int:
    in_string = False
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "/" and line.startswith("//", i):
            return i
        i += 1
    return -1


def depth_change(line: str) -> int:
    """Net bracket depth of a line, ignoring brackets inside strings."""
    if '"' not in line:
        return (line.count("(") + line.count("[") + line.count("{")
                - line.count(")") - line.count("]") - line.count("}"))
    return depth_change(STRING.sub("", line).replace('"', ""))


def skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in " \t\r\n":
        pos += 1
    return pos
