"""How much a dump may ask of the reader before it is refused: the byte and line limits every scanner of
``dumps/`` reads within, the environment variables that raise them, and the one-line error naming the one hit.

Kept apart from the opening of files (:mod:`hlodiff.dumps._io`) because every reader, and the HLO proto decoder that
opens nothing of its own, applies the same limits the same way.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from hlodiff.errors import HlodiffError

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """How much a dump may ask for before it is refused as not meaningful (one located error, exit 2).

    Real dumps are far below every default: the largest real graph we know is a 33K-instruction trace of 7 MB whose
    longest line is a few KB; torch_xla headers are a few KB of Python frames; blank lines come in twos. The limits
    exist so that a damaged or hostile file (a gzip bomb, one 10 GB line, an entry that never ends) costs bounded
    memory and time instead of the machine. Each can be raised with an environment variable (bytes, or with a
    ``K``/``M``/``G`` suffix).
    """

    line_bytes: int = 32 * MIB
    graph_bytes: int = 256 * MIB
    header_bytes: int = 4 * MIB
    blank_lines: int = 100_000
    proto_bytes: int = 256 * MIB
    """An HLO proto beside a module is optional (it lends stacks to the text): past this size it is skipped with a
    warning instead of being decoded whole."""
    gzip_ratio: int = 100
    """A gzip file may decompress to ``gzip_ratio`` times its size (at least :data:`GZIP_FLOOR`): HLO text
    compresses about 10x; a bomb compresses 1000x."""

    @classmethod
    def from_env(cls) -> "Limits":
        values = {}
        for name, var in LIMIT_VARIABLES.items():
            raw = os.environ.get(var)
            if raw:
                values[name] = _size(var, raw)
        return cls(**values)


GZIP_FLOOR = 256 * MIB
LIMIT_VARIABLES = {
    "line_bytes": "HLODIFF_MAX_LINE_BYTES",
    "graph_bytes": "HLODIFF_MAX_GRAPH_BYTES",
    "header_bytes": "HLODIFF_MAX_HEADER_BYTES",
    "blank_lines": "HLODIFF_MAX_BLANK_LINES",
    "proto_bytes": "HLODIFF_MAX_PROTO_BYTES",
    "gzip_ratio": "HLODIFF_MAX_GZIP_RATIO",
}
_SUFFIX = {"": 1, "K": 1024, "M": MIB, "G": 1024 * MIB}


def _size(var: str, raw: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", raw, re.I)
    if m is None or int(m.group(1)) <= 0:
        raise HlodiffError(f"expected a positive number of bytes, optionally with K, M or G (got {raw!r})", path=var)
    return int(m.group(1)) * _SUFFIX[m.group(2).upper()]


def limit_error(path: str, line: int | None, what: str, limit: int, variable: str) -> HlodiffError:
    """The one-line error for a limit hit while reading, naming the setting that raises it."""
    return HlodiffError(f"{what} (limit {_human(limit)}; raise {variable} if this is a real dump)",
                        path=path, line=line)


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,}"
