"""The user's source lines an HTML report shows: each file a page's frames name, read once where it is now
(``--source-map``), so the renderer prints the text of a cited line without opening a file itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from hlodiff.dumps.source_paths import where_now

PAGE_MAX_BYTES = 4 * 1024 * 1024
"""A file a dump names is shown only when small enough to be source code (a dump could name any path)."""


@dataclass(frozen=True, slots=True)
class SourceText:
    """The user's source files an HTML report names, read: the page shows the text of each line it cites. A dump
    names files from the machine that ran the program; on another machine they are usually absent, and that is
    fine: the report then shows ``file:line`` only (``files`` maps such a path to None)."""

    files: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)

    def line(self, path: str | None, number: int | None) -> str | None:
        if not path or not number or number < 1:
            return None
        lines = self.files.get(path)
        if lines is None or number > len(lines):
            return None
        text = lines[number - 1].rstrip("\r\n")
        return text if text.strip() else None


def page_source_text(*docs: object) -> SourceText:
    """Every file a frame of the JSON documents ``docs`` names (a dict with ``file`` and ``line``), read once
    each where it is now (``--source-map``)."""
    files: dict[str, tuple[str, ...] | None] = {}
    for path in _frame_files(docs):
        if path not in files:
            files[path] = _read_page_file(path)
    return SourceText(files)


def _frame_files(value: object):
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("file"), str) and "line" in item and item["file"]:
                yield item["file"]
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _read_page_file(path: str) -> tuple[str, ...] | None:
    path = where_now(path)
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > PAGE_MAX_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return tuple(f.readlines())
    except (OSError, ValueError):
        return None
