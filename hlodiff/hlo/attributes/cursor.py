"""The token cursor the nested forms (shardings, replica groups, aliasing, metadata) read from."""

from __future__ import annotations

import re

from hlodiff.errors import HloParseError
from hlodiff.hlo import scan
from hlodiff.hlo.attributes.scalars import INT_RE, fail, short, to_int


_TOKEN_RE = re.compile(
    r"\s+|/\*.*?\*/"
    r'|("[^"\\]*(?:\\.[^"\\]*)*")'
    r"|(<=|->|[{}()\[\],:=?])"
    r"|(-?[A-Za-z0-9_.%]+(?:[-+][A-Za-z0-9_.]+)*)"
    r"|(.)",
    re.S,
)


class Cursor(scan.TokenStream):
    """A token stream over one attribute value; the nested forms (shardings, groups, aliasing) read from it."""

    __slots__ = ("what",)
    END = "value"

    def __init__(self, raw: str, what: str):
        self.what = what
        self.toks: list[str] = []
        self.pos = 0
        for m in _TOKEN_RE.finditer(raw):
            if m.lastindex is None:
                continue
            if m.lastindex == 4:
                raise fail(what, f"unexpected character {m.group(4)!r}")
            self.toks.append(m.group(m.lastindex))

    def eat(self, tok: str) -> bool:
        if self.peek() == tok:
            self.pos += 1
            return True
        return False

    def expect(self, tok: str) -> None:
        got = self.peek()
        if got != tok:
            raise self.error(f"expected {tok!r}, got {got!r}" if got else f"expected {tok!r} before the end")
        self.pos += 1

    def int(self) -> int:
        tok = self.next()
        if not INT_RE.fullmatch(tok):
            raise self.error(f"expected an integer, got {short(tok)}")
        return to_int(tok, self.what)

    def ints(self, open_: str, close: str, sep: str = ",") -> list[int]:
        """``open_ int (sep int)* close`` or an empty ``open_ close``."""
        self.expect(open_)
        out: list[int] = []
        if self.eat(close):
            return out
        out.append(self.int())
        while self.eat(sep):
            out.append(self.int())
        self.expect(close)
        return out

    def int_lists(self) -> list[list[int]]:
        """``{{0,1},{2,3}}`` or ``{}``."""
        self.expect("{")
        out: list[list[int]] = []
        if self.eat("}"):
            return out
        out.append(self.ints("{", "}"))
        while self.eat(","):
            out.append(self.ints("{", "}"))
        self.expect("}")
        return out

    def skip_balanced(self) -> list[str]:
        """Consume one bracketed group (the cursor is on its opener) and return its tokens."""
        start = self.pos
        depth = 0
        while True:
            tok = self.next()
            if tok in ("{", "(", "["):
                depth += 1
            elif tok in ("}", ")", "]"):
                depth -= 1
                if depth == 0:
                    return self.toks[start:self.pos]

    def end(self) -> None:
        if self.pos != len(self.toks):
            raise self.error(f"unexpected {short(self.peek())} after the value")

    def error(self, reason: str) -> HloParseError:
        return fail(self.what, reason)
