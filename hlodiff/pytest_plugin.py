"""pytest plugin: assert that training steps compile a stable set of graphs (registered via ``pytest11``).

Thin on purpose: options, the ``hlo_graphs`` fixture, the ``hlo_stable`` marker and the hooks, each handing its
work to :class:`hlodiff.testing.pytest_session.PluginSession` (the session's state, capture and snapshots) or
:mod:`hlodiff.testing.rerun`. The torch_xla capture (:mod:`hlodiff.capture`) and the explanations are imported
only when a test uses them, so test suites that never use the plugin see no difference.

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

import pytest

_STATE_KEY = "_hlodiff_state"


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
    from hlodiff.testing.pytest_session import PluginSession

    config.addinivalue_line("markers", "hlo_stable(warmup=1): fail when the test compiles an XLA graph after "
                                       "its first `warmup` steps; the failure explains why")
    config.addinivalue_line("markers", "hlo_once: never run this test a second time to name source lines in an "
                                       "hlodiff stability failure")
    session = PluginSession(update=config.getoption("hlodiff_update"))
    setattr(config, _STATE_KEY, session)
    if config.getini("hlodiff_source_lines"):
        session.lines_before_torch_xla()


def pytest_collection_modifyitems(session, config, items) -> None:
    if any("hlo_graphs" in getattr(item, "fixturenames", ()) or item.get_closest_marker("hlo_stable")
           for item in items):
        getattr(config, _STATE_KEY).arrange_capture(config.getoption("hlodiff_dir"),
                                                    config.getini("hlodiff_source_lines"))


def pytest_unconfigure(config) -> None:
    session = getattr(config, _STATE_KEY, None)
    if session is not None:
        session.close()


@pytest.fixture
def hlo_graphs(request):
    """Record the XLA graphs torch_xla compiles inside ``with hlo_graphs.record():`` blocks."""
    from hlodiff.testing.pytest_session import HloGraphs

    session = getattr(request.config, _STATE_KEY)
    if session.capture_error or session.paths is None:
        pytest.skip(session.capture_error or "hlodiff capture is not configured")
    return HloGraphs(session, request.node)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    __tracebackhide__ = True  # the marker's failure shows the test and the explanation, not this hook
    marker = item.get_closest_marker("hlo_stable")
    session = getattr(item.config, _STATE_KEY, None)
    if session is None or session.paths is None:
        yield
        return
    recorder = session.start_recorder() if marker is not None else None
    outcome = yield
    error = session.stability_failure(item, marker, recorder, outcome.excinfo)
    if error is None:
        return
    from hlodiff.testing.rerun import with_lines

    config = item.config
    error_with_lines = with_lines(error, nodeid=item.nodeid, rootdir=str(config.rootpath),
                                  inifile=str(config.inipath or "") or None,
                                  lines_on=config.getini("hlodiff_source_lines"),
                                  rerun=config.getini("hlodiff_rerun") and not item.get_closest_marker("hlo_once"),
                                  paths=session.paths, keep_dir=config.getoption("hlodiff_dir"))
    outcome.force_exception(error_with_lines.with_traceback(error.__traceback__))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    session = getattr(config, _STATE_KEY, None)
    for line in session.summary_lines() if session is not None else ():
        terminalreporter.write_line(line)
