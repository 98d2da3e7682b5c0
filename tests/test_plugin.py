"""The pytest plugin against real torch_xla 2.9 on the CPU, through pytester in fresh processes."""

from __future__ import annotations

import importlib.util

import pytest

pytest_plugins = ["pytester"]

needs_xla = pytest.mark.skipif(importlib.util.find_spec("torch_xla") is None, reason="torch_xla not installed")

TRAIN = '''
import torch
import torch_xla


def train(steps, metric_every=None, batches=None):
    device = torch_xla.device()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        n = batches[step] if batches else 2
        x = torch.randn(n, 8, device=device)
        y = torch.randn(n, 4, device=device)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if metric_every and step % metric_every == 0:
            metric = (model(x) - y).abs().mean()  # the metric line
        torch_xla.sync()
'''
DATA_LINE = next(i for i, line in enumerate(TRAIN.strip().splitlines(), 1) if "x = torch.randn" in line)
METRIC_LINE = next(i for i, line in enumerate(TRAIN.strip().splitlines(), 1) if "# the metric line" in line)


def run(pytester, *args, lines=True, **env):
    """A pytest run in a fresh process; ``lines``: with the plugin's source lines on (XLA_IR_DEBUG/XLA_HLO_DEBUG)."""
    if lines:
        args = ("-o", "hlodiff_source_lines=true", *args)
    pytester.makepyfile(train=TRAIN)
    for key, value in {"PJRT_DEVICE": "CPU", **env}.items():
        pytester._monkeypatch.setenv(key, value)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


@needs_xla
def test_stable_loop_passes_and_metric_on_even_steps_fails_at_its_line(pytester):
    pytester.makepyfile(test_loop='''
from train import train

def test_stable(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4)
    rec.assert_stable(warmup=1)
    assert len(rec.compilations) == 1 and len(rec.graphs) == 4

def test_metric(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4, metric_every=2)
    rec.assert_stable(warmup=1)
''')
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*1 graph compiled after the first 1 step (warmup=1):*",
        "*alternating*A,B,A,B*",
        "*outputs*removed*",
        f"*at */train.py:{METRIC_LINE}*",
        f"*live tensor id=* f32[] aten::mean from */train.py:{METRIC_LINE}*",  # under its outputs cause
        "*fix: the same as above*",  # review 13 F6: the cause's fix is the headline's, said once
    ])
    result.stdout.fnmatch_lines(["*fix: *a value is kept on some steps only*compute it every step*"])


CALLERS = '''
from train import train

def test_first(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4, metric_every=2)  # first caller
    rec.assert_stable(warmup=1)

def test_second(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4, metric_every=2)  # second caller
    rec.assert_stable(warmup=1)
'''


@needs_xla
def test_a_later_test_s_failure_names_its_own_caller(pytester):
    """The second test's graphs are torch_xla cache hits of the first test's compilations, so their HLO (and its
    stacks) were traced under the first test; the message must still say the helper was called from the second
    test, as its own execution records."""
    pytester.makepyfile(test_callers=CALLERS)
    result = run(pytester)
    result.assert_outcomes(failed=2)
    second = next(i for i, line in enumerate(CALLERS.strip().splitlines(), 1) if "# second caller" in line)
    out = result.stdout.str()
    section = out[out.index("test_second"):]
    assert f"called from test_callers.py:{second} (test_second)" in section, section[-3000:]
    assert "(test_first)" not in section.split("short test summary")[0]
    # graphs are named #N (their temporary folder is gone when this is read), and hlodiff's frames are hidden
    assert "/hlodiff-" not in out and "#N numbers this session's graphs" in out
    assert "def assert_stable" not in out and "def pytest_runtest_call" not in out


@needs_xla
def test_marker_names_the_shape_change(pytester):
    pytester.makepyfile(test_shapes='''
import pytest
from train import train

@pytest.mark.hlo_stable(warmup=1)
def test_last_batch_is_short():
    train(3, batches=[4, 4, 2])

@pytest.mark.hlo_stable
def test_steady():
    train(3)
''')
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    # torch.randn on the device: the batch size enters through the random-bit generator, at the x/y lines.
    result.stdout.fnmatch_lines(["*1 graph compiled after the first 1 step*",
                                 "*shape     shape changed on rng-bit-generator*",
                                 f"*at */train.py:{DATA_LINE}*"])
    assert "attribute" not in result.stdout.str()  # the slice bounds follow the shape: not a second cause


