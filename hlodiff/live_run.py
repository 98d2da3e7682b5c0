"""A capture followed while a run writes it: the entry layer's glue between the followers that read the growing files
(:mod:`hlodiff.dumps.follow`) and the live story's analysis (:class:`hlodiff.explain.live.LiveExplainer`), which
reads nothing itself. Each poll hands the new graphs to the explainer, whose :class:`~hlodiff.dumps.evidence.Run`
grows with them (the follower's PT_XLA_DEBUG events and the live-tensor reports once they are written).
``hlodiff watch`` and ``record --live`` run it through :func:`hlodiff.api.watch_path`.
"""

from __future__ import annotations

import os

from hlodiff.dumps.evidence import Run
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.dumps.run_folder import RunInputs
from hlodiff.errors import InputWarning
from hlodiff.explain.live import LiveEvent, LiveExplainer, Told


class LiveRun:
    """A followed capture and its explainer: :meth:`poll` reads what the run appended and returns the events it
    made true; :meth:`close` (the writer is done) reads the rest and looks at each story once more."""

    def __init__(self, path: str, *, stage: str | None = None):
        from hlodiff.dumps.follow import LogFollower, follower_for

        self.path = path
        self.follower = follower_for(path, stage)
        self.log_only = isinstance(self.follower, LogFollower)
        self.report_files = [_report_beside(path)]
        # the evidence grows as the follower reads: its PT_XLA_DEBUG events are the run's, its reports are added
        # once they exist
        self.run = Run(inputs=RunInputs([path]), events=self.follower.events)
        self.explainer = LiveExplainer(self.run, warnings=self.follower.warnings)
        # Imported now, while the job starts, not when the first recompilation is told: the differ imports
        # networkx on first use (0.3-0.8 s on a loaded machine), which would delay the first live line by as much.
        import networkx  # noqa: F401
        import hlodiff.explain.recompile  # noqa: F401
        import hlodiff.explain.verdict  # noqa: F401
        self.log_steps = 0
        self.log_seen: set[str] = set()

    @property
    def warnings(self) -> list[InputWarning]:
        return self.follower.warnings

    def poll(self) -> list[LiveEvent]:
        records = self.follower.poll()
        return self._after(records)

    def close(self) -> list[LiveEvent]:
        events = self._after(self.follower.close())
        return events + self.explainer.finish()

    def _after(self, records: list[GraphRecord]) -> list[LiveEvent]:
        self.run.inputs.tensors_reports = [p for p in self.report_files if os.path.isfile(p)]
        if self.log_only:
            return self._log_events()
        return self.explainer.feed(records)

    def _log_events(self) -> list[LiveEvent]:
        """A log without HLO: each compilation after the first of its frames, as torch_xla told it."""
        from hlodiff.dumps.debug_log import CompilationEvent
        from hlodiff.hlo.model import user_frame

        out = []
        for event in self.follower.take_events():
            if not isinstance(event, CompilationEvent):
                self.log_steps += 1
                continue
            where = user_frame(event.frames) or (event.frames[0] if event.frames else None)
            label = f"sync at {where.short()}" if where else "unknown line"
            first = label not in self.log_seen
            self.log_seen.add(label)
            told = Told("unknown", f"torch_xla compiled graph {event.graph_hash} ({event.cause}); the log has no "
                        "HLO, so what changed is unknown (capture with hlodiff record, or add an XLA dump)",
                        where, None)
            out.append(LiveEvent("compiled" if first else "log", self.log_steps, event.graph_hash or "?", label,
                                 None if first else told, graphs=self.log_steps))
        return out


def _report_beside(path: str) -> str:
    """Where the live-tensor reports of the capture at ``path`` are (or will be): the manifest's, else
    ``tensors_report.txt`` in the folder (beside the file). They place added or removed outputs at their lines."""
    from hlodiff.dumps.manifest import MANIFEST_NAME, read_manifest

    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if os.path.isfile(os.path.join(folder, MANIFEST_NAME)):
        report = read_manifest(folder).tensors_report
        if report:
            return report
    return os.path.join(folder, "tensors_report.txt")
