"""Sizes in the words both renderers print (``12.5 MiB``): one spelling, whether a terminal line or an HTML page
shows the bytes."""

from __future__ import annotations


def human_bytes(n: int | None) -> str:
    """``n`` bytes in B, KiB, MiB or GiB; ``-`` when not known."""
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
