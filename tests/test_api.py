"""The library entry points behind each command (hlodiff.api): a result the CLI only has to show, and what the
CLI shows is that result (its --json body, its exit status)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from helpers import FIXTURES
from hlodiff import api
from hlodiff.cli import main
from hlodiff.errors import HlodiffError, failure_line

BATCH = FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0"
RANKS = FIXTURES / "torch_xla" / "ranks_batch" / "graphs.hlo"


def _cli(*args: str):
    result = CliRunner().invoke(main, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_compare_dump_is_compare_of_one_dump():
    """batch_shape: five steps of one graph, then a short last batch; only that last graph is a change, against the one before it."""
    sequence = api.compare_dump(str(BATCH))
    status, doc = _cli("compare", str(BATCH))
    assert (sequence.graphs, len(sequence.steps)) == (doc["graphs"], len(doc["comparisons"])) == (6, 1)
    assert [s.ref[-2:] for s in (sequence.steps[0].left, sequence.steps[0].right)] == ["#4", "#5"]
    assert sequence.costs == [None] and status == sequence.exit_code == 1
    costed = api.compare_dump(str(BATCH), cost=True)
    assert costed.costs[0] is not None and costed.costs[0]["delta"] is not None
    assert costed.to_json()["comparisons"][0]["causes"] == doc["comparisons"][0]["causes"]


def test_fingerprints_are_equal_exactly_for_the_cache_hits():
    prints = api.fingerprint_refs([str(BATCH)])
    assert len({p.canonical.fingerprint for p in prints[:5]}) == 1
    assert prints[5].canonical.fingerprint != prints[0].canonical.fingerprint
    status, doc = _cli("fingerprint", str(BATCH))
    assert status == 0 and doc["graphs"] == [p.to_json() for p in prints]
    one = api.fingerprint_refs([f"{BATCH}#5"])
    assert [p.record.ref for p in one] == [prints[5].record.ref]


def test_inspect_paths_gives_a_run_or_a_job():
    run = api.inspect_paths([str(BATCH)])
    assert run.job is None and [s.compiled for s in run.summaries] == [True, False, False, False, False, True]
    assert _cli("inspect", str(BATCH))[1]["graphs"] == run.to_json()["graphs"]
    job = api.inspect_paths([str(RANKS)]).job
    assert job is not None and job.ranks == [0, 1] and job.divergence
    assert _cli("inspect", str(RANKS))[1]["divergence"] == job.to_json()["divergence"]


def test_job_specs_and_exit_code_for_several_ranks():
    assert api.job_specs([str(BATCH)]) is None
    specs = api.job_specs([str(RANKS)])
    assert [s.rank for s in specs] == [0, 1]
    from hlodiff.jobs import explain_job

    status, doc = _cli("explain-recompile", str(RANKS))
    assert api.job_exit_code(explain_job(specs)) == status == 1 and doc["divergence"]


def test_cost_paths_is_the_cost_document():
    warnings: list = []
    run = api.cost_paths([str(BATCH)], warnings=warnings)
    status, doc = _cli("cost", str(BATCH))
    assert status == 0 and {k: v for k, v in doc.items() if k in run.to_json()} == run.to_json()
    assert doc["warnings"] == [str(w) for w in warnings]


@pytest.mark.parametrize(("exc", "line", "status"), [
    (HlodiffError("bad shape", path="a.hlo", line=3, col=7), "a.hlo:3:7: error: bad shape", 2),
    (KeyboardInterrupt(), "hlodiff: interrupted", 130),
    (MemoryError(), "hlodiff: error: out of memory", 2),
    (RecursionError(), "hlodiff: error: input nested too deeply to read", 2),
    (PermissionError(13, "Permission denied", "/run/x"), "/run/x: error: Permission denied", 2),
    (ValueError("boom"), "hlodiff: internal error: ValueError: boom (a bug in hlodiff; rerun with HLODIFF_DEBUG=1 "
                         "and report it)", 3),
])
def test_each_failure_is_one_line_and_a_status(exc, line, status, monkeypatch):
    monkeypatch.delenv("HLODIFF_DEBUG", raising=False)
    assert failure_line(exc) == (line, status)


def test_a_bug_keeps_its_traceback_with_hlodiff_debug(monkeypatch):
    monkeypatch.setenv("HLODIFF_DEBUG", "1")
    assert failure_line(ValueError("boom")) is None and failure_line(MemoryError()) is not None
