"""A cause whose frames are one library's file alone, placed at the user's call into that library (twelfth stop).

HLO text keeps each instruction's innermost frame: RAdam's state names radam.py, the GRU's zero state torch_xla's
gru.py. The user's file on disk shows the call (explain/library_call_lines.py, a test per LIBRARY_ENTRIES row)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json

from hlodiff.diff.model import Cause
from hlodiff.dumps.evidence import Run
from hlodiff.dumps.library_entry_source import library_entry_calls
from hlodiff.explain.library_call_lines import (LIBRARY_ENTRIES, MAX_LINES, _one_entry, entry_of,
                                                place_library_entries)
from hlodiff.hlo.model import SourceFrame

TX = FIXTURES / "scenarios" / "torch_xla"
LIB = "/usr/lib/python3.11/site-packages/"

# one program per row: the class (or function) built and entered once, at line 4
_ROW_CASES = {
    "torch/optim/sgd.py": "opt = torch.optim.SGD(params, lr=0.1)\nloss.backward()\nopt.step()\n",
    "torch/optim/adam.py": "opt = torch.optim.AdamW(params)\nloss.backward()\nxm.optimizer_step(opt)\n",
    "torch/optim/adamw.py": "opt = AdamW(params)\nloss.backward()\nopt.step()\n",
    "torch/optim/radam.py": "opt = torch.optim.RAdam(params, lr=1e-3)\nloss.backward()\nopt.step()\n",
    "torch/optim/rmsprop.py": "opt = torch.optim.RMSprop(params)\nloss.backward()\nopt.step()\n",
    "torch/optim/adagrad.py": "opt = torch.optim.Adagrad(params)\nloss.backward()\nopt.step()\n",
    "torch/optim/swa_utils.py": "swa = AveragedModel(model)\nopt.step()\nswa.update_parameters(model)\n",
    "torch/nn/modules/adaptive.py": "head = nn.AdaptiveLogSoftmaxWithLoss(32, 100, [10]).to(dev)\nh = body(x)\n"
                                    "out = head(h, y)\n",
    "torch_xla/experimental/gru.py": "rnn = torch.nn.GRU(16, 16).to(dev)\nx = emb(t)\nh, s = rnn(x, s)\n",
    "torch/nn/modules/rnn.py": "self.lstm = nn.LSTM(8, 8)\nx = emb(t)\nh, s = self.lstm(x)\n",
    "torch_xla/_patched_functions.py": "opt = make()\nloss.backward()\ntorch.nn.utils.clip_grad_norm_(p, 1.0)\n",
    "torch_xla/distributed/spmd/xla_sharding.py": "mesh = xs.Mesh(ids, (n,), ('data',))\nx = load()\n"
                                                  "xs.mark_sharding(x, mesh, ('data', None))\n",
}


def _calls(tmp_path, entry, body: str) -> list[int]:
    f = tmp_path / "train.py"
    f.write_text("import torch\n" + body)
    return library_entry_calls(str(f), entry.classes, entry.methods, entry.helpers, entry.functions)


def test_every_row_has_its_case():
    assert set(_ROW_CASES) == {e.file for e in LIBRARY_ENTRIES}


@pytest.mark.parametrize("entry", LIBRARY_ENTRIES, ids=lambda e: e.file)
def test_each_row_finds_the_one_call_into_its_library(tmp_path, entry):
    assert _calls(tmp_path, entry, _ROW_CASES[entry.file]) == [4]
    assert entry_of(SourceFrame(LIB + entry.file, 100, None)) is entry


def _row(file):
    return next(e for e in LIBRARY_ENTRIES if e.file == file)


def test_a_scheduler_step_is_no_call_into_the_optimizer(tmp_path):
    body = ("opt = torch.optim.SGD(p, lr=0.1)\nsched = torch.optim.lr_scheduler.LambdaLR(opt, f)\n"
            "opt.step()\nsched.step()\n")
    assert _calls(tmp_path, _row("torch/optim/sgd.py"), body) == [4]


def test_an_optimizer_of_another_class_is_not_counted(tmp_path):
    body = "opt_g = torch.optim.Adam(g)\nopt_d = torch.optim.SGD(d)\nopt_g.step()\nopt_d.step()\n"
    assert _calls(tmp_path, _row("torch/optim/sgd.py"), body) == [5]


def _cause(*files) -> Cause:
    c = Cause(kind="inputs", summary="1 input added")
    c.library_locations = [SourceFrame(LIB + f, 10, None) for f in files]
    return c


def test_generic_frames_beside_a_row_keep_the_row_and_alone_name_none():
    assert _one_entry([_cause("torch/nn/modules/linear.py", "torch/nn/modules/adaptive.py")]).file == \
        "torch/nn/modules/adaptive.py"
    assert _one_entry([_cause("torch/nn/modules/module.py")]) is None
    assert _one_entry([_cause("torch/optim/sgd.py", "torch/nn/modules/adaptive.py")]) is None  # two libraries
    assert _one_entry([_cause("torch/optim/sgd.py", "torch/optim/lr_scheduler.py")]) is None  # a file of no row


class _Graph:
    def __init__(self, file):
        self.trigger = SourceFrame(file, 9, "<module>")
        self.record = type("R", (), {"frames": ()})()
        self._canonical = None


class _Recompilation:
    def __init__(self, file, causes):
        self.graph, self.causes = _Graph(file), causes


@pytest.mark.parametrize("steps, told", [(1, 1), (2, 2), (MAX_LINES + 1, 0)])
def test_a_few_calls_are_all_listed_and_more_name_no_line(tmp_path, steps, told):
    f = tmp_path / "train.py"
    f.write_text("import torch\nopt = torch.optim.SGD(p)\n" + "opt.step()\n" * steps)
    cause = _cause("torch/optim/sgd.py")
    place_library_entries([_Recompilation(str(f), [cause])], Run([]).sources)
    assert [loc.line for loc in cause.locations] == list(range(3, 3 + told))
    assert (cause.hint is None) if told else True


def _headline(name: str) -> dict:
    folder = TX / name
    return cli_json("explain-recompile", folder, "--source-map", f"/home/user/project={TX}", codes=(0, 1))["headline"]


@pytest.mark.parametrize("name, line", [("r24_tx_tbptt_reset_control", 28), ("r20_tx_radam_rect_control", 20),
                                        ("r20_tx_adaptive_softmax", 18), ("rev9_setup_probe", 25),
                                        ("r14_tx_clip_after_warmup", 18), ("r17_tx_spmd_mesh_reorder", 29)])
def test_library_only_captures_are_told_at_the_call_into_the_library(name, line):
    loc = _headline(name)["location"]
    assert loc is not None and loc["line"] == line


@pytest.mark.parametrize("name", ["r20_tx_swa_update_read", "spmd_load_state_mid"])
def test_generic_files_alone_still_name_no_line(name):
    # module.py (SWA's copy, load_state_dict) serves every library: no row. (label_smoothing_on's functional.py frame
    # is placed by round 28's place_library_calls instead: the function holding the line, cross_entropy, called once)
    assert _headline(name)["location"] is None


def test_a_new_weight_shape_read_by_the_optimizer_is_not_placed_at_its_step():
    # runs_torch_width (compare-runs): the weights' new width (HIDDEN 32 -> 64) names only SGD's update frames; the
    # optimizer reads sizes it is given (reads_sizes), so opt.step() is no place for it: the line stays unknown
    runs = FIXTURES / "scenarios" / "runs" / "runs_torch_width"
    doc = cli_json("compare-runs", runs / "run_a", runs / "run_b", "--source-map",
                   f"/home/user/project={FIXTURES / 'scenarios' / 'runs'}", codes=(0, 1))
    assert doc["headline"]["reason"] == "shape" and doc["headline"]["location"] is None


def test_only_libraries_that_make_no_tensors_of_their_own_read_sizes():
    assert {e.file for e in LIBRARY_ENTRIES if not e.reads_sizes} == {
        "torch/nn/modules/adaptive.py", "torch_xla/experimental/gru.py", "torch/nn/modules/rnn.py"}
