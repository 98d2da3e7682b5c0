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
from hlodiff.render.plural import counted

LONG_LINE_TOKENS = 400

LONG_LINE = 480
"""Characters from which a line is shown cut around its changes, the whole of it in an expander."""
CONTEXT = 48
"""Characters shown either side of a change in a cut line."""
HEAD, TAIL = 96, 24
"""Characters shown at the start (name, shape, opcode) and the end of a cut line."""
SHOWN_CHANGES = 6
"""Changes shown in a cut line; the others are counted in its elisions and shown by the expander."""

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
    """An unchanged line: escaped, a very long one cut to its ends with the whole in an expander."""
    return _render(tokens(text), [False] * len(tokens(text)))


def _render(toks: list[str], marks: list[bool]) -> str:
    """Tokens to HTML, marked runs in ``<mark>``. A line longer than :data:`LONG_LINE` characters (a root tuple of
    1,753 outputs is 36,000) is shown cut around its first changes, each with :data:`CONTEXT` characters either
    side, and the whole line follows in an expander: the page stays a page, and nothing is lost."""
    total = sum(len(t) for t in toks)
    if total <= LONG_LINE:
        return _runs(toks, marks)
    out = [(_runs if kept else _elided)(toks[k:j], marks[k:j]) for k, j, kept in _spans(_kept(toks, marks, total))]
    what = f"{total:,} characters{_changes(marks)}"
    return (f"{''.join(out)}<details class='whole'><summary>whole line ({what})</summary>"
            f"<div class='whole-text'>{_runs(toks, marks)}</div></details>")


def _kept(toks: list[str], marks: list[bool], total: int) -> list[bool]:
    """Which tokens the cut line shows: its start (the instruction's name and opcode), its end, and the first
    :data:`SHOWN_CHANGES` changes with their context (a long changed run by its two ends)."""
    starts, pos = [], 0
    for t in toks:
        starts.append(pos)
        pos += len(t)
    spans = [(0, HEAD), (total - TAIL, total)]
    for a, b in _char_runs(toks, marks, starts)[:SHOWN_CHANGES]:
        if b - a > 2 * CONTEXT:
            spans += [(a - CONTEXT, a + CONTEXT), (b - CONTEXT, b + CONTEXT)]
        else:
            spans.append((a - CONTEXT, b + CONTEXT))
    return [any(s < start + len(t) and start < e for s, e in spans) for t, start in zip(toks, starts)]


def _char_runs(toks: list[str], marks: list[bool], starts: list[int]) -> list[tuple[int, int]]:
    """Character spans of the marked runs, in order."""
    runs: list[tuple[int, int]] = []
    for k, (t, m) in enumerate(zip(toks, marks)):
        if not m:
            continue
        if runs and k and marks[k - 1]:
            runs[-1] = (runs[-1][0], starts[k] + len(t))
        else:
            runs.append((starts[k], starts[k] + len(t)))
    return runs


def _changes(marks: list[bool]) -> str:
    """``", 3 changes"`` (the marked runs), or nothing when none is marked."""
    changes = sum(1 for k, m in enumerate(marks) if m and (k == 0 or not marks[k - 1]))
    return f", {counted(changes, 'change', grouped=True)}" if changes else ""


def _elided(toks: list[str], marks: list[bool]) -> str:
    n = sum(len(t) for t in toks)
    return f"<span class='elided'>…{n:,} characters{_changes(marks)}…</span>"


def _spans(flags: list[bool]):
    """``(start, end, flag)`` of each run of equal flags, in order."""
    k = 0
    while k < len(flags):
        j = k
        while j < len(flags) and flags[j] == flags[k]:
            j += 1
        yield k, j, flags[k]
        k = j


def _runs(toks: list[str], marks: list[bool]) -> str:
    """Tokens to HTML, each run of marked tokens in one ``<mark>``."""
    runs = ((esc("".join(toks[k:j])), marked) for k, j, marked in _spans(marks))
    return "".join(f"<mark>{run}</mark>" if marked else run for run, marked in runs)
