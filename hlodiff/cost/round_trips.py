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

A value computed on the host from the read and sent back for the same step (hard examples picked by
``np.argsort(-per.cpu().numpy())[:k]``, then ``torch.from_numpy(idx).to(dev)`` indexing the loss) is the other
case (:func:`sent_back_reads`, crossings round 10): the step's own graph needs it, so neither reading it later nor
``detach()`` is the fix; computing it on the device is. Evidence: bare device data made in the read's file at a line
strictly between the read and the step's sync that follows it (the batch uploaded above the read is not), which
that sync's graph reads (``reads=``, required: without it no report says which graph took the upload), or a bare
``device_data`` leaf at such a line in the pending IR of the sync's report (an upload consumed by the step and no
longer alive as a tensor of its own: gradients clipped on the host and assigned back, crossings round 13). When
the read's file is on disk, the upload's line must also use a name bound from the read (data flow,
:mod:`hlodiff.dumps.read_flow_source`): a NaN guard's ``loss.item()`` then a NumPy-drawn target sent with
``.to(dev)`` is a plain read (stop 51).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from enum import Enum

from hlodiff.cost.model import GraphCost
from hlodiff.dumps.tensors_report import SyncReport
from hlodiff.hlo.model import user_frame
from hlodiff.hlo.shapes import without_layout_text


class HostReturn(Enum):
    """How a value read inside the step came back to the device: one of these, the first that holds, is what a
    ``read_in_step`` finding tells (a round trip before a value sent back, as the fixes are chosen)."""

    ROUND_TRIP = "round_trip"
    """Back at the read's line and read by a later graph (:func:`round_trip_reads`): nothing needs it on the host."""
    MOVED = "moved"
    """A round trip at a line that only moves the value (:attr:`hlodiff.cost.model.RunCost.round_trips_moved`):
    ``.detach()`` gives the same values."""
    SENT_BACK = "sent_back"
    """What the host worked out from it uploaded for the same step (:func:`sent_back_reads`): the step needs it."""


def host_return(ref: str, round_trips: frozenset[str], moved: frozenset[str],
                sent_back: frozenset[str]) -> HostReturn | None:
    """How the read graph ``ref``'s value came back (the sets of :class:`hlodiff.cost.model.RunCost`), None when it
    did not."""
    if ref in round_trips:
        return HostReturn.MOVED if ref in moved else HostReturn.ROUND_TRIP
    return HostReturn.SENT_BACK if ref in sent_back else None


def _where(frame) -> tuple[str, str | None, int] | None:
    """(file, function, line) of a frame. A value sent back compares lines only inside one function's body; a round
    trip's upload is at the read's very line, whatever function name each stack gives it (``[::2]``: file, line)."""
    if frame is None or frame.line is None:
        return None
    return os.path.basename(frame.file), frame.function, frame.line


class _RoundTrips:
    """:func:`round_trip_reads`, one report at a time."""

    def __init__(self, graphs: list[GraphCost]):
        self.wanted: dict[tuple[str, int], list[GraphCost]] = {}
        for g in graphs:
            where = _where(g.trigger) if g.sync_call == "read" else None
            if where is not None:
                self.wanted.setdefault(where[::2], []).append(g)
        self.made: dict[int, set[str]] = {}  # tensor id -> the read graphs whose value it holds again
        self.read_later: set[int] = set()
        self.any_reads = False

    def see(self, report: SyncReport) -> None:
        if not self.wanted:
            return
        reads = report.reads()
        if reads is not None:
            self.any_reads = True
            self.read_later |= reads
        for tensor in report.tensors:
            if not tensor.is_device_data:
                continue
            where = _where(user_frame(tensor.frames))
            for g in self.wanted.get(where[::2] if where is not None else None, ()):
                if without_layout_text(tensor.shape_text) in g.output_shapes:
                    self.made.setdefault(tensor.id, set()).add(g.ref)

    def result(self) -> frozenset[str]:
        return frozenset(ref for i, refs in self.made.items() if not self.any_reads or i in self.read_later
                         for ref in refs)


def round_trip_reads(graphs: list[GraphCost], reports: Iterable[SyncReport]) -> frozenset[str]:
    """The refs of the read graphs (``sync_call == "read"``) whose value comes back to the device at the read's line
    and is read there by a later graph."""
    return host_returns(graphs, reports)[0]


def _windows(graphs: list[GraphCost]) -> dict[str, tuple[tuple[str, str | None], int, int, frozenset[str], str]]:
    """Per read graph followed by a sync's graph of the same dump: ((file, function), read line, sync line, the
    read graph's output shapes, the read's file as the frames name it) when both lines are in one function and the
    read comes first."""
    out = {}
    for a, b in zip(graphs, graphs[1:]):
        if a.sync_call != "read" or b.sync_call not in ("sync", "save"):
            continue
        if a.ref.rsplit("#", 1)[0] != b.ref.rsplit("#", 1)[0]:
            continue  # the last graph of one dump and the first of the next
        read, sync = _where(_statement_frame(a)), _where(_statement_frame(b))
        if read is not None and sync is not None and read[:2] == sync[:2] and read[2] < sync[2]:
            out[a.ref] = (read[:2], read[2], sync[2], frozenset(a.output_shapes), _statement_frame(a).file)
    return out