@needs_xla
def test_max_compilations(pytester):
    pytester.makepyfile(test_max='''
from train import train

def test_too_many(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(3, batches=[2, 3, 4])
    rec.assert_max_compilations(1)
''')
    result = run(pytester, lines=False)  # the default: lines off, and the failing test run again with them
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*3 compilations, expected at most 1*",
                                 "*shape*changed*",
                                 f"*at */train.py:{DATA_LINE}*",
                                 "*source lines from a second run of this test*"])
    assert "CallInfo" not in result.stdout.str()  # the failure shows the test's line, not pytest's internals


@needs_xla
def test_snapshot_write_match_mismatch_update_unused(pytester):
    source = '''
from train import train

def test_snap(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(2, batches=[{n}, {n}])
    rec.assert_snapshot()
'''
    pytester.makepyfile(test_snap=source.format(n=2))
    first = run(pytester)
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*hlodiff: wrote 1 snapshot file(s)*"])
    snap = pytester.path / "__hlo_snapshots__" / "test_snap" / "test_snap.hlo"
    stored = snap.read_text()
    assert "// graph 0: fingerprint " in stored and "ENTRY %main {" in stored and "metadata" not in stored

    run(pytester).assert_outcomes(passed=1)
    assert snap.read_text() == stored

    pytester.makepyfile(test_snap=source.format(n=3))
    changed = run(pytester)
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*compiled graphs differ from the snapshot*"])
    report = changed.stdout.str()
    assert "shape" in report and "f32[2,8]{1,0} -> f32[3,8]{1,0}" in report and f"train.py:{DATA_LINE}" in report
    assert "attribute" not in report and "constant " not in report  # consequences of the shape, folded in

    run(pytester, "--hlodiff-update").assert_outcomes(passed=1)
    assert snap.read_text() != stored
    run(pytester).assert_outcomes(passed=1)

    extra = snap.with_name("test_gone.hlo")
    extra.write_text(stored)
    report = run(pytester)
    report.stdout.fnmatch_lines(["*hlodiff: 1 unused snapshot file(s)*", "*test_gone.hlo*"])
    run(pytester, "--hlodiff-update").stdout.fnmatch_lines(["*deleted 1 unused snapshot file(s)*"])
    assert not extra.exists()


@needs_xla
def test_user_set_save_file_is_respected_and_kept(pytester, tmp_path):
    mine = tmp_path / "mine.hlo"
    pytester.makepyfile(test_user='''
from train import train

def test_it(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(2)
    rec.assert_stable()
    assert rec.graphs[0].record.path.endswith("mine.hlo.0")
''')
    result = run(pytester, XLA_SAVE_TENSORS_FILE=str(mine))
    result.assert_outcomes(passed=1)
    assert (tmp_path / "mine.hlo.0").read_text().count("## BEGIN_GRAPH") == 2


@needs_xla
def test_capture_writes_hlo_only_for_compiled_graphs(pytester, tmp_path):
    """The plugin's capture is record's: compiled graphs in XLA's dump (text and proto, XLA's LLVM files removed),
    every execution in the PT_XLA_DEBUG_LEVEL=2 log, no per-step HLO."""
    folder = tmp_path / "capture"
    pytester.makepyfile(test_cheap='''
from train import train

def test_it(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4)
    assert len(rec.graphs) == 4 and len(rec.compilations) == 1
    assert {g.record.kind for g in rec.graphs} == {"executions"}
''')
    result = run(pytester, "--hlodiff-dir", str(folder))
    result.assert_outcomes(passed=1)
    dump = folder / "xla_dump"
    assert len(list(dump.glob("module_*.before_optimizations.txt"))) == 1
    assert len(list(dump.glob("module_*.before_optimizations.hlo.pb"))) == 1
    assert not [p for p in dump.iterdir() if p.suffix in (".ll", ".o", ".mlir")]
    assert (folder / "pt_xla_debug.log").read_text().count("Execution Analysis: Execution Cause") == 4
    assert not list(folder.glob("graphs.hlo*"))


