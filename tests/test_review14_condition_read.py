"""New-user review 14, F1: `if loss.item() > 1e6: continue` reads a float mid-step and compares it in Python, so the
graph the read cut hands back a number, not the boolean review 13's row looks for; the fix said "read it after the
sync, or use xm.add_step_closure", which cannot decide whether the step runs. With the source on disk, the read's
line being an `if`/`while` test is the evidence (dumps/python_source.read_in_condition); a read in an `if`'s body,
a print or a logged metric keeps the "read it later" advice. The capture is the reviewer's P2 under `hlodiff
record` (fixtures/scenarios/torch_xla/rev14_p2_item_midstep); the look-alikes map the same capture to a source whose
line 11 reads the value for another use."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json
from hlodiff.dumps.python_source import read_in_condition

SCENARIO = FIXTURES / "scenarios" / "torch_xla" / "rev14_p2_item_midstep"
SCRIPT = SCENARIO.with_suffix(".py")
LATER = ("read it after the sync", "add_step_closure")


def _headline_fix(source_dir) -> str:
    doc = cli_json("explain-recompile", SCENARIO / "record", "--source-map", f"/home/user/project={source_dir}",
                   codes=(0, 1))
    return doc["headline"]["fix"]


def _with_line_11(tmp_path, line: str):
    lines = SCRIPT.read_text().splitlines()
    lines[10] = line
    (tmp_path / SCRIPT.name).write_text("\n".join(lines) + "\n")
    return tmp_path


def test_a_read_compared_in_an_if_decides_the_step_on_the_device():
    fix = _headline_fix(SCRIPT.parent)
    assert "torch.where" in fix and "decides whether the rest of the step runs" in fix
    assert not any(w in fix for w in LATER)


@pytest.mark.parametrize("line", [
    "    if step % 10 == 0: print(loss.item())",           # the read in the body, not the test
    "    print(loss.item())",
    "    metrics = {'loss': loss.item()}; log(metrics)",    # a logged metric
], ids=["if_body", "print", "metric"])
def test_a_read_for_logging_keeps_read_it_later(tmp_path, line):
    fix = _headline_fix(_with_line_11(tmp_path, line))
    assert "read it after the sync" in fix and "torch.where" not in fix


def test_without_the_source_the_capture_alone_keeps_read_it_later(tmp_path):
    # the capture cannot tell a comparison from a logged value: nothing on disk, no claim (tmp_path is empty)
    fix = _headline_fix(tmp_path)
    assert "read it after the sync" in fix


SOURCE = '''\
for step in range(9):
    loss = model(x)
    if loss.item() > 1e6:
        continue
    while loss.item() > 3.0:
        loss = loss / 2
    if step % 10 == 0: print(loss.item())
    if step % 10 == 0:
        print(loss.item())
    if (loss.item()
            > 1e6):
        break
    if loss > 2:
        skip = True
    wandb.log({"loss": loss.item()})
'''


@pytest.mark.parametrize("line, decides", [
    (3, True), (5, True), (10, True), (11, True),   # an if's / while's test, one line or two
    (13, True),                                     # `if loss > 2:` reads the tensor itself to decide
    (7, False), (9, False), (15, False),            # a body's read, on the if's line or below; a logged metric
], ids=lambda v: str(v))
def test_which_reads_are_an_if_or_while_test(tmp_path, line, decides):
    src = tmp_path / "train.py"
    src.write_text(SOURCE)
    assert read_in_condition(str(src), line) is decides


def test_no_file_on_disk_no_condition(tmp_path):
    assert read_in_condition(str(tmp_path / "gone.py"), 3) is False


def test_the_short_last_batch_s_cost_is_told_as_the_batch_s_not_as_padding_s():
    """F6: "pad it to the full batch size (one more compilation, then reused every epoch, ...)" read as what padding
    costs; the cost is the short batch's, as it is, and comes before the fixes (which remove it)."""
    doc = cli_json("explain-recompile", FIXTURES / "scenarios" / "torch_xla" / "rev5_partial_batch_byhand", codes=(1,))
    fix = doc["headline"]["fix"]
    cost, _, remedies = fix.partition("drop_last=True")
    assert "one more compilation" in cost and "as it is" in cost
    assert "pad it to the full batch size" in remedies and "compilation" not in remedies
