"""New-user review 17, F4 and F7 (the reviewer's C2: fixtures/scenarios/dynamo/rev17_tc_eval_mode*): a compiled
nn.Module with BatchNorm and Dropout called 4 times in training, then `model.eval()` and a 5th call (:15).

F4: `watch` told Dynamo's recompilation at "step 1" (Dynamo's log is written ahead of torch_xla's), the next line and
`record` at step 4. F7: under `record`, the XLA graph it compiled (BN and dropout outputs removed) was placed at the
training call :11, Dynamo's section at :15: one recompilation, one line.
"""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from helpers import cli_json

from live_replay import printed, replay

DYN = FIXTURES / "scenarios" / "dynamo"


def _replay(name: str, capture: str) -> list[str]:
    return printed(replay(DYN / name, capture))


def _report(capture: str) -> dict:
    return cli_json("explain-recompile", DYN / capture, "--source-map", f"/home/user/project={DYN}", codes=(0, 1))


@pytest.mark.parametrize("name,capture", [("rev17_tc_eval_mode_logs", "e"), ("rev17_tc_eval_mode_record", "c")])
def test_the_eval_call_s_recompilation_is_told_live_at_one_step_the_fifth_call(name, capture):
    said = _replay(name, capture)
    steps = {int(m.group(1)) for x in said for m in [re.match(r"hlodiff: step (\d+)", x)] if m}
    assert any("expected recompilation" in x and "mode" in x for x in said), said
    assert steps == {4}, said  # the 5th call (steps count from 0), never "step 1" first and "step 4" after


def test_the_xla_graph_of_the_eval_recompilation_is_placed_at_the_call_dynamo_names():
    doc = _report("rev17_tc_eval_mode_record/record")
    assert doc["headline"]["location"]["line"] == 15
    (r,) = doc["recompilations"]
    lines_of = {loc["line"] for c in r["causes"] for loc in c["locations"]}
    assert lines_of == {15}, lines_of  # not the training call :11 whose stack the removed outputs kept


def test_the_live_line_of_the_eval_graph_names_the_same_call():
    said = _replay("rev17_tc_eval_mode_record", "c")
    bridge = [x for x in said if "the Dynamo bridge compiled again" in x]
    assert bridge and all("rev17_tc_eval_mode_record.py:15" in x for x in bridge), bridge
    assert not any("rev17_tc_eval_mode_record.py:11" in x for x in said), said


def test_the_eval_recompilation_under_verbose_dynamo_logs_is_the_mode_not_a_tensor():
    # TORCH_LOGS=+dynamo prints guard trees, no recompiles record: eval mode's batch norm reads no
    # num_batches_tracked, so its tensor check is gone from the second tree beside the flipped `training` guard
    doc = _report("rev17_tc_eval_mode")
    assert doc["headline"]["kind"] == "mode"
    assert "one graph per mode" in doc["headline"]["fix"] and "tensor" not in doc["headline"]["fix"]


def test_a_tensor_check_gone_with_no_value_flipped_is_still_the_failure():
    from hlodiff.dumps.dynamo_guards import _failed_guard

    tensor = ("TENSOR_MATCH", "check_tensor(L['x'], Tensor, DispatchKeySet(XLA), torch.float32, device=0, "
                              "requires_grad=False, size=[4, 8], stride=[8, 1])")
    flag = ("TRUE_MATCH", "L['fn'].training == True  # if self.training:  # m.py:3 in forward")
    flipped = ("FALSE_MATCH", "L['fn'].training == False  # if self.training:  # m.py:3 in forward")
    assert _failed_guard([tensor, flag], [flipped]).startswith("fn.training == True")
    assert _failed_guard([tensor, flag], [flag]).startswith("check_tensor(x")  # nothing flipped: as before
