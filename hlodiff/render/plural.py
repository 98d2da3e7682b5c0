"""A count and its noun in words ("1 graph", "3 graphs", "2 copies"): one rule for every renderer, so a
count of one never reads "1 graphs" in one view and right in another."""

from __future__ import annotations


def noun(n: int, word: str, plural: str | None = None) -> str:
    """``word`` for one, its plural for any other count (``plural`` when the noun does not just take an s)."""
    return word if n == 1 else (plural or word + "s")


def counted(n: int, word: str, plural: str | None = None, grouped: bool = False) -> str:
    """``n`` and its noun; ``grouped`` writes the count with thousands separators (1,024 instructions), as the
    views whose counts run that high do."""
    return f"{n:,} {noun(n, word, plural)}" if grouped else f"{n} {noun(n, word, plural)}"
