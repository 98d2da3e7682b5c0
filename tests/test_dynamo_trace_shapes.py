"""A TORCH_TRACE record that is JSON but not of the shape torch writes (a cut or edited trace, another torch) costs
only itself: a warning naming its file and line, the other records read, never a traceback (the last read of the
ninth stop's change met three such records that raised)."""

from __future__ import annotations

import json

import pytest

from hlodiff.dumps.dynamo_read import read_dynamo_log

_PRE = "V1127 20:16:09.406000 21044 torch/_logging/structured.py:28] "
_GOOD = {"compilation_metrics": {"compile_id": "0/0", "co_name": "forward", "co_filename": "/p/train.py",
                                 "co_firstlineno": 9}}


@pytest.mark.parametrize("bad", [
    {"str": ["a.py", "x"]},                                                     # a file id that is no number
    {"dynamo_start": [1], "frame_id": 0, "frame_compile_id": 0, "attempt": 0},  # a stack that is no mapping
    {"compilation_metrics": {"compile_id": "0/1", "co_name": "f", "co_filename": "/p/t.py",
                             "co_firstlineno": "abc"}},                         # a line that is no number
])
def test_a_record_of_another_shape_is_skipped_with_a_warning_and_the_rest_is_read(tmp_path, bad):
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    path.write_text("\n".join([_PRE + json.dumps(bad), _PRE + json.dumps(_GOOD)]) + "\n")
    warnings = []
    log = read_dynamo_log(str(path), warnings)
    assert [(w.line, "unexpected shape" in w.message) for w in warnings] == [(1, True)]
    assert "forward" in [c.function for c in log.compiles]  # the record after it is read
