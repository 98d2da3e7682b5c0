"""What the pytest plugin keeps for one pytest session, and the work its hooks hand over.

:mod:`hlodiff.pytest_plugin` only registers options, the ``hlo_graphs`` fixture, the markers and the hooks; each
hook calls one method here. This module imports only the standard library at import time: the snapshots, the
capture (:mod:`hlodiff.capture`) and the explanations are imported when a session or a test uses them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile

SOURCE_LINE_VARIABLES = ("XLA_IR_DEBUG", "XLA_HLO_DEBUG")
"""What torch_xla reads at import to record source lines (HLO metadata, ``Frames:`` in the reports)."""


class PluginSession:
    """Snapshots of the session, where torch_xla writes (``paths``, None until a test needs capture), and the
    environment variables the plugin set (taken back at the end)."""

    def __init__(self, update: bool = False):
        from hlodiff.testing.snapshots import SnapshotSession

        self.snapshots = SnapshotSession(update=update)
        self.paths = None
        self.tmpdir: str | None = None
        self.capture_error: str | None = None
        self.early_env: list[str] = []

    def lines_before_torch_xla(self) -> None:
        """``hlodiff_source_lines = true``: set the source-line variables before test modules import torch_xla
        (only when torch_xla is installed and not yet imported; values the user set are kept)."""
        if "torch_xla" in sys.modules or importlib.util.find_spec("torch_xla") is None:
            return
        for name in SOURCE_LINE_VARIABLES:
            if name not in os.environ:
                os.environ[name] = "1"
                self.early_env.append(name)

    def arrange_capture(self, folder: str | None, source_lines: bool) -> None:
        """Point torch_xla's save file, debug log and live-tensor reports at ``folder`` (default: a temporary one,
        removed at the end), or note why it cannot be done (no torch_xla)."""
        if importlib.util.find_spec("torch_xla") is None:
            self.capture_error = "hlo_graphs needs torch_xla (pip install 'hlodiff[xla]')"
            return
        from hlodiff.capture.session import configure_process_env

        if folder is None:
            self.tmpdir = folder = tempfile.mkdtemp(prefix="hlodiff-")
        self.paths = configure_process_env(folder, source_lines=source_lines)

    def close(self) -> None:
        """Undo what the session set: the variables, the capture, and a temporary folder left empty (a folder the
        user named keeps its files)."""
        for name in self.early_env:
            os.environ.pop(name, None)
        if self.paths is None:
            return
        from hlodiff.capture.session import cleanup

        if self.tmpdir:
            cleanup(self.paths)
            if os.path.isdir(self.tmpdir) and not os.listdir(self.tmpdir):
                os.rmdir(self.tmpdir)
        else:
            cleanup(self.paths, keep_files=True)

    def start_recorder(self):
        """A recorder of what torch_xla runs from now on (:class:`hlodiff.capture.session.Recorder`)."""
        from hlodiff.capture.dynamo_watch import DynamoWatch
        from hlodiff.capture.session import Recorder

        recorder = Recorder(self.paths).start()
        recorder.dynamo_watch = DynamoWatch().start()  # issue 31: Dynamo's recompilations in this test
        return recorder

    def recording(self, recorder, node):
        """What ``recorder`` saw, as the :class:`hlodiff.testing.recording.HloRecording` of the test ``node``."""
        from hlodiff.testing.recording import HloRecording

        watch = getattr(recorder, "dynamo_watch", None)
        return HloRecording(recorder.stop(), self.snapshots, node, self.tmpdir,
                            dynamo=watch.stop() if watch is not None else None)

    def stability_failure(self, node, marker, recorder, excinfo) -> AssertionError | None:
        """The stability failure of a test: the one it raised, or (``@hlo_stable(warmup=N)``, the test passed)
        the marker's own check of what it compiled (``recorder``: started before the test, for the marker)."""
        __tracebackhide__ = True  # the failure shows the test and the explanation, not this method
        from hlodiff.testing.stability import HloStabilityError

        error = excinfo[1] if excinfo and isinstance(excinfo[1], HloStabilityError) else None
        if recorder is None:
            return error
        recording = self.recording(recorder, node)
        if excinfo is None:
            warmup = marker.kwargs.get("warmup", marker.args[0] if marker.args else 1)
            try:
                recording.assert_stable(warmup)
            except AssertionError as err:
                error = err
        return error

    def summary_lines(self) -> list[str]:
        """The end-of-session lines about snapshots: how many were written, and the unused ones (deleted with
        ``--hlodiff-update``, else listed)."""
        snapshots = self.snapshots
        unused = snapshots.unused() if snapshots.roots else []
        lines = []
        if snapshots.written:
            lines.append(f"hlodiff: wrote {len(snapshots.written)} snapshot file(s)")
        if unused and snapshots.update:
            for path in unused:
                path.unlink()
            lines.append(f"hlodiff: deleted {len(unused)} unused snapshot file(s)")
        elif unused:
            lines.append(f"hlodiff: {len(unused)} unused snapshot file(s) (delete them with --hlodiff-update):")
            lines += [f"  {path}" for path in unused]
        return lines


class HloGraphs:
    """The ``hlo_graphs`` fixture: ``with hlo_graphs.record() as rec: ...`` then ``rec.assert_stable()``."""

    def __init__(self, session: PluginSession, node):
        self._session = session
        self._node = node
        self.recordings: list = []

    @contextlib.contextmanager
    def record(self):
        recorder = self._session.start_recorder()
        holder = _Pending()
        try:
            yield holder
        finally:
            holder._bind(self._session.recording(recorder, self._node))
            self.recordings.append(holder)


class _Pending:
    """Stands for the recording inside the ``with`` block and becomes it when the block ends."""

    def __init__(self):
        self._recording = None

    def _bind(self, recording) -> None:
        self._recording = recording

    def __getattr__(self, name):
        if self._recording is None:
            raise RuntimeError(f"hlo_graphs recording: .{name} is available after the `with` block ends")
        return getattr(self._recording, name)
