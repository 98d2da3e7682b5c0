"""``-`` for standard input, wherever a command expects one input file.

Dumps are read more than once (scanned, then each graph's text re-read by offset), so standard input is copied
once to a private temporary file, removed when hlodiff exits. Messages and graph references name it ``-`` (``-#3``
is its fourth graph), as the user typed it; content decides what it is, as for any file (gzip too).
"""

from __future__ import annotations

import atexit
import os
import sys

from hlodiff.errors import HlodiffError, show_as

STDIN = "-"


def uses_stdin(value: str) -> bool:
    """``-`` or a graph of it, ``-#N``."""
    return value == STDIN or (value.startswith(STDIN + "#") and value[2:].lstrip("-").isdigit())


def spool(values: list[str], stream=None) -> list[str]:
    """``values`` with ``-`` (and ``-#N``) standing for a copy of standard input; read at most once."""
    if not any(uses_stdin(v) for v in values):
        return values
    if sum(1 for v in values if v == STDIN) > 1:
        raise HlodiffError("standard input can be given once ('-'); name the other inputs as files", path=STDIN)
    stream = stream if stream is not None else sys.stdin.buffer
    if hasattr(stream, "isatty") and stream.isatty():
        raise HlodiffError("'-' reads standard input, but it is a terminal: pipe a dump in (cmd < graphs.hlo.0)",
                           path=STDIN)
    import shutil  # here, not at the top: every command imports this module, few read standard input
    import tempfile

    folder = tempfile.mkdtemp(prefix="hlodiff-stdin-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "stdin")
    with open(path, "wb") as out:
        shutil.copyfileobj(stream, out, 1 << 20)
    show_as(path, STDIN)
    return [path + v[1:] if uses_stdin(v) else v for v in values]


def spool_arguments(arguments: dict, names: tuple[str, ...]) -> dict:
    """A command's ``arguments`` with ``-`` replaced in the inputs ``names`` (a path, or a tuple of paths)."""
    flat = [(k, v) for k in names if k in arguments for v in _as_tuple(arguments[k])]
    if not any(uses_stdin(v) for _, v in flat):
        return arguments
    spooled = iter(spool([v for _, v in flat]))
    replaced = {k: [] for k, _ in flat}
    for k, _ in flat:
        replaced[k].append(next(spooled))
    return {**arguments, **{k: (tuple(vs) if isinstance(arguments[k], (tuple, list)) else vs[0])
                            for k, vs in replaced.items()}}


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)
