"""New-user review 13 (torch.compile): what the reviewer read wrong or twice, checked on the records they captured."""

from __future__ import annotations

import json

from hlodiff.dumps.dynamo_log import read_dynamo_log

_PRE = "V1127 20:16:09.406000 21044 torch/_logging/structured.py:28] "
_GUARD = ("0/0: T == 4.0" + " " * 49 + "# s = F.log_softmax(student(x) / T, -1)  # "
          "ork/notes/review13/runs/c2_temperature.py:13 in kd_loss")


def _trace(tmp_path, files, definition="/work/notes/review13/runs/c2_temperature.py"):
    """The reviewer's c2_rec TORCH_TRACE records, reduced: the file table, 0/1's recompile reasons, then (as torch
    writes them, after the reasons) 0/1's compilation metrics naming the function's file."""
    lines = [_PRE + json.dumps({"str": [f, i]}) for i, f in enumerate(files)]
    lines.append(_PRE + json.dumps({"artifact": {"name": "recompile_reasons", "encoding": "json"}, "frame_id": 0,
                                    "frame_compile_id": 1, "attempt": 0, "has_payload": "x"}))
    lines += ["\t[", "\t" + json.dumps(_GUARD), "\t]"]
    metrics = {"compile_id": "0/1", "co_name": "kd_loss", "co_filename": definition, "co_firstlineno": 11}
    lines.append(_PRE + json.dumps({"compilation_metrics": metrics}))
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    path.write_text("\n".join(lines) + "\n")
    return read_dynamo_log(str(path))


def test_a_guard_path_torch_cut_in_a_torch_trace_is_the_function_s_file(tmp_path):
    # F3: `hlodiff record` printed "at ork/notes/review13/runs/c2_temperature.py:13" (torch's shorten_filename
    # drops the path shared with torch's folder, "/", and one character more); the metrics name the file whole
    log = _trace(tmp_path, ["/tmp/venv/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py",
                            "/work/notes/review13/runs/c2_temperature.py"])
    (c,) = log.recompiles
    src = c.failures[0].source
    assert (src.file, src.line) == ("/work/notes/review13/runs/c2_temperature.py", 13)
    assert c.failures[0].guard == "T == 4.0"


def test_a_cut_guard_path_is_read_from_the_file_table_only_when_one_file_ends_with_it(tmp_path):
    # the guard's line in a helper file the compiled function calls: the file table names it whole
    helper = "/work/notes/review13/runs/c2_temperature.py"
    log = _trace(tmp_path, ["/work/notes/review13/runs/main.py", helper], definition="/work/notes/review13/runs/main.py")
    assert log.recompiles[0].failures[0].source.file == helper
    # two files end with the cut path: which one is not known, so it stays as torch printed it
    log = _trace(tmp_path, ["/a/work/notes/review13/runs/c2_temperature.py", "/b/work/notes/review13/runs/c2_temperature.py"],
                 definition="/work/notes/review13/runs/main.py")
    assert log.recompiles[0].failures[0].source.file == "ork/notes/review13/runs/c2_temperature.py"