COMPREHENSIONS = frozenset({"<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>"})
"""The functions Python (3.11 and older) makes of a comprehension: ``[p.grad.cpu() for p in params]`` reads inside
``<listcomp>``, whose lines are those of the statement in the function around it."""


def _statement_frame(g: GraphCost):
    """The frame of the statement that ran a graph: its trigger, or, when that is a comprehension's, the frame of
    the function the comprehension is written in (the next user frame out, same file), so that a read in a
    comprehension compares lines with the step's sync in the loop's body."""
    frame = g.trigger
    if frame is None or frame.function not in COMPREHENSIONS:
        return frame
    for outer in g.stack:
        if outer.function not in COMPREHENSIONS:
            return outer if outer.file == frame.file else frame
    return frame


def upload_files(graphs: list[GraphCost]) -> frozenset[str]:
    """The files (basenames) whose device-data leaves :func:`sent_back_reads` asks about: those of its read-and-sync
    windows (the reports are then read with only those leaves beside the roots)."""
    return frozenset(body[0] for body, _, _, _, _ in _windows(graphs).values())


class _SentBack:
    """:func:`sent_back_reads`, one report at a time."""

    def __init__(self, graphs: list[GraphCost], uses_read: "UsesRead"):
        self.windows = _windows(graphs)
        self.found: set[str] = set()
        self.uses_read = uses_read
        self.asked: dict[tuple[str, int, int], bool | None] = {}  # one answer per upload line: reports repeat them

    def see(self, report: SyncReport) -> None:
        reads = report.reads() if self.windows else None
        if not reads:
            return
        for where, shape in _uploads(report, reads):
            self.found.update(ref for ref, (body, first, last, outputs, file) in self.windows.items()
                              if where[:2] == body and first < where[2] < last and shape not in outputs
                              and self._uses_read(file, first, where[2]) is not False)

    def _uses_read(self, file: str, first: int, line: int) -> bool | None:
        key = (file, first, line)
        if key not in self.asked:
            self.asked[key] = self.uses_read(file, first, line)
        return self.asked[key]


def _uploads(report: SyncReport, reads: frozenset[int]) -> Iterator[tuple[tuple[str, str | None, int], str]]:
    """(where, shape) of the device data the coming graph reads: live tensors it reads (``reads=``), and the bare
    ``xla::device_data`` leaves in the pending IR of the report's tensors, whose location is the line that made the
    data. The IR's are what a value sent back and consumed in the same step leaves: gradients clipped on the host and
    assigned back (``p.grad = g.to(dev)``) are gone by the sync (``zero_grad`` drops them), only the optimizer's
    pending update still holds them (crossings round 13)."""
    for tensor in report.tensors:
        if tensor.is_device_data:
            if tensor.id in reads and (where := _where(user_frame(tensor.frames))) is not None:
                yield where, without_layout_text(tensor.shape_text)
            continue
        for node in tensor.ir:
            shape = without_layout_text(node.shape_text)
            if node.op == "xla::device_data" and not _scalar(shape) and (where := _where(node.location)) is not None:
                yield where, shape


def _scalar(shape: str) -> bool:
    """A rank-0 leaf: torch_xla makes a Python number in an op (``loss / 4``) device data at the op's line, which
    is no value of the host's sent back."""
    return shape.endswith("[]")


UsesRead = Callable[[str, int, int], "bool | None"]
"""Whether the upload's line (file, read line, upload line) uses a name bound from the read, None without the file
(:meth:`hlodiff.dumps.cost_evidence.CostRun.upload_uses_read`)."""


def _unknown(file: str, read_line: int, upload_line: int) -> None:
    return None


def sent_back_reads(graphs: list[GraphCost], reports: Iterable[SyncReport],
                    uses_read: UsesRead = _unknown) -> frozenset[str]:
    """The refs of the read graphs after which the step uploads new device data (between the read's line and the
    sync's, in the same function) that the sync's graph reads: a value worked out on the host from the read and
    sent back for this step. Device data of a shape the read graph outputs is left out: torch_xla keeps the value
    it read as device data, which is no upload of the user's."""
    return host_returns(graphs, reports, uses_read)[1]


def host_returns(graphs: list[GraphCost], reports: Iterable[SyncReport],
                 uses_read: UsesRead = _unknown) -> tuple[frozenset[str], frozenset[str]]:
    """(:func:`round_trip_reads`, :func:`sent_back_reads`) in one pass over the reports: each report file is read and
    parsed once, one report at a time (memory stays bounded on big reports)."""
    trips, sent = _RoundTrips(graphs), _SentBack(graphs, uses_read)
    if not trips.wanted and not sent.windows:
        return frozenset(), frozenset()
    for report in reports:
        trips.see(report)
        sent.see(report)
    return trips.result(), frozenset(sent.found)
