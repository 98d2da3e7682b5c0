"""Whether a file's first bytes are a ``XLA_SAVE_TENSORS_FILE`` dump: the content test every input goes through
(:func:`hlodiff.dumps.detect_kind`), apart from the reader (:mod:`hlodiff.dumps.save_tensors`) so that reading a
file of HLO text does not import that reader and its record types at start-up."""

from __future__ import annotations

import re

HEADER_RE = re.compile(rb"^\[(\w+)\]\s*$")
"""An entry's header line (``[ScheduleSyncTensorsGraph]``)."""


def looks_like_save_tensors(head: bytes) -> bool:
    """Content test: an entry header or a graph marker within the sniff window."""
    for line in head.splitlines()[:5]:
        if line.strip():
            if HEADER_RE.match(line):
                return True
            if line == head and b"[ScheduleSyncTensorsGraph]".startswith(line):
                return True  # a file cut off inside its very first line
            break
    return b"\n## BEGIN_GRAPH" in head or b"\nTensorsGraphInfo:" in head
