"""The text of the user's source line, when the file named by a dump is readable where the report is made.

A dump names files from the machine that ran the program; on another machine they are usually absent, and that
is fine: the report then shows ``file:line`` only. Files are read once each, and only when small enough to be
source code (a dump could name any path).
"""

from __future__ import annotations

import os

from hlodiff.dumps.source_paths import where_now

MAX_SOURCE_BYTES = 4 * 1024 * 1024


class SourceLines:
    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def line(self, path: str | None, number: int | None) -> str | None:
        if not path or not number or number < 1:
            return None
        lines = self._files.get(path, ...)
        if lines is ...:
            lines = self._files[path] = _read(path)
        if lines is None or number > len(lines):
            return None
        text = lines[number - 1].rstrip("\r\n")
        return text if text.strip() else None


def _read(path: str) -> list[str] | None:
    path = where_now(path)
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_SOURCE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readlines()
    except (OSError, ValueError):
        return None
