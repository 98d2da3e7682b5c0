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
  plain time. Without it, a test that fails a stability check runs once more in a fresh process with lines on
  (:mod:`hlodiff.testing.rerun`; ``@pytest.mark.hlo_once`` or ``hlodiff_rerun = false`` opt out), and the
  failure message is that run's, with your lines;
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
    parser.addini("hlodiff_rerun", type="bool", default=True,
                  help="run a test whose graphs were not stable once more, in a fresh process with source lines "
                       "on, so its failure names your lines (opt a test out with @pytest.mark.hlo_once)")
    parser.addini("hlodiff_source_lines", type="bool", default=False,
                  help="set XLA_IR_DEBUG/XLA_HLO_DEBUG before torch_xla is imported, so failures name your source "
                       "lines (costs about 1.5x per traced step under pytest)")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "hlo_stable(warmup=1): fail when the test compiles an XLA graph after "
                                       "its first `warmup` steps; the failure explains why")
    config.addinivalue_line("markers", "hlo_once: never run this test a second time to name source lines in an "
                                       "hlodiff stability failure")
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
    if state is None or state.paths is None:
        yield
        return
    from hlodiff.testing.stability import HloStabilityError

    recorder = None
    if marker is not None:
        from hlodiff.capture.session import Recorder

        recorder = Recorder(state.paths).start()
    outcome = yield
    error = outcome.excinfo[1] if outcome.excinfo and isinstance(outcome.excinfo[1], HloStabilityError) else None
    if recorder is not None:
        from hlodiff.testing.recording import HloRecording

        recording = HloRecording(recorder.stop(), state.snapshots, item, state.tmpdir)
        if outcome.excinfo is None:
            warmup = marker.kwargs.get("warmup", marker.args[0] if marker.args else 1)
            try:
                recording.assert_stable(warmup)
            except AssertionError as err:
                error = err
    if error is None:
        return
    outcome.force_exception(_with_lines(item, state, error).with_traceback(error.__traceback__))


def _with_lines(item, state: _State, error: AssertionError) -> AssertionError:
    """The failure, its message from a second run of the test with source lines on where the plugin left them off
    (:mod:`hlodiff.testing.rerun`)."""
    from hlodiff.testing import rerun
    from hlodiff.testing.stability import HloStabilityError

    if rerun.in_rerun():
        rerun.write_message(str(error))
        return error
    config = item.config
    if config.getini("hlodiff_source_lines") or os.environ.get("XLA_IR_DEBUG", "0") not in ("", "0"):
        return error
    if not config.getini("hlodiff_rerun") or item.get_closest_marker("hlo_once"):
        return HloStabilityError(f"{error}\n\n(source lines: this test is not run twice; run pytest with "
                                 f"`-o hlodiff_source_lines=true` to name your lines)")
    from hlodiff.capture.session import saved_env

    message = rerun.rerun_with_lines(item.nodeid, str(config.rootpath), str(config.inipath or "") or None,
                                     state.paths.env_added, saved_env(state.paths))
    if message is None:
        return HloStabilityError(f"{error}\n\n(source lines: a second run of this test with source lines on "
                                 f"did not fail the same way)")
    return HloStabilityError(f"{message}\n\n(source lines from a second run of this test, in a fresh process "
                             f"with torch_xla's frame capture on; passing tests run without it)")


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
