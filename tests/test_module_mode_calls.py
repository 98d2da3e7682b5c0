"""Which call of a compiled module recompiled on Dynamo's mode guard, read from the source (twelfth stop).

New-user review 17's C2 captured by hand (TORCH_LOGS text log): a compiled ``nn.Sequential`` called in a training
loop (:11), then ``model.eval()`` (:13) and one more call (:15). Dynamo names only torch's wrapper; the guard
``fn._modules['1'].training == True`` says the call that failed it ran with ``training`` False, and the source says
which call that is. Where the source leaves a call's mode open, no line is named (not a guess)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json

from hlodiff.dumps.module_mode_source import MODE_SETTERS, compiled_calls_by_mode

DYN = FIXTURES / "scenarios" / "dynamo"

_HEAD = "import torch\nmodel = torch.nn.Linear(2, 2)\ncmodel = torch.compile(model)\n"


def _modes(tmp_path, body: str) -> dict:
    f = tmp_path / "prog.py"
    f.write_text(_HEAD + body)
    return compiled_calls_by_mode(str(f))


# one case per row of MODE_SETTERS, and the argument forms of train()
_SETTERS = [("model.eval()", False), ("model.train()", True), ("model.train(False)", False),
            ("model.train(mode=True)", True), ("cmodel.eval()", False)]


def test_every_setter_row_has_its_case():
    assert {s.split(".")[1].split("(")[0] for s, _ in _SETTERS} == set(MODE_SETTERS)


@pytest.mark.parametrize("setter, mode", _SETTERS)
def test_each_setter_sets_the_mode_of_the_calls_after_it(tmp_path, setter, mode):
    assert _modes(tmp_path, f"x = cmodel(1)\n{setter}\ny = cmodel(2)\n") == {4: True, 6: mode}


def test_a_mode_from_a_value_is_left_open(tmp_path):
    assert _modes(tmp_path, "for s in range(3):\n    model.train(s % 3 != 2)\n    y = cmodel(s)\n") == {6: None}


@pytest.mark.parametrize("body, open_line", [
    # a setter on some paths only, before the call
    ("for s in range(3):\n    if s == 2:\n        model.eval()\n    y = cmodel(s)\n", 7),
    # a setter later in the loop: the next iteration's call runs in eval mode
    ("for s in range(3):\n    y = cmodel(s)\n    if s == 2:\n        model.eval()\n        v = cmodel(0)\n", 5),
    # a function that never sets the mode: its caller's mode is not read
    ("def evaluate():\n    return cmodel(0)\nmodel.eval()\nevaluate()\n", 5),
])
def test_a_call_whose_mode_the_source_leaves_open_has_none(tmp_path, body, open_line):
    assert _modes(tmp_path, body)[open_line] is None


def test_a_branch_that_restores_the_mode_leaves_the_calls_after_it_in_training(tmp_path):
    # dyn_eval_mode's shape: eval() ... train() in one branch body, the training call after it
    body = ("for s in range(3):\n    if s == 2:\n        model.eval()\n        v = cmodel(0)\n"
            "        model.train()\n        continue\n    y = cmodel(s)\n")
    assert _modes(tmp_path, body) == {7: False, 10: True}


def test_a_function_compiled_by_a_decorator_is_not_read(tmp_path):
    f = tmp_path / "prog.py"
    f.write_text("import torch\nm = torch.nn.Linear(2, 2)\n@torch.compile\ndef fwd(x):\n    return m(x)\n"
                 "m.eval()\nfwd(1)\n")
    assert compiled_calls_by_mode(str(f)) == {}


def _headline(name: str) -> dict:
    return cli_json("explain-recompile", DYN / name, "--source-map", f"/home/user/project={DYN}",
                    codes=(0, 1))


def test_the_by_hand_eval_switch_is_told_at_the_call_after_model_eval():
    doc = _headline("rev17_tc_eval_mode_logs")
    r = doc["dynamo"]["recompiles"][0]
    assert r["located"] == "compiled_call" and r["location"]["line"] == 15
    assert doc["headline"]["location"]["line"] == 15 and doc["headline"]["kind"] == "mode"


def test_a_grad_mode_guard_names_no_call_by_the_training_flag():
    # rev11_dc_train_eval: the guard is GLOBAL_STATE's grad_mode, which says no direction: no line from the flag
    r = _headline("rev11_dc_train_eval")["dynamo"]["recompiles"][0]
    assert "grad_mode" in r["guard"] and r["located"] != "compiled_call"


def test_without_the_source_the_by_hand_capture_still_names_no_line():
    doc = cli_json("explain-recompile", DYN / "rev17_tc_eval_mode_logs", codes=(0, 1))
    assert doc["dynamo"]["recompiles"][0]["location"] is None
