"""Dynamo round 28 (docs/accuracy.md): torch's BatchNorm built with ``momentum=None`` breaks the compiled call at
``float(self.num_batches_tracked)``; that library line gets its own row (the module's momentum is the fix, not
torch.where), and every other `.item()` break keeps its row. One test per row, its look-alikes, and the run."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak
from hlodiff.explain.dynamo_log_findings import breaks_of
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
_USER = SourceFrame("/p/t.py", 19, "<module>")


def _item_break(at: SourceFrame, code: str) -> GraphBreak:
    return GraphBreak("0/0", _ITEM, None, at=at, call=_USER, frames=(_USER, at),
                      codes=("loss = F.cross_entropy(model(x), y)", code))


@pytest.mark.parametrize("at, code, rule", [
    (SourceFrame("/usr/lib/python3.11/site-packages/torch/nn/modules/batchnorm.py", 175, "forward"),
     "exponential_average_factor = 1.0 / float(self.num_batches_tracked)", "dynamo_graph_break_bn_cumulative"),
    # look-alikes: a `.item()` in the user's own forward, and another library read of a scalar, keep the item row
    (SourceFrame("/p/model.py", 12, "forward"), "if float(loss) > 4.0:", "dynamo_graph_break_item"),
    (SourceFrame("/usr/lib/python3.11/site-packages/torch/nn/modules/loss.py", 40, "forward"),
     "scale = float(self.count)", "dynamo_graph_break_item"),
])
def test_a_batchnorm_cumulative_average_break_names_the_momentum_and_its_look_alikes_keep_their_row(at, code, rule):
    (b,) = breaks_of(DynamoLog("x", "text", [DynamoCompile("0/0", "forward")], graph_breaks=[_item_break(at, code)]))
    assert b.fix_rule == rule, b.fix_rule
    if rule == "dynamo_graph_break_bn_cumulative":
        assert "momentum" in b.fix and "torch.where" not in b.fix and "capture_scalar_outputs" not in b.fix
        assert b.location.line == 19  # the user's call, never torch's batchnorm.py


def test_a_batchnorm_with_momentum_none_heads_the_report_at_the_call_with_its_momentum():
    """d28_bn_momentum_none: the break in torch's batchnorm.py:175, the user's call :19, one XLA graph per step."""
    doc = json.loads(cli("explain-recompile", str(SCENARIOS / "d28_bn_momentum_none"), "--json",
                         codes=(0, 1)).stdout)
    head = doc["headline"]
    assert head["kind"] == "graph_break" and head["location"]["line"] == 19
    assert "momentum" in head["fix"] and "torch.where" not in head["fix"]
