"""New-user review 18, F1 and F2 (the reviewer's C2b: fixtures/scenarios/dynamo/rev18_tc_temperature_limit).

F1: a KD temperature annealed as a Python float for 14 steps: Dynamo hit its recompile limit (8) at 0/8 and forward
ran without torch.compile from then on. hlodiff counted 0/8 as a recompilation and never told the limit (its
TORCH_TRACE says it only as ``fail_type: RecompileLimitExceeded``). F2: the refused attempt names no function, and
its guard's path, cut by torch (``ork/notes/...``), was told as a source path with a --source-map hint.
"""

from __future__ import annotations

import json

from conftest import FIXTURES
from helpers import cli, cli_json

from hlodiff.dumps.dynamo_trace import log_of_records
from hlodiff.explain.dynamo_log_findings import recompiles_of

DYN = FIXTURES / "scenarios" / "dynamo"
NAME = "rev18_tc_temperature_limit"
MAP = f"/home/user/project={DYN}"


def test_the_summary_says_dynamo_gave_up_at_its_recompile_limit_and_forward_ran_without_torch_compile():
    first = cli("explain-recompile", DYN / NAME / "record", "--source-map", MAP, codes=(1,)).stdout.splitlines()[0]
    assert "gave up on forward at its recompile limit (8)" in first, first
    assert "without torch.compile" in first, first
    # 0/0..0/7 compiled; 0/8 was refused: 8 compilations, 7 recompilations, not 9 and 8
    assert first.startswith("Dynamo compiled forward 8 times;"), first
    assert "; 7 recompilations (" in first, first


def test_the_refused_attempt_is_no_recompilation_entry_and_json_names_the_limit():
    doc = cli_json("explain-recompile", DYN / NAME / "record", "--source-map", MAP, codes=(1,))
    dynamo = doc["dynamo"]
    assert dynamo["limit_hits"] == [{"compile_id": "0/8", "limit": 8, "function": "forward"}]
    assert "0/8" not in [r["compile_id"] for r in dynamo["recompiles"]]
    assert len(dynamo["recompiles"]) == 7
    assert "recompile limit (8)" in doc["headline"]["fix"]


def _records(cut: str) -> list[tuple[int, dict, list[str]]]:
    """The reviewer's TORCH_TRACE records for frame 0 (review18/runs/c2b): 0/0's metrics name forward's file;
    the refused 0/8 names none, and its reason quotes the guard's line with the path torch cut."""
    config = json.dumps({"recompile_limit": 8})
    whole = "/work/notes/review18/runs/c2b_temperature_long.py"
    reason = (f"0/7: self.temperature == 1.9131876000000005    # s = torch.log_softmax(self.fc(x) / "
              f"self.temperature, dim=-1)  # {cut}:9 in forward")
    return [
        (1, {"compilation_metrics": {"compile_id": "0/0", "co_name": "forward", "co_filename": whole,
                                     "co_firstlineno": 8, "dynamo_config": config},
             "frame_id": 0, "frame_compile_id": 0}, []),
        (2, {"artifact": {"name": "recompile_reasons"}, "frame_id": 0, "frame_compile_id": 8},
         [json.dumps([reason])]),
        (3, {"compilation_metrics": {"compile_id": "0/8", "co_name": None, "co_filename": None,
                                     "co_firstlineno": None, "fail_type": "RecompileLimitExceeded",
                                     "fail_reason": "recompile_limit reached", "dynamo_config": config},
             "frame_id": 0, "frame_compile_id": 8}, []),
    ]


def test_a_trace_tells_the_limit_from_the_refused_attempts_metrics():
    log = log_of_records("t.log", _records("ork/notes/review18/runs/c2b_temperature_long.py"))
    assert log.limit_hits == [("0/8", 8)]


def test_a_guard_path_torch_cut_is_made_whole_from_the_frames_definition_when_the_attempt_names_none():
    log = log_of_records("t.log", _records("ork/notes/review18/runs/c2b_temperature_long.py"))
    # the frame's log shows only the refused attempt: its guard stays, the only one the user gets, with a whole path
    (only,) = recompiles_of(log)
    assert only.function == "forward"
    assert only.location.file == "/work/notes/review18/runs/c2b_temperature_long.py"
    assert only.location.line == 9


def test_a_path_that_ends_another_file_is_not_taken_for_the_definition():
    log = log_of_records("t.log", _records("ork/notes/review18/runs/other.py"))
    (only,) = recompiles_of(log)
    assert only.guard.source.file == "ork/notes/review18/runs/other.py"


# -- F3: a log line left in forward: `.item()` for the log, then Python's logging ------------------------------------

from hlodiff.dumps.dynamo_log import DynamoLog, GraphBreak  # noqa: E402
from hlodiff.explain.dynamo import breaks_of  # noqa: E402
from hlodiff.hlo.model import SourceFrame  # noqa: E402

_CALL = SourceFrame("/p/c3.py", 22, "<module>")
_TORCH = SourceFrame("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1775, "_call_impl")


def _at_user_line(code: str, reason: str = "Unsupported Tensor.item() call with capture_scalar_outputs=False"):
    line = SourceFrame("/p/c3.py", 12, "forward")
    return GraphBreak("0/0", reason, "Dynamo does not support tracing `Tensor.item()`", at=line, call=_CALL,
                      frames=(_CALL, _TORCH, line), codes=("loss = f(cmodel(x), y)", "return forward_call()", code))


def _in_library(code: str, library: SourceFrame):
    line = SourceFrame("/p/c3.py", 12, "forward")
    return GraphBreak("0/0", "Logger not supported for non-export cases", None, at=library, call=_CALL,
                      frames=(_CALL, _TORCH, line, library),
                      codes=("loss = f(cmodel(x), y)", "return forward_call()", code, "if self.isEnabledFor(INFO):"))


_LOGGING = SourceFrame("/usr/lib/python3.11/logging/__init__.py", 1488, "info")
_LOG_LINE = 'log.info("activation norm %.3f", h.norm().item())     # debug logging left in forward'


def _finding(*breaks):
    log = DynamoLog("t.log", "trace")
    log.graph_breaks = list(breaks)
    return breaks_of(log)


def test_an_item_read_for_a_log_call_is_told_to_move_the_log_call_out_not_torch_where():
    (item,) = _finding(_at_user_line(_LOG_LINE))
    assert item.fix_rule == "dynamo_graph_break_item_logged"
    assert "log call" in item.fix and "torch.where" not in item.fix


def test_an_item_read_for_a_branch_keeps_the_torch_where_advice():
    (item,) = _finding(_at_user_line("if h.norm().item() > 1.0:"))
    assert item.fix_rule == "dynamo_graph_break_item" and "torch.where" in item.fix


def test_a_logger_break_entered_from_the_users_log_line_is_told_at_that_line_and_not_as_library_code():
    (logged,) = _finding(_in_library(_LOG_LINE, _LOGGING))
    assert logged.fix_rule == "dynamo_graph_break_log_call"
    assert (logged.location.file, logged.location.line) == ("/p/c3.py", 12)
    assert "nothing recompiles" not in logged.fix and "library code" not in logged.fix


def test_a_library_break_entered_from_a_line_that_logs_nothing_stays_the_librarys():
    adam = SourceFrame("/venv/lib/python3.11/site-packages/torch/optim/adam.py", 210, "step")
    (lib,) = _finding(_in_library("opt.step()", adam))
    assert lib.fix_rule == "dynamo_graph_break_library"
