"""Shared test helpers: where the real inputs live."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "hlo"
FIXTURES = ROOT / "fixtures"


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.hlo"))


@pytest.fixture
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS
