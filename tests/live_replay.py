"""The live lines `record` / `watch` print, replayed from a committed capture as a growing run
(fixtures/scenarios/score_live.py): one loader for the tests that read them, instead of a copy of the import dance
in each."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

from conftest import FIXTURES

from hlodiff.render.live import lines


@cache
def score_live():
    """The scorer as a module (it is a script under fixtures/, not a package)."""
    spec = importlib.util.spec_from_file_location("scenario_score_live", FIXTURES / "scenarios" / "score_live.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replay(folder: Path, capture: str) -> list:
    """The live events of the capture in ``folder`` (capture mode ``capture``), which must be followable."""
    events, skipped = score_live().replay(folder, capture)
    assert skipped is None
    return events


def replay_case(case_id: str) -> list:
    """The live events of scenario ``engine/name``, captured as its truth says."""
    engine, name = case_id.split("/")
    truth = score_live().score.local_cases([case_id])[0]["truth"]
    return replay(FIXTURES / "scenarios" / engine / name, truth["capture"])


def printed(events: list) -> list[str]:
    """The lines the events print, in order."""
    return [x for e in events for x in lines(e)]
