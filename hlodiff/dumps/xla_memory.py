"""XLA's own memory figures, from the side files it writes beside each optimized module in a dump folder.

With ``--xla_dump_to`` XLA writes, next to ``module_NNNN.NAME.cpu_after_optimizations.txt``:

* ``...-memory-usage-report.txt``: ``Total bytes: 380 (380B)`` (``Total bytes used:`` in the XLA that torch_xla 2.9
  ships), the sum of every allocation of the buffer
  assignment (parameters, outputs, constants, temporaries), i.e. what running the module needs at once;
* ``...-live-range.txt``: the heap simulator's peak of simultaneously live values,
  ``Stack trace breakdown for peak usage: 524 360 bytes`` (thousands grouped with spaces);
* ``...-buffer-assignment.txt``: one ``allocation N: size S, ...`` line per allocation (summed when the report is
  missing).

hlodiff prefers XLA's figure to its own estimate because XLA knows the buffer sharing it decided. Nothing here
parses HLO; a file that is missing or says something else gives ``None``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_TOTAL_RE = re.compile(rb"^Total bytes(?: used)?:\s*(\d[\d ,']*)", re.M)
_LIVE_PEAK_RE = re.compile(rb"^\s*Stack trace breakdown for peak usage:\s*(\d[\d ,']*?) bytes", re.M)
_ALLOCATION_RE = re.compile(rb"^allocation \d+: size (\d+)", re.M)
_MAX_SIDE_FILE = 256 * 1024 * 1024
"""Buffer assignments of huge modules reach hundreds of MB; beyond this the figure is not worth the read."""


@dataclass(frozen=True, slots=True)
class XlaMemory:
    """What XLA reported for one module; ``source`` names the file the total came from."""

    total_bytes: int
    source: str
    live_peak_bytes: int | None = None


def side_file(hlo_path: str, suffix: str) -> str:
    """``module_0004.jit_f.cpu_after_optimizations.txt`` -> ``module_0004.jit_f.cpu_after_optimizations<suffix>.txt``."""
    stem = hlo_path[:-4] if hlo_path.endswith(".txt") else hlo_path
    return stem + suffix + ".txt"


def read_xla_memory(hlo_path: str) -> XlaMemory | None:
    """XLA's figures for the module whose HLO text is at ``hlo_path``, or None when it wrote none beside it."""
    total = source = None
    report = side_file(hlo_path, "-memory-usage-report")
    data = _read(report)
    if data is not None:
        m = _TOTAL_RE.search(data)
        if m:
            total, source = _int(m.group(1)), report
    if total is None:
        assignment = side_file(hlo_path, "-buffer-assignment")
        data = _read(assignment)
        if data is not None:
            sizes = _ALLOCATION_RE.findall(data)
            if sizes:
                total, source = sum(int(s) for s in sizes), assignment
    if total is None:
        return None
    live = _read(side_file(hlo_path, "-live-range"))
    m = _LIVE_PEAK_RE.search(live) if live is not None else None
    return XlaMemory(total, os.path.basename(source), _int(m.group(1)) if m else None)


def _int(digits: bytes) -> int:
    """XLA groups thousands with spaces in some figures (``524 360 bytes``)."""
    return int(re.sub(rb"[^0-9]", b"", digits))


def _read(path: str) -> bytes | None:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _MAX_SIDE_FILE:
            return None  # a FIFO or device under a side file's name would block the open or never end
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
