"""What ``hlodiff record`` says on stderr around the explanation of its capture, and why it explains nothing.

The command's exit status stays the command's own, so hlodiff's verdict and notes go to stderr (and, with
``--json``, into the document: :func:`hlodiff.render.json_out.unexplained` when there is nothing to explain).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from hlodiff.render.plural import counted


@dataclass(slots=True)
class RecordNotes:
    """The notes after the command ended, in the order they are printed."""

    folder: str
    """The capture folder as the user typed it, or (hlodiff chose it) relative to the working folder."""
    lines: list[str] = field(default_factory=list)
    unexplained: str | None = None
    """Why nothing is explained (a signal stopped the command, or it produced no graph); None: explain it."""
    signals: list[str] = field(default_factory=list)
    """The names of the signals forwarded to the command."""


def record_notes(result, out_dir: str | None) -> RecordNotes:
    """The notes on a :class:`hlodiff.capture.record.RecordResult` (``out_dir``: the ``--out`` given, if any)."""
    notes = RecordNotes(out_dir if out_dir is not None else os.path.relpath(result.paths.out_dir))
    if out_dir is None and notes.folder != "hlodiff-run":  # numbered past earlier recordings (never replaced)
        notes.lines.append(f"hlodiff: recorded into {notes.folder} (hlodiff-run holds an earlier recording)")
    notes.lines += [err.one_line() for err in result.errors]  # e.g. the manifest on a full disk
    status, folder = result.exit_status, notes.folder
    if result.signals:
        notes.signals = result.signal_names
        notes.unexplained = (f"stopped by {', '.join(notes.signals)}: the command exited with status {status}; the "
                             f"capture is in {folder} (hlodiff explain-recompile {folder})")
    elif not result.captured_graphs:
        notes.unexplained = (f"the command produced no graph (it exited with status {status}; nothing in {folder} "
                             f"to explain: did it run a torch_xla or JAX step?)")
    if notes.unexplained is not None:
        notes.lines.append(f"hlodiff: {notes.unexplained}")
    elif not result.ok:
        notes.lines.append(f"hlodiff: the command exited with status {status}; explaining what it captured")
    return notes


def exit_note(status: int, recompilations: int | None = None, unexpected: int | None = None,
              dynamo: tuple[int, int] | None = None, ranks: list[tuple[int, int]] | None = None,
              follow_dynamo: int = 0) -> str:
    """The verdict line: record exits with the command's status, not hlodiff's; it says how many recompilations
    were expected (a warm-up) so a steady run does not read as a failing one. ``dynamo``: Dynamo's recompilations
    and how many are unexpected (:attr:`hlodiff.api.Explained.dynamo_counts`), counted first: a torch.compile run
    whose XLA graphs were all cache hits still recompiled (a CI job greps this line). ``ranks``: (rank, its
    recompilations) of a job of several ranks. ``follow_dynamo``: XLA recompilations that are the bridge's compile
    after an unexpected Dynamo recompilation (:attr:`hlodiff.api.Explained.follow_dynamo`): neither expected nor
    counted apart, they follow Dynamo's (review 14, F3: "XLA: 2 recompilations (all expected)" under a report that
    exits 1)."""
    if recompilations is None:  # several ranks: each rank's count (review 6, p07: the line had none)
        counts = "; ".join(f"rank {rank}: {_counted(n, None)}" for rank, n in ranks or [])
        return f"hlodiff: {counts + '; ' if counts else ''}exiting with the command's status {status}"
    count = _counted(recompilations, unexpected, follow_dynamo)
    if dynamo is not None:
        count = f"{_counted(*dynamo)} by Dynamo; XLA: {count}"
    return f"hlodiff: {count}; exiting with the command's status {status}"


def _counted(n: int, unexpected: int | None, follow_dynamo: int = 0) -> str:
    count = counted(n, 'recompilation')
    if n and follow_dynamo:
        parts = [f"{'all' if follow_dynamo == n else follow_dynamo} by the bridge after Dynamo's"]
        if unexpected:
            parts.append(f"{unexpected} unexpected")
        if n - follow_dynamo - (unexpected or 0) > 0:
            parts.append(f"{n - follow_dynamo - (unexpected or 0)} expected")
        count += f" ({', '.join(parts)})"
    elif n and unexpected == 0:
        count += " (expected)" if n == 1 else " (all expected)"
    elif n and unexpected is not None and unexpected < n:
        count += f" ({unexpected} unexpected)"
    return count
