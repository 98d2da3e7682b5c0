"""Shared test helpers: where the real inputs live, and what a test that needs ../shared does without it.

The public HLO corpus (`../shared/corpus/`: real dumps, XLA's own parser tests, wild dumps) sits beside this repo
in CI but not in a fresh clone. Tests that read it go through `shared_path`/`need_shared`/`shared_params`, so that
without it they skip with one clear reason, and with `HLODIFF_REQUIRE_SHARED=1` (set by `.ci/run`, which has the
corpus) a missing corpus is a failure instead: a CI run can never pass by skipping them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "hlo"
FIXTURES = ROOT / "fixtures"

SHARED_MARK = "needs ../shared"  # every skip reason of a corpus test starts with it; the CI check below looks for it


def shared_required() -> bool:
    """True under `.ci/run`: a test that needs ../shared must fail, not skip, when it is absent."""
    return os.environ.get("HLODIFF_REQUIRE_SHARED", "") not in ("", "0")


def need_shared(path: Path) -> Path:
    """`path` (inside ../shared) if it exists; else skip the calling test with the reason, or fail it in CI."""
    if path.exists():
        return path
    reason = (f"{SHARED_MARK} (the public HLO corpus checked out beside this repo): {path} not found")
    if shared_required():
        pytest.fail(reason + "; HLODIFF_REQUIRE_SHARED is set, so this is a failure", pytrace=False)
    pytest.skip(reason)


def shared_params(values: list, path: Path) -> list:
    """Parameters read from the corpus at `path`, or one placeholder that skips (or fails in CI) with the reason.

    An empty list would give pytest's own "got empty parameter set" skip, which names no cause and which
    HLODIFF_REQUIRE_SHARED could not turn into a failure."""
    if values:
        return values
    return [pytest.param(None, id="corpus-absent", marks=pytest.mark.needs_shared(path))]


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.hlo"))


@pytest.fixture
def corpus_dir() -> Path:
    return need_shared(CORPUS)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_shared(path): reads the corpus at path in ../shared; skips without it")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs_shared"):
        need_shared(Path(mark.args[0]) if mark.args else SHARED)


def pytest_sessionfinish(session, exitstatus):
    """The net under need_shared: in CI, any skip whose reason names ../shared fails the session."""
    if not shared_required():
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    reasons = [str(r.longrepr) for r in skipped if SHARED_MARK in str(getattr(r, "longrepr", ""))]
    if reasons:
        if reporter is not None:
            reporter.write_line(f"HLODIFF_REQUIRE_SHARED: {len(reasons)} test(s) that need ../shared skipped",
                                red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
