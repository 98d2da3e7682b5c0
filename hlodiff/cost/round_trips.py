"""A value read to the host inside the step and put straight back on the device: state carried through the host.

``h = torch.from_numpy(h.detach().cpu().numpy()).to(dev)`` (CPU-era code "detaching" a recurrent state through
NumPy) reads ``h``, so a graph of its own runs for it before the step's sync (:mod:`hlodiff.cost.reads`), and uploads
the same values as new device data at the same line, which the next step's graph reads. Reading it later (after the
sync, in a step closure) is not the fix: nothing needs the values on the host; ``.detach()`` keeps them on the
device. Evidence, from the live-tensor reports: a tensor that is bare device data made at the read's line (its
innermost user frame), of a shape the read graph outputs, listed in a report, and read by a later graph when the
reports carry ``reads=`` (torch_xla's own list; the next step's graph reads it, by then the report lists the next
upload under the same name). A value read and put on the device at another line (a
metric turned into next step's weights elsewhere) is not matched: the line is the evidence that the two go together.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from hlodiff.cost.model import GraphCost
from hlodiff.dumps.tensors_report import SyncReport
from hlodiff.hlo.model import user_frame
from hlodiff.hlo.shapes import without_layout_text


def _at(frame) -> tuple[str, int] | None:
    if frame is None or frame.line is None:
        return None
    return os.path.basename(frame.file), frame.line


def round_trip_reads(graphs: list[GraphCost], reports: Iterable[SyncReport]) -> frozenset[str]:
    """The refs of the read graphs (``sync_call == "read"``) whose value comes back to the device at the read's line
    and is read there by a later graph."""
    wanted: dict[tuple[str, int], list[GraphCost]] = {}
    for g in graphs:
        where = _at(g.trigger) if g.sync_call == "read" else None
        if where is not None:
            wanted.setdefault(where, []).append(g)
    if not wanted:
        return frozenset()
    made: dict[int, set[str]] = {}  # tensor id -> the read graphs whose value it holds again
    read_later: set[int] = set()
    any_reads = False
    for report in reports:
        reads = report.reads()
        if reads is not None:
            any_reads = True
            read_later |= reads
        for tensor in report.tensors:
            if not tensor.is_device_data:
                continue
            for g in wanted.get(_at(user_frame(tensor.frames)), ()):
                if without_layout_text(tensor.shape_text) in g.output_shapes:
                    made.setdefault(tensor.id, set()).add(g.ref)
    return frozenset(ref for i, refs in made.items() if not any_reads or i in read_later for ref in refs)
