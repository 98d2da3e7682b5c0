"""Where the user's source files are now: a capture names them by the paths of the machine that made it.

A dump copied off a TPU VM, a container or CI names ``/home/runner/work/proj/train.py``; the same file sits at
``~/proj/train.py`` on the machine reading it. Like a debugger's substitute-path, ``--source-map OLD=NEW`` maps
recorded path prefixes to where the sources are now, so the same capture gives the same answer wherever it is read.
Only reading is affected: reports keep naming the files as the capture recorded them.

The map is process-wide (one command, one map; forked workers inherit it); without the option,
``HLODIFF_SOURCE_MAP`` (pairs joined by ``os.pathsep``) sets it once for a shell. Sources looked for and not
found are remembered, so a command can name them once in a hint.
"""

from __future__ import annotations

import os

from hlodiff.errors import HlodiffError

ENV = "HLODIFF_SOURCE_MAP"

_missing: dict[str, None] = {}
_given: tuple[tuple[str, str], ...] | None = None


def parse_pairs(values: list[str] | tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``OLD=NEW`` strings as pairs, longest OLD first (the most specific prefix wins)."""
    pairs = []
    for value in values:
        old, sep, new = value.partition("=")
        if not sep or not old or not new:
            raise HlodiffError(f"--source-map takes OLD=NEW (a recorded path prefix and where it is now), "
                               f"not {value!r}")
        pairs.append((os.path.normpath(old), os.path.normpath(new)))
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def use_source_map(values: list[str] | tuple[str, ...]) -> None:
    """Set the map for this command (and the workers it forks); with no values, ``HLODIFF_SOURCE_MAP`` applies."""
    global _given
    _given = parse_pairs(values) if values else None


def _pairs() -> tuple[tuple[str, str], ...]:
    if _given is not None:
        return _given
    value = os.environ.get(ENV, "")
    try:
        return parse_pairs([v for v in value.split(os.pathsep) if v]) if value else ()
    except HlodiffError:
        return ()


def where_now(path: str) -> str:
    """The path a recorded source file has on this machine: the first mapped prefix replaced, else unchanged."""
    normal = os.path.normpath(path)
    for old, new in _pairs():
        if normal == old or normal.startswith(old.rstrip(os.sep) + os.sep):
            return new + normal[len(old):]
    return path


def note_missing(path: str) -> None:
    """A source the analysis wanted and could not read where the capture (and the map) says it is."""
    _missing.setdefault(path, None)


def missing_sources() -> list[str]:
    """The recorded paths of sources looked for and not found, in the order they were first wanted."""
    return list(_missing)


def forget_missing() -> None:
    """Start a command's list of missing sources afresh (several commands may run in one process)."""
    _missing.clear()


def missing_source_hint(shown: int = 2) -> str | None:
    """One hint naming the sources looked for and not found, and the option that points at them; None if none."""
    missing = missing_sources()
    if not missing:
        return None
    names = ", ".join(missing[:shown]) + (f" and {len(missing) - shown} more" if len(missing) > shown else "")
    folder = os.path.dirname(missing[0]) or "."
    return (f"source not found here: {names} (read for where an argument was made); if the sources are elsewhere "
            f"on this machine, pass --source-map {folder}=DIR")


def on_disk(path: str) -> bool:
    """Whether the user's file ``path`` is on disk now (where the dump recorded it, or where ``--source-map`` says
    it is): a question about its text can be answered."""
    return bool(path) and os.path.isfile(where_now(path))
