"""The sync hook's steady fast path (issue 32): once a run repeats itself, a sync that appends to torch_xla's debug
log the very bytes of the sync one period before is followed by comparing bytes instead of parsing them. It must
move the hook's state exactly as the general path does, report at the same syncs, and leave the path at the
first sync that differs. Fed with the execution blocks of a real ``PT_XLA_DEBUG_LEVEL=2`` log (a training graph
and its evaluation graph), no torch_xla needed."""

from __future__ import annotations

import importlib.util
import json
import re
import sys

import pytest

from conftest import FIXTURES
from helpers import capture_free_env, run_hlodiff as hlodiff

from hlodiff.capture import hook

LOG = FIXTURES / "scenarios" / "torch_xla" / "eval_own_sync" / "record" / "pt_xla_debug.log"


def _blocks() -> dict[str, bytes]:
    """The first execution block of each graph hash in the real log, as torch_xla appended it."""
    text = LOG.read_bytes()
    blocks = {}
    for block in re.findall(rb"Execution Analysis: =+\n(?:Execution Analysis: [^\n]*\n)*?Execution Analysis: -+\n"
                            rb"Execution Analysis: =+\n", text):
        h = re.search(rb"Graph Hash: ([0-9a-f]+)", block).group(1).decode()
        blocks.setdefault(h, block)
    assert len(blocks) == 2
    return blocks


def _state(tmp_path, monkeypatch, log, name):
    monkeypatch.setenv(hook.READS_ENV, "1")  # record's setting: the boundaries policy
    monkeypatch.setenv(hook.DEBUG_FILE_ENV, str(log))
    monkeypatch.setenv("HLODIFF_LINES", "auto")
    for var in (hook.SAVE_FILE_ENV, hook.LIVE_TENSORS_ENV, hook.MAX_OUTPUTS_ENV):
        monkeypatch.delenv(var, raising=False)
    state = hook._HookState(str(tmp_path / f"{name}.txt"), 0)
    state.metrics = object()  # torch_xla's counters stand-in: the compilations of the fake run
    state.counter_value = lambda counter: compiles[0] if counter == "UncachedCompile" else 0
    state.apply_lines = lambda: None
    state.reports = []

    def write_report(api):  # what the real one returns: the count to compare after the sync (which reads the log)
        state.reports.append(state.syncs)
        counter, _ = state._counter("xla:0")
        return counter, counter(), 0, -1

    state._write_report = write_report
    return state


compiles = [0]


def _facts(s):
    lines = s.lines
    return (list(s.repeats.recent), s.repeats.period, s.repeats.steady, s.report_next, s.log.executions, s.log.last_executed, s.log.offset,
            lines.syncs, lines.quiet, lines.on, dict(lines.lineless), dict(lines.expected))


def test_the_fast_path_moves_the_state_as_the_general_path_and_leaves_it_at_the_first_difference(tmp_path,
                                                                                                 monkeypatch):
    blocks = _blocks()
    a, b = sorted(blocks)
    log = tmp_path / "pt_xla_debug.log"
    log.write_bytes(b"")
    compiles[0] = 0
    fast, slow = _state(tmp_path, monkeypatch, log, "fast"), _state(tmp_path, monkeypatch, log, "slow")
    taken = []
    take = fast.log.take_repeat
    fast.log.take_repeat = lambda *args: taken.append(fast.syncs) or take(*args)
    # a train/eval run: (A, A, B) repeated, then the eval graph twice in a row, then a compilation, then steady again
    sequence = [a, a, b] * 20 + [a, b, b] + [a, a, b] * 20
    compile_at = len(sequence) - 40
    for n, graph in enumerate(sequence):
        for s in (fast, slow):
            s.syncs = n
            s.before()
        if n == compile_at:
            compiles[0] += 1
        with open(log, "ab") as f:
            f.write(blocks[graph])
        fast.after()
        slow.after()
        slow.quiet = False  # the reference never takes the fast path
        assert _facts(fast) == _facts(slow), n
    assert fast.reports == slow.reports
    # steady after 24 syncs: no report from then on; the fast path on every sync once a period of syncs without a
    # report has left its blocks to compare with (a report's own count reads the block), until the eval graph runs
    # twice (sync 61 differs from the sync a period before: the general path, and reports again from the next)
    assert fast.reports[:24] == list(range(24)) and not set(range(24, 62)) & set(fast.reports)
    assert set(range(27, 62)) <= set(taken) and 62 in fast.reports
    assert compile_at + 1 in fast.reports  # a compilation: the next sync reports
    assert fast.repeats.steady and fast.quiet and taken[-1] == len(sequence) - 1  # steady again, on the fast path


PIPELINE = """
import torch, torch_xla
dev = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 40), torch.nn.ReLU(), torch.nn.Linear(40, 8)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(8, 16).to(dev), torch.randn(8, 8).to(dev)
for step in range(40):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    torch_xla.sync()
    loss.backward()
    torch_xla.sync()
    opt.step()
    torch_xla.sync()
"""


@pytest.mark.xla
@pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")
def test_record_stops_reporting_once_a_real_forward_backward_optimizer_loop_repeats(tmp_path):
    """A real loop under record's defaults: every sync reported while it warms up, none once its three graphs
    repeat (the steady sync's only cost is the cheap check), and cost says the later graphs repeat the named ones."""
    (tmp_path / "loop.py").write_text(PIPELINE)
    run = hlodiff("record", "--out", "run", "--no-live", "--", sys.executable, "loop.py", cwd=tmp_path,
                  env=capture_free_env())
    assert run.returncode == 0, run.stderr[-3000:]
    headers = [int(n) for n in re.findall(r"^## SYNC (\d+) .*reads=", (tmp_path / "run" / "tensors_report.txt")
                                          .read_text(), re.M)]
    assert headers == list(range(len(headers)))  # from the first sync on, without a gap...
    assert 24 <= len(headers) <= 60  # ...until the run repeats (after its warm-up compilations), of 120 syncs
    doc = json.loads(hlodiff("cost", "--json", str(tmp_path / "run")).stdout)
    assert len(doc["graphs"]) == 120
    assert any("ran after the run repeated itself" in w for w in doc["warnings"])
