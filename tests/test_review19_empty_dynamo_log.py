"""New-user review 19, F6: README's torch.compile recipe (`TORCH_LOGS=recompiles,graph_breaks python train.py >
run/stdout.log 2> run/stderr.log`) leaves a 0-byte stderr.log when Dynamo logs nothing; hlodiff said it found no
Dynamo log. An empty stderr / TORCH_LOGS file beside the dump is now told as empty (Dynamo logged no
recompilation); a run with no such file keeps the words asking for the log."""

from __future__ import annotations

import shutil

import pytest

from helpers import FIXTURES, cli, cli_json
from hlodiff.dumps.run_folder import EMPTY_LOG_WORDS, empty_log_name

CONTROL = FIXTURES / "scenarios" / "dynamo"


def test_the_table_holds_the_rows_tested():
    assert EMPTY_LOG_WORDS == ("stderr", "torch_logs", "dynamo")


@pytest.mark.parametrize("name, taken", [("stderr.log", True), ("torch_logs.txt", True), ("dynamo.log", True),
                                         ("run.err", True), ("stdout.log", False), ("notes.txt", False)])
def test_each_name_row(name, taken):
    assert empty_log_name(name) is taken


def _bridge_run_without_log(tmp_path):
    """dyn_kwarg_control (a torch.compile control) with its Dynamo log left out: its dump and PT_XLA_DEBUG log."""
    source = CONTROL / "dyn_kwarg_control"
    run = tmp_path / "run"
    shutil.copytree(source / "dump", run / "dump")
    shutil.copy(source / "pt_xla_debug.log", run / "pt_xla_debug.log")
    return run


def test_an_empty_stderr_log_is_told_as_empty_not_missing(tmp_path):
    run = _bridge_run_without_log(tmp_path)
    before = cli("explain-recompile", str(run), codes=(0, 1)).stdout.splitlines()[0]
    assert "without Dynamo's log (none found" in before
    (run / "stderr.log").write_text("")
    (run / "stdout.log").write_text("")
    after = cli("explain-recompile", str(run), codes=(0, 1)).stdout.splitlines()[0]
    assert "stderr.log beside the dump is empty" in after and "none found" not in after
    # an empty file does not say TORCH_LOGS was set: the line claims no more than the file shows
    assert "if it was captured with TORCH_LOGS=recompiles,graph_breaks" in after
    assert cli_json("explain-recompile", str(run), codes=(0, 1))["dynamo"]["empty_log"].endswith("stderr.log")


def test_lookalike_an_empty_stdout_alone_keeps_asking_for_the_log(tmp_path):
    run = _bridge_run_without_log(tmp_path)
    (run / "stdout.log").write_text("")
    assert "none found" in cli("explain-recompile", str(run), codes=(0, 1)).stdout.splitlines()[0]
