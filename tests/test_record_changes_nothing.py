"""`hlodiff record` must never change the program it watches. Its boundary reads ask torch_xla which device data the
coming graph reads (`hlodiff/capture/reads.py`); asking about a view traced the view's IR into that graph at the
hook's line, so the graphs of the syncs it reported differed from the rest, and a steady torch.compile loop
recompiled once the reports stopped (scenario dynamo/dyn_print_outside_control exited 1 under record). Run live:
the steady loop under `record` compiles no graph whose stack names hlodiff, and exits 0."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest

from helpers import FIXTURES, capture_free_env, run_hlodiff

pytestmark = [pytest.mark.xla,
              pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")]

SCENARIO = FIXTURES / "scenarios" / "dynamo"


def test_a_steady_compiled_loop_under_record_stays_steady(tmp_path):
    for name in ("dyn_print_outside_control.py", "_report.py"):
        shutil.copy(SCENARIO / name, tmp_path / name)
    out = tmp_path / "rec"
    done = run_hlodiff("record", "--out", out, "--no-live", "--", sys.executable, "dyn_print_outside_control.py",
                       cwd=tmp_path, env=capture_free_env())
    assert done.returncode == 0, done.stderr[-2000:]
    hlo = "".join(p.read_text(errors="replace") for p in (out / "xla_dump").glob("*before_optimizations.txt"))
    assert hlo and "hlodiff/capture" not in hlo  # no op of any compiled graph was traced by the recorder
    explained = run_hlodiff("explain-recompile", out, env=capture_free_env())
    assert explained.returncode == 0, explained.stdout[:2000]
    assert "reads.py" not in explained.stdout


def test_an_spmd_loop_under_record_keeps_its_buffer_donation(tmp_path):
    """Round 32 (r32_tx_spmd_metric_after_sync_control): under SPMD, asking which device data the coming graph reads
    kept torch_xla from donating the parameters' buffers at every sync the hook read, so the warm-up's graphs
    compiled without donation and the first steady sync (read no more) compiled the step once more with it: 3
    compilations under record where the run alone has 2 (the SPMD second-step warm-up). Under SPMD the reads are
    skipped; the recording shows the run's own 2."""
    name = "r32_tx_spmd_metric_after_sync_control.py"
    shutil.copy(FIXTURES / "scenarios" / "torch_xla" / name, tmp_path / name)
    out = tmp_path / "rec"
    done = run_hlodiff("record", "--out", out, "--no-live", "--", sys.executable, name, cwd=tmp_path,
                       env=capture_free_env())
    assert done.returncode == 0, done.stderr[-2000:]
    assert "step 8 uncached_compiles=2" in done.stdout, done.stdout[-2000:]
    headers = [p.read_text(errors="replace").split("\n", 1)[0]
               for p in sorted((out / "xla_dump").glob("*before_optimizations.txt"))]
    assert len(headers) == 2 and all("buffer_donor" in h for h in headers)  # donated from the first step, as alone