def test_without_torch_xla_fixture_skips_and_dump_helpers_work(pytester):
    """Failure injection: torch_xla made unimportable before the plugin configures."""
    from helpers import FIXTURES

    pytester.makeconftest('import sys\nsys.modules["torch_xla"] = None\n')
    steady = FIXTURES / "torch_xla" / "batch_shape" / "graphs.hlo.0"
    pytester.makepyfile(test_nox=f'''
import pytest
from hlodiff.testing import assert_stable, assert_max_compilations

def test_fixture(hlo_graphs):
    pass

def test_dump_helpers():
    assert_max_compilations({str(steady)!r}, 2)
    with pytest.raises(AssertionError, match="input shape changed"):
        assert_stable({str(steady)!r}, warmup=1)
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*hlo_graphs needs torch_xla*"])


def test_plugin_leaves_unrelated_suites_alone(pytester):
    pytester.makepyfile(test_plain='''
import os

def test_env():
    assert "XLA_SAVE_TENSORS_FILE" not in os.environ
    assert "HLODIFF_TENSORS_REPORT" not in os.environ
    assert "XLA_IR_DEBUG" not in os.environ and "XLA_HLO_DEBUG" not in os.environ  # they cost 1.5x under pytest
''')
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not any(p.name.startswith("hlodiff-") for p in pytester.path.iterdir())


@needs_xla
def test_a_failing_test_names_its_line_by_default_from_a_second_run(pytester):
    """No option set: passing tests run without torch_xla's frame capture, and the failing one is run again with
    it, so its message names the metric's line (hlodiff.testing.rerun)."""
    pytester.makepyfile(test_loop='''
import pytest
from train import train

def test_stable(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4)
    rec.assert_stable(warmup=1)

@pytest.mark.hlo_stable(warmup=1)
def test_metric():
    train(4, metric_every=2)
''')
    result = run(pytester, lines=False)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*at */train.py:{METRIC_LINE}*", "*source lines from a second run of this test*"])


@needs_xla
def test_the_second_run_with_lines_is_kept_under_hlodiff_dir(pytester):
    """--hlodiff-dir keeps the first run's capture, which has no lines (the plugin leaves them off); the second run
    (lines on) is kept beside it, named in the message, and explain-recompile on it names the metric's line (review
    4, F4: "line unknown" on the kept folder while the failure message named lines)."""
    from helpers import cli

    pytester.makepyfile(test_loop='''
import pytest
from train import train

@pytest.mark.hlo_stable(warmup=1)
def test_metric():
    train(4, metric_every=2)
''')
    folder = pytester.path / "kept"
    result = run(pytester, "--hlodiff-dir", str(folder), lines=False)
    result.assert_outcomes(failed=1)
    lines = folder / "with-lines" / "test_metric"
    result.stdout.fnmatch_lines([f"*its capture, with lines: {lines}*"])
    out = cli("explain-recompile", lines, codes=(1,)).stdout
    assert f"train.py:{METRIC_LINE}" in out, out


@needs_xla
def test_a_test_that_must_not_run_twice_says_how_to_get_lines(pytester):
    pytester.makepyfile(test_loop='''
import pytest
from train import train

@pytest.mark.hlo_once
def test_metric(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4, metric_every=2)
    rec.assert_stable(warmup=1)
''')
    result = run(pytester, lines=False)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*this test is not run twice*hlodiff_source_lines=true*"])
    assert f"train.py:{METRIC_LINE}" not in result.stdout.str()


@needs_xla
def test_adam_warm_up_failing_warmup_1_says_to_use_warmup_2(pytester):
    """Review 2, F8: Adam's first step creates its state, so its second step compiles another graph; a check with
    warmup=1 fails, and its message must name the setting that passes (warmup=2), not only 'nothing to fix'. A
    metric on some steps (not a warm-up) gets no such advice."""
    pytester.makepyfile(test_adam='''
import pytest
import torch
import torch_xla
from train import train


def adam(steps):
    device = torch_xla.device()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        model(torch.randn(4, 8, device=device)).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()


def test_adam_warmup_1(hlo_graphs):
    with hlo_graphs.record() as rec:
        adam(4)
    rec.assert_stable(warmup=1)


@pytest.mark.hlo_stable(warmup=2)
def test_adam_warmup_2():
    adam(4)


def test_metric(hlo_graphs):
    with hlo_graphs.record() as rec:
        train(4, metric_every=2)
    rec.assert_stable(warmup=1)
''')
    result = run(pytester, lines=False)
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    adam_part, metric_part = out.split("test_metric", 1)[0], out.split("_ test_metric _", 1)[-1]
    assert "assert_stable(warmup=2) or @pytest.mark.hlo_stable(warmup=2)" in adam_part
    assert "nothing to fix (warmup=1)" not in out
    assert "warmup=2" not in metric_part.split("short test summary")[0]
