"""What hlodiff never reads is not kept: the LLVM IR, object files and MLIR XLA's CPU compiler writes beside each
module of the dump folder hlodiff chose. A module of its own because both the command (:mod:`.record`, its
session) and each process's folder (:mod:`.per_process`, chosen at interpreter start) prune, and the second must
not import the first.
"""

from __future__ import annotations

import os

from hlodiff.capture.env import CapturePaths

_NOT_HLO_SUFFIXES = (".ll", ".o", ".mlir")


def prune_xla_dump(paths: CapturePaths) -> int:
    """Delete the LLVM IR, object files and MLIR that XLA's CPU compiler writes beside each module in the dump
    hlodiff chose (never in a dump folder the user named): hlodiff reads only the HLO text and protos. Returns the
    bytes freed."""
    dump = paths.xla_dump
    if not dump or dump not in paths.owned or not os.path.isdir(dump):
        return 0
    freed = 0
    for name in os.listdir(dump):
        p = os.path.join(dump, name)
        if name.endswith(_NOT_HLO_SUFFIXES) and os.path.isfile(p) and not os.path.islink(p):
            try:
                freed += os.path.getsize(p)
                os.unlink(p)
            except OSError:
                pass
    return freed
