"""Lines where the value is made or enters the graph, then where it is used (issue 19, item 3), on real fixtures:
each test reads the located line from the fixture's truth.json."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import FIXTURES
from hlodiff.cli import main


def _explain(*args: str) -> dict:
    result = CliRunner().invoke(main, ["explain-recompile", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def _truth(*parts: str) -> dict:
    return json.loads(FIXTURES.joinpath(*parts, "truth.json").read_text())


def test_reordered_outputs_take_the_proto_stacks_of_their_defining_instructions():
    """Metric callbacks run in a shuffled order: a pure reordering whose HLO text names only torch's lines. The
    protos' stacks of the moved outputs meet at the line that runs the callbacks; that line comes first, never
    "no captured stack reaches your code"."""
    truth = _truth("torch_xla", "metric_callbacks_order")
    dump = FIXTURES / "torch_xla" / "metric_callbacks_order" / "dump"
    text = next(dump.glob("module_0003*before_optimizations.txt")).read_text()
    assert f'{truth["user_file"]}" source_line={truth["user_line"]}' not in text  # the text alone cannot say it
    doc = _explain(str(dump))
    assert len(doc["recompilations"]) == len(truth["compilations"]) - 1
    for recompilation in doc["recompilations"]:
        [cause] = [c for c in recompilation["causes"] if c["kind"] == truth["cause"]]
        first = cause["locations"][0]
        assert first["file"].endswith("/" + truth["user_file"]) and first["line"] == truth["user_line"]
        assert not cause.get("hint")
