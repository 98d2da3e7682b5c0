"""What hlodiff says when there is nothing to explain: a command `record` cannot start, or one that ran
without producing a graph; a JAX log given as the dump. Real subprocesses, no torch_xla needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HLODIFF = str(Path(sys.executable).with_name("hlodiff"))


def _record(tmp_path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run([HLODIFF, "record", "-q", "--out", "run", "--", *command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_a_command_that_cannot_start_is_named_in_the_error(tmp_path):
    proc = _record(tmp_path, "no_such_command_hlodiff")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "no_such_command_hlodiff: error: cannot run the command: No such file or directory"
    assert "<input>" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_command_without_graphs_says_so_and_keeps_its_status(tmp_path):
    proc = _record(tmp_path, sys.executable, "-c", "import sys; print('trained'); sys.exit(3)")
    assert proc.returncode == 3  # the command's status, as documented
    assert "trained" in proc.stdout
    assert "the command produced no graph (it exited with status 3" in proc.stderr
    assert "no dump here" not in proc.stderr and "error" not in proc.stderr


def test_a_jax_log_given_as_the_dump_is_named_like_the_other_side_inputs():
    """Like a PT_XLA_DEBUG log or a live-tensor report given as the dump, JAX's stderr log is called what it is."""
    log = Path(__file__).resolve().parents[1] / "fixtures" / "jax" / "weak_type" / "stderr.log"
    proc = subprocess.run([HLODIFF, "inspect", str(log)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"{log}:1: error: not an HLO dump: this is a JAX compile log (hlodiff reads it "
                                   "as a side input, --jax-log, not as a graph)")


def test_a_debug_log_or_report_given_as_the_dump_says_where_it_goes():
    """The PT_XLA_DEBUG log and the live-tensor report a user kept are named, with the option that takes each."""
    run = Path(__file__).resolve().parents[1] / "fixtures" / "torch_xla" / "metric_even_steps"
    for name, option in (("pt_xla_debug.log", "--debug-log"), ("tensors_report.txt", "--tensors-report")):
        proc = subprocess.run([HLODIFF, "explain-recompile", str(run / name)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith(f"{run / name}:1: error: not an HLO dump") and option in proc.stderr
