"""pytest plugin: assert that training steps compile a stable set of graphs (registered via ``pytest11``).

Thin on purpose: options, the ``hlo_graphs`` fixture, the ``hlo_stable`` marker and the session report. The
logic lives in :mod:`hlodiff.testing` and the torch_xla capture in :mod:`hlodiff.capture`, both imported only
when a test uses them, so test suites that never use the plugin see no difference.

torch_xla reads its dump settings once per process, so capture must be arranged before any test touches an XLA
device. Two steps, both keeping every value the user set and undone at the end:

* at configure time, before test modules import torch_xla, and only with ``hlodiff_source_lines = true`` in the
  pytest ini (or ``-o hlodiff_source_lines=true``): ``XLA_IR_DEBUG=1`` and ``XLA_HLO_DEBUG=1`` (torch_xla reads
  them at import; they add source lines to the HLO metadata and frames to the live-tensor reports). Off by
  default because of what they cost under pytest: torch_xla then records the whole Python stack of every IR
  node it traces, and pytest's stack is some forty frames deep, so a 4-layer transformer step measured 1.5x its
  plain time (the same flags cost nothing measurable in a script run by ``hlodiff record``);
* after collection, only when some collected test uses ``hlo_graphs`` or ``@pytest.mark.hlo_stable``: the save
  file, the PT_XLA_DEBUG log and the live-tensor report hook, all read lazily by torch_xla.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile

import pytest

_STATE_KEY = "_hlodiff_state"


class _State:
    def __init__(self, config):
        from hlodiff.testing.snapshots import SnapshotSession

        self.snapshots = SnapshotSession(update=config.getoption("hlodiff_update"))
        self.paths = None
        self.tmpdir: str | None = None
        self.capture_error: str | None = None
        self.early_env: list[str] = []


def pytest_addoption(parser) -> None:
    group = parser.getgroup("hlodiff", "hlodiff: stable XLA graphs")
    group.addoption("--hlodiff-update", action="store_true", default=False,
                    help="rewrite __hlo_snapshots__ files and delete unused ones")
    group.addoption("--hlodiff-dir", default=None,
                    help="where torch_xla's graphs, reports and debug log go (default: a temporary folder, "
                         "removed at the end; a folder given here is kept)")
    parser.addini("hlodiff_source_lines", type="bool", default=False,
                  help="set XLA_IR_DEBUG/XLA_HLO_DEBUG before torch_xla is imported, so failures name your source "
                       "lines (costs about 1.5x per traced step under pytest)")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "hlo_stable(warmup=1): fail when the test compiles an XLA graph after "
                                       "its first `warmup` steps; the failure explains why")
    state = _State(config)
    setattr(config, _STATE_KEY, state)
    if (config.getini("hlodiff_source_lines") and "torch_xla" not in sys.modules
            and importlib.util.find_spec("torch_xla") is not None):
        for name in ("XLA_IR_DEBUG", "XLA_HLO_DEBUG"):
            if name not in os.environ:
                os.environ[name] = "1"
                state.early_env.append(name)


def pytest_collection_modifyitems(session, config, items) -> None:
    if any("hlo_graphs" in getattr(item, "fixturenames", ()) or item.get_closest_marker("hlo_stable")
           for item in items):
        _arrange_capture(getattr(config, _STATE_KEY), config)


def _arrange_capture(state: _State, config) -> None:
    if importlib.util.find_spec("torch_xla") is None:
        state.capture_error = "hlo_graphs needs torch_xla (pip install 'hlodiff[xla]')"
        return
    from hlodiff.capture.session import configure_process_env

    folder = config.getoption("hlodiff_dir")
    if folder is None:
        state.tmpdir = folder = tempfile.mkdtemp(prefix="hlodiff-")
    state.paths = configure_process_env(folder, source_lines=config.getini("hlodiff_source_lines"))


def pytest_unconfigure(config) -> None:
    state = getattr(config, _STATE_KEY, None)
    if state is None:
        return
    for name in state.early_env:
        os.environ.pop(name, None)
    if state.paths is None:
        return
    from hlodiff.capture.session import cleanup

    if state.tmpdir:
        cleanup(state.paths)
        if os.path.isdir(state.tmpdir) and not os.listdir(state.tmpdir):
            os.rmdir(state.tmpdir)
    else:
        cleanup(state.paths, keep_files=True)


class HloGraphs:
    """The ``hlo_graphs`` fixture: ``with hlo_graphs.record() as rec: ...`` then ``rec.assert_stable()``."""

    def __init__(self, state: _State, node):
        self._state = state
        self._node = node
        self.recordings: list = []

    @contextlib.contextmanager
    def record(self):
        from hlodiff.capture.session import Recorder
        from hlodiff.testing.recording import HloRecording

        recorder = Recorder(self._state.paths).start()
        holder = _Pending()
        try:
            yield holder
        finally:
            holder._bind(HloRecording(recorder.stop(), self._state.snapshots, self._node, self._state.tmpdir))
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


@pytest.fixture
def hlo_graphs(request) -> HloGraphs:
    """Record the XLA graphs torch_xla compiles inside ``with hlo_graphs.record():`` blocks."""
    state = getattr(request.config, _STATE_KEY)
    if state.capture_error or state.paths is None:
        pytest.skip(state.capture_error or "hlodiff capture is not configured")
    return HloGraphs(state, request.node)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    __tracebackhide__ = True  # the marker's failure shows the test and the explanation, not this hook
    marker = item.get_closest_marker("hlo_stable")
    state = getattr(item.config, _STATE_KEY, None)
    if marker is None or state is None or state.paths is None:
        yield
        return
    from hlodiff.capture.session import Recorder
    from hlodiff.testing.recording import HloRecording

    recorder = Recorder(state.paths).start()
    outcome = yield
    recording = HloRecording(recorder.stop(), state.snapshots, item, state.tmpdir)
    if outcome.excinfo is None:
        warmup = marker.kwargs.get("warmup", marker.args[0] if marker.args else 1)
        try:
            recording.assert_stable(warmup)
        except AssertionError as err:
            outcome.force_exception(err)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    state = getattr(config, _STATE_KEY, None)
    if state is None:
        return
    snapshots = state.snapshots
    unused = snapshots.unused() if snapshots.roots else []
    if snapshots.written:
        terminalreporter.write_line(f"hlodiff: wrote {len(snapshots.written)} snapshot file(s)")
    if unused:
        if snapshots.update:
            for path in unused:
                path.unlink()
            terminalreporter.write_line(f"hlodiff: deleted {len(unused)} unused snapshot file(s)")
        else:
            terminalreporter.write_line(f"hlodiff: {len(unused)} unused snapshot file(s) "
                                        f"(delete them with --hlodiff-update):")
            for path in unused:
                terminalreporter.write_line(f"  {path}")
