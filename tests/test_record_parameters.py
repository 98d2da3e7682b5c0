"""`hlodiff record` names the model's weights as parameters by torch's own word for them: its reports carry the ids
`nn.Parameter` objects hold (`params=`). Live, on the new-user review's program (review F8): SGD without momentum,
`loss.item()` every step, so each step is two graphs, the second a whole forward, backward and update. Before,
the weights crossing from one step's update into the next were called optimizer state (SGD has none)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from helpers import capture_free_env, run_hlodiff

pytestmark = [pytest.mark.xla,
              pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")]

PROGRAM = """\
import torch, torch_xla
import torch.nn as nn

dev = torch_xla.device()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
lossf = nn.CrossEntropyLoss()
running = 0.0
for step in range(6):
    x = torch.randn(8, 16, device=dev)
    y = torch.randint(0, 4, (8,), device=dev)
    opt.zero_grad()
    loss = lossf(model(x), y)
    loss.backward()
    running += loss.item()
    opt.step()
    torch_xla.sync()
"""


def test_sgd_weights_crossing_between_steps_are_parameters(tmp_path):
    (tmp_path / "train.py").write_text(PROGRAM)
    done = run_hlodiff("record", "--out", tmp_path / "rec", "--no-live", "--", sys.executable, "train.py",
                       cwd=tmp_path, env=capture_free_env())
    assert done.returncode == 0, done.stderr[-2000:]
    cost = run_hlodiff("cost", "--json", tmp_path / "rec", env=capture_free_env())
    doc = json.loads(cost.stdout)
    roles = [t["role"] for b in doc["boundaries"] for t in b["tensors"]]
    assert roles and set(roles) == {"parameter"}, roles
    assert sorted(t["shape"] for t in doc["boundaries"][0]["tensors"]) == ["f32[32,16]", "f32[32]", "f32[4,32]",
                                                                         "f32[4]"]
