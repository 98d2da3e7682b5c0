"""Live tensors print under the outputs cause they explain, once, not after the last cause (review item 7).

Input: the real torch_xla run of fixtures/torch_xla/item_partial (save file + tensors_report.txt).
"""

from __future__ import annotations


from helpers import FIXTURES, cli

RUN = FIXTURES / "torch_xla" / "item_partial"


def test_live_tensors_sit_between_the_outputs_cause_and_its_fix():
    out = cli("explain-recompile", str(RUN / "graphs.hlo.0"), "--tensors-report",
                                    str(RUN / "tensors_report.txt"))
    lines = out.output.splitlines()
    # the outputs follow from the early read: printed under it ("with it:"), indented
    outputs = next(i for i, line in enumerate(lines) if line.lstrip().startswith("outputs "))
    assert any(line.lstrip() == "with it:" for line in lines[:outputs])
    gone = [i for i, line in enumerate(lines) if "gone output" in line]
    end = next((i for i in range(outputs + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    assert gone and all(outputs < i < end for i in gone)
    assert not any(lines[i].lstrip().startswith("fix:") for i in range(outputs, end))  # the early read's fix is theirs
    texts = [lines[i] for i in gone]
    assert len(texts) == len(set(texts))  # each live tensor once


def test_one_instruction_is_singular():
    """autocast_late's recompilation adds one convert: '1 instruction added', not '1 instructions'."""
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "autocast_late" / "graphs.hlo.0"))
    assert "1 instruction added (convert)" in out.output and "1 instructions" not in out.output
