"""Mark what differs between two instruction lines, down to the character.

Lines are split into small tokens (an instruction name, an identifier, a run of digits, one punctuation
character), so ``f32[4,8]`` against ``f32[2,8]`` marks only ``4`` and ``2``. Names are compared through the
matching: ``%add.7`` on the right equals ``%add.5`` on the left when the differ paired them, so a renumbered
operand is not a difference, while an operand that now points elsewhere is.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable

from hlodiff.render.html.page import esc

LONG_LINE_TOKENS = 400

KEEP = 160
"""Characters kept at each end of a long unchanged stretch of a line."""

_TOKEN = re.compile(r"%[\w.\-]+|[A-Za-z_][\w\-]*|\d+|\s+|.", re.S)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def mark_pair(left: str, right: str, rename: Callable[[str], str]) -> tuple[str, str]:
    """HTML of both lines with differing tokens in ``<mark>``; ``rename`` maps a right ``%name`` to the left
    name it was matched with (or returns it unchanged)."""
    lt, rt = tokens(left), tokens(right)
    rkeys = ["%" + rename(t[1:]) if t.startswith("%") else t for t in rt]
    lmarks, rmarks = [False] * len(lt), [False] * len(rt)
    # Long lines (a root tuple of 1,700 outputs) would make the exact matcher quadratic in its many commas;
    # there, frequent tokens are treated as junk, which keeps the marks on the operands that moved or changed.
    matcher = difflib.SequenceMatcher(None, lt, rkeys, autojunk=len(lt) + len(rkeys) > LONG_LINE_TOKENS)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        for i in range(i1, i2):
            lmarks[i] = True
        for j in range(j1, j2):
            rmarks[j] = True
    return _render(lt, lmarks), _render(rt, rmarks)


def plain(text: str) -> str:
    """An unchanged line: escaped, with the middle of a very long one elided."""
    return _render(tokens(text), [False] * len(tokens(text)))


def _render(toks: list[str], marks: list[bool]) -> str:
    """Tokens to HTML: marked runs in ``<mark>``, unmarked runs longer than :data:`KEEP` * 3 characters cut to
    their ends (a 1,700-output root tuple would otherwise fill screens with text that did not change)."""
    out: list[str] = []
    k = 0
    while k < len(toks):
        j = k
        while j < len(toks) and marks[j] == marks[k]:
            j += 1
        run = "".join(toks[k:j])
        if marks[k]:
            out.append(f"<mark>{esc(run)}</mark>")
        elif len(run) > 3 * KEEP:
            cut = len(run) - 2 * KEEP
            out.append(f"{esc(run[:KEEP])}<span class='elided' title='{cut:,} unchanged characters elided'>"
                       f"…{cut:,} unchanged characters…</span>{esc(run[-KEEP:])}")
        else:
            out.append(esc(run))
        k = j
    return "".join(out)
