"""Reports never replace inputs; every error and usage error is one line; dump text cannot drive the terminal."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

from helpers import FIXTURES, cli

METRIC_DIR = FIXTURES / "torch_xla" / "metric_even_steps"
JAX_DUMP = FIXTURES / "jax" / "recompile_shape" / "dump"


def digest(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def run_dir(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(METRIC_DIR, folder)
    return folder


def one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert ": error: " in lines[0]
    return lines[0]


@pytest.mark.parametrize("target", ["graphs.hlo.0", "./sub/../graphs.hlo.0", "ABS", "tensors_report.txt",
                                    "pt_xla_debug.log", "symlink.html", "hardlink.html"])
def test_html_report_never_replaces_an_input(run_dir, target):
    (run_dir / "sub").mkdir()
    os.symlink("graphs.hlo.0", run_dir / "symlink.html")
    os.link(run_dir / "graphs.hlo.0", run_dir / "hardlink.html")
    before = digest(run_dir)
    if target == "ABS":
        target = str(run_dir / "graphs.hlo.0")
    result = cli("explain-recompile", "graphs.hlo.0", "--html", target, cwd=run_dir)
    assert result.exit_code == 2
    assert "refusing to write the HTML report over a file this run reads" in one_error_line(result)
    assert digest(run_dir) == before
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".hlodiff-")]


def test_html_report_never_replaces_a_module_of_a_dump_folder(tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(JAX_DUMP, dump)
    before = digest(dump)
    victim = sorted(dump.glob("module_*before_optimizations.txt"))[0]
    result = cli("explain-recompile", str(dump), "--html", str(victim))
    assert result.exit_code == 2 and "refusing" in one_error_line(result)
    assert digest(dump) == before


def test_html_report_is_written_atomically_beside_the_inputs(run_dir):
    report = run_dir / "report.html"
    report.write_text("old report")
    result = cli("explain-recompile", str(run_dir / "graphs.hlo.0"), "--html", str(report))
    assert result.exit_code == 1
    assert report.read_text().startswith("<!doctype html>")
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".hlodiff-")]


def test_html_report_into_a_missing_folder_is_one_line_and_leaves_nothing(run_dir):
    result = cli("explain-recompile", str(run_dir / "graphs.hlo.0"), "--html", str(run_dir / "nope" / "r.html"))
    assert result.exit_code == 2 and "cannot write the HTML report" in one_error_line(result)


@pytest.mark.parametrize("args, expected", [
    (["compare", "a", "b", "c"], "give one dump, or two graphs"),
    (["explain-recompile", str(METRIC_DIR / "graphs.hlo.0"), "--html", str(METRIC_DIR)], "--html"),
    (["record", "--out", str(METRIC_DIR / "graphs.hlo.0"), "--", "true"], "--out"),
    (["inspect"], "PATHS"),
    (["inspect", "--no-such-option", "x"], "no-such-option"),
])
def test_usage_errors_are_one_line_with_exit_2(args, expected):
    result = cli(*args)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert expected in line and "Usage:" not in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_path_is_one_line(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    shutil.copy(METRIC_DIR / "graphs.hlo.0", path)
    path.chmod(0)
    result = cli("inspect", str(path))
    assert result.exit_code == 2
    one_error_line(result)


def test_file_name_with_a_newline_stays_on_one_line(tmp_path):
    path = tmp_path / "bad\nname.hlo"
    path.write_text("this is not HLO\n")
    result = cli("inspect", str(path))
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "bad\\nname.hlo" in line


def _with_ansi(text: str) -> str:
    evil = "/home/user/\x1b[2J\x1b]0;owned\x07project/\x1b[31mmetric.py"
    return text.replace("/home/user/project/metric_even_steps.py", evil)


def test_control_characters_from_a_dump_are_escaped_on_the_terminal(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_text(_with_ansi((METRIC_DIR / "graphs.hlo.0").read_text()))
    for command in ("inspect", "explain-recompile"):
        result = cli(command, str(path))
        assert result.exit_code in (0, 1), result.output
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[31mmetric.py" in result.stdout
