"""Fault injection: outputs onto nodes that are not files, hostile characters in a dump's metadata.

Every node is made in a temporary folder (never a system path); a device node needs root and is skipped otherwise.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys

import pytest

from helpers import FIXTURES, cli, run_hlodiff

METRIC = FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0"


def one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert ": error: " in lines[0]
    return lines[0]


def _fifo(path):
    os.mkfifo(path)


def _socket(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s  # kept open by the caller so the node stays a live socket


def _device(path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the numbers of /dev/null, made here in tmp


@pytest.mark.parametrize("make, kind", [(_fifo, "FIFO"), (_socket, "socket"), (_device, "character device"),
                                        (os.mkdir, "folder|directory")])
def test_a_report_onto_a_node_that_is_not_a_file_is_refused_and_the_node_kept(tmp_path, make, kind):
    target = tmp_path / "out.html"
    keep = make(target)
    before = os.stat(target)
    result = cli("explain-recompile", str(METRIC), "--html", str(target))
    assert result.exit_code == 2
    line = one_error_line(result)
    assert str(target) in line and re.search(kind, line)
    after = os.stat(target)
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.html"]  # no temporary file left
    if keep is not None:
        keep.close()


def test_a_report_through_a_symlink_to_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    os.symlink("pipe", tmp_path / "link.html")
    result = cli("compare", str(METRIC) + "#0", str(METRIC) + "#1", "--html", str(tmp_path / "link.html"))
    assert result.exit_code == 2 and "FIFO" in one_error_line(result)
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode) and os.path.islink(tmp_path / "link.html")


# -- hostile characters: lone surrogates and bidirectional controls in source_file --------------------------------

HOSTILE_DIR = "/home/\\udc80\\u202eproject/"
"""As the dump writes them: XLA's C escaping of a lone surrogate and of U+202E (right-to-left override)."""


@pytest.fixture
def hostile(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_text(METRIC.read_text().replace('source_file="/home/user/project/', f'source_file="{HOSTILE_DIR}'))
    return path


STRICT_UTF8 = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
"""A terminal that accepts only valid UTF-8: a raw surrogate escape written to it is an error, not a character."""


def _assert_escaped(data: bytes) -> str:
    text = data.decode("utf-8")  # valid UTF-8: no raw 0x80 byte
    assert "\u202e" not in text
    assert "\\udc80\\u202eproject" in text  # shown, escaped
    return text


def test_hostile_characters_are_escaped_on_a_strict_utf8_terminal(hostile):
    proc = run_hlodiff("explain-recompile", "--verbose", str(hostile), env=STRICT_UTF8, columns=200, text=False)
    assert proc.returncode == 1, proc.stderr
    _assert_escaped(proc.stdout)


def test_hostile_characters_are_escaped_in_json(hostile):
    proc = run_hlodiff("explain-recompile", "--json", str(hostile), env=STRICT_UTF8, columns=200, text=False)
    assert proc.returncode == 1, proc.stderr
    _assert_escaped(proc.stdout.replace(b"\\\\", b"\\"))  # the escape text, JSON-encoded
    assert json.loads(proc.stdout)["recompilations"]


def test_hostile_characters_are_escaped_in_html(hostile, tmp_path):
    report = tmp_path / "r.html"
    proc = run_hlodiff("explain-recompile", str(hostile), "--html", str(report), env=STRICT_UTF8, columns=200,
                       text=False)
    assert proc.returncode == 1, proc.stderr
    _assert_escaped(report.read_bytes())


# -- damage is local: NUL tails, over-long lines in side files ----------------------------------------------------

CRASH_TAIL = b"\0" * 8192
"""What a crash leaves at the end of a file on ext4/xfs: the size was written, the data blocks were not."""


def _explain_json(*args) -> tuple[dict, str]:
    result = cli("explain-recompile", "--json", *args, codes=(0, 1))
    doc = json.loads(result.stdout)
    return doc, "\n".join([result.stderr, *doc["warnings"]])  # with --json, warnings are in the document


def _story(doc: dict) -> list:
    return [(r["graph"].rsplit("/", 1)[-1], [c["kind"] for c in r["causes"]]) for r in doc["recompilations"]]


@pytest.mark.parametrize("fixture, damaged, args", [
    ("torch_xla/lr_constant", "graphs.hlo.0", ["graphs.hlo.0"]),  # under 64 KB: the NULs are in the sniffed head
    ("torch_xla/metric_even_steps", "graphs.hlo.0", ["graphs.hlo.0"]),
    ("torch_xla/metric_even_steps", "pt_xla_debug.log", ["graphs.hlo.0", "--debug-log", "pt_xla_debug.log"]),
    ("torch_xla/metric_even_steps", "tensors_report.txt", ["graphs.hlo.0", "--tensors-report", "tensors_report.txt"]),
    ("jax/weak_type", "stderr.log", ["dump", "--jax-log", "stderr.log"]),
    ("jax/weak_type", "dump/stderr.log", ["dump"]),  # found beside the dump by content
])
def test_a_nul_tail_is_a_warning_naming_the_file_and_everything_is_still_read(tmp_path, fixture, damaged, args):
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(FIXTURES / fixture, folder)
    if damaged == "dump/stderr.log":
        shutil.copy(folder / "stderr.log", folder / damaged)
    old = os.getcwd()
    os.chdir(folder)
    try:
        clean, _ = _explain_json(*args)
        with open(damaged, "ab") as f:
            f.write(CRASH_TAIL)
        doc, stderr = _explain_json(*args)
    finally:
        os.chdir(old)
    assert re.search(rf"{re.escape(damaged)}:\d+: warning: the file ends in NUL bytes", stderr), stderr
    assert _story(doc) == _story(clean) and doc["graphs"] == clean["graphs"]


def test_an_over_long_line_in_a_second_debug_log_is_a_warning_and_the_first_is_still_read(tmp_path, monkeypatch):
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(FIXTURES / "torch_xla" / "metric_even_steps", folder)
    clean, _ = _explain_json(str(folder))
    log = (folder / "pt_xla_debug.log").read_text()
    monkeypatch.setenv("HLODIFF_MAX_LINE_BYTES", "64K")  # a 40 MB line in a real log, at test scale
    (folder / "second_pt_xla_debug.log").write_text(log + "x" * 100_000 + "\n" + log)
    doc, stderr = _explain_json(str(folder))
    assert re.search(r"second_pt_xla_debug.log:\d+: warning: line too long .*the rest of this file is skipped", stderr)
    assert _story(doc) == _story(clean)


def test_cost_skips_a_module_cut_mid_write_like_inspect_and_explain(tmp_path):
    import shutil

    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "jax" / "weak_type" / "dump", dump)
    cut = dump / "module_0002.jit_step.cpu_after_optimizations.txt"
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])  # the process was killed while XLA wrote it
    result = cli("cost", "--json", str(dump))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [g["ref"].rsplit("/", 1)[-1] for g in doc["graphs"]] == ["dump#0"]  # the whole module is still costed
    assert any(re.search(rf"{cut.name}:\d+: warning: module 2 skipped", w) for w in doc["warnings"]), doc["warnings"]


def _nested(depth: int, constant: float) -> str:
    """A module whose entry calls a chain of ``depth`` computations (generated: the nesting is the rule tested)."""
    lines = ["HloModule nested, entry_computation_layout={(f32[4]{0})->f32[4]{0}}", "",
             "%c0 (p: f32[4]) -> f32[4] {", "  %p = f32[4]{0} parameter(0)", f"  %k = f32[] constant({constant})",
             "  %b = f32[4]{0} broadcast(f32[] %k), dimensions={}",
             "  ROOT %r = f32[4]{0} add(f32[4]{0} %p, f32[4]{0} %b)", "}", ""]
    for i in range(1, depth):
        lines += [f"%c{i} (p: f32[4]) -> f32[4] {{", "  %p = f32[4]{0} parameter(0)",
                  f"  ROOT %r = f32[4]{{0}} call(f32[4]{{0}} %p), to_apply=%c{i - 1}", "}", ""]
    lines += ["ENTRY %main (x: f32[4]) -> f32[4] {", "  %x = f32[4]{0} parameter(0)",
              f"  ROOT %r = f32[4]{{0}} call(f32[4]{{0}} %x), to_apply=%c{depth - 1}", "}", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("depth", [250, 5000])
def test_nesting_depth_is_the_same_in_every_command(tmp_path, depth):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(_nested(depth, 1.0))
    b.write_text(_nested(depth, 2.0))
    both = tmp_path / "both.hlo"
    both.write_text(a.read_text() + b.read_text())
    assert cli("inspect", str(a)).exit_code == 0
    assert cli("fingerprint", str(a)).exit_code == 0
    assert cli("cost", str(a)).exit_code == 0
    compared = cli("compare", "--json", str(a), str(b), "--html", str(tmp_path / "r.html"))
    assert compared.exit_code == 1, compared.output
    causes = json.loads(compared.stdout)["causes"]
    assert [c["kind"] for c in causes] == ["constant"]
    explained = cli("explain-recompile", str(both))
    assert explained.exit_code == 1 and "constant" in explained.stdout


@pytest.mark.parametrize("command", ["inspect", "explain-recompile", "cost", "compare", "fingerprint"])
def test_a_bad_escape_in_source_file_is_a_warning_naming_the_file_and_line(tmp_path, command):
    path = tmp_path / "graphs.hlo.0"
    clean = (FIXTURES / "torch_xla" / "slice_length" / "graphs.hlo.0").read_text()
    damaged = clean.replace('source_file="/home/user/', 'source_file="/home/\\euser/')
    path.write_text(damaged)
    first = damaged[: damaged.index("\\euser")].count("\n") + 1
    result = cli(command, str(path))
    assert result.exit_code in (0, 1), result.output
    assert f"{path}:{first}: warning: unknown escape" in result.stderr
    assert "error" not in result.stderr
    if command == "explain-recompile":
        path.write_text(clean)
        assert cli(command, str(path)).stdout.splitlines()[0] == result.stdout.splitlines()[0]  # same story


def _limited_memory(nbytes: int):
    def apply():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return apply


@pytest.mark.parametrize("command", ["inspect", "explain-recompile"])
def test_a_sparse_proto_past_the_limit_is_skipped_with_a_warning_naming_it(tmp_path, command):
    import shutil

    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "jax" / "weak_type" / "dump", dump)
    proto = sorted(dump.glob("*before_optimizations.hlo.pb"))[0]
    os.truncate(proto, 3 << 30)  # 3 GB, sparse: costs no disk
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "hlodiff.cli", command, str(dump)], capture_output=True, text=True,
                          env=env, preexec_fn=_limited_memory(1 << 30))  # never read whole under 1 GiB
    assert proc.returncode in (0, 1), proc.stderr
    assert f"{proto}: warning: HLO proto too big to read" in proc.stderr
    assert "2 graphs" in proc.stdout  # the text stays the graph


@pytest.mark.parametrize("node", ["module_0000.jit_step.cpu_after_optimizations-memory-usage-report.txt",
                                  "module_0000.jit_step.before_optimizations.hlo.pb", "hlodiff-record.json",
                                  "stderr2.log"])
def test_a_fifo_under_a_side_files_name_is_never_opened(tmp_path, node):
    """A FIFO blocks whoever opens it for reading: a side file under its name must be passed over, not waited
    for (the run goes on, reading everything else)."""
    import shutil

    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "jax" / "weak_type" / "dump", dump)
    target = dump / node
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    for command in ("inspect", "cost", "explain-recompile"):
        proc = subprocess.run([sys.executable, "-m", "hlodiff.cli", command, str(dump)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        assert "2 graphs" in proc.stdout


@pytest.mark.parametrize("where,gz", [("body", False), ("header", False), ("body", True)],
                         ids=["in a graph's HLO", "in a graph's header", "in a gzip file"])
def test_an_over_long_line_in_a_save_tensors_file_costs_only_its_graph(tmp_path, monkeypatch, where, gz):
    """A line past the limit (a 40 MB constant printed on one line, at test scale) is read past without being
    kept: the graph it is in is skipped with a warning naming the line, every graph before and after it is read."""
    import gzip as gzip_module

    monkeypatch.setenv("HLODIFF_MAX_LINE_BYTES", "64K")
    parts = METRIC.read_bytes().split(b"## BEGIN_GRAPH\n")
    long_line = b"x" * 100_000 + b"\n"
    if where == "body":
        parts[4] = long_line + parts[4]  # the first line of graph #3's HLO
    else:
        head = parts[3].rindex(b"TensorsGraphInfo:")
        parts[3] = parts[3][:head] + long_line + parts[3][head:]  # in graph #3's header
    data = b"## BEGIN_GRAPH\n".join(parts)
    line = data[: data.index(b"x" * 100)].count(b"\n") + 1
    path = tmp_path / "graphs.hlo.0"
    path.write_bytes(gzip_module.compress(data) if gz else data)
    for command in ("inspect", "explain-recompile", "cost"):
        result = cli(command, str(path))
        assert result.exit_code in (0, 1), result.output
        assert f"{path}:{line}: warning: line too long" in result.stderr
        assert "graph 3 is skipped (the graphs after it are read)" in result.stderr
        assert "5 graphs" in result.stdout
    table = cli("inspect", str(path)).stdout
    assert "#2 " in table and "#4 " in table and "#3 " not in table


def test_a_stray_log_quoting_the_debug_log_is_skipped_with_a_warning_and_the_run_is_explained(tmp_path):
    """A file of grepped 'Compilation Analysis:' lines beside a save file is not the run's debug log: it is named
    in a warning and the run is explained from the real log beside it, as without the stray file."""
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(FIXTURES / "torch_xla" / "metric_even_steps", folder)
    clean, _ = _explain_json(str(folder / "graphs.hlo.0"))
    quoted = [line for line in (folder / "pt_xla_debug.log").read_text().splitlines()
              if "Compilation Cause" in line or "user torch_xla.sync" in line][:4]
    (folder / "notes.log").write_text("\n".join(quoted) + "\n")
    doc, stderr = _explain_json(str(folder / "graphs.hlo.0"))
    assert re.search(r"notes\.log: warning: .*no PT_XLA_DEBUG analysis block", stderr), stderr
    assert _story(doc) == _story(clean) and doc["graphs"] == clean["graphs"]


@pytest.mark.parametrize("written", [b"", b"HloMo"])
def test_a_module_file_cut_before_its_first_line_is_named_by_every_command(tmp_path, written):
    """An optimized module XLA had only begun writing (empty, or half its first line) is named in a warning by
    cost and explain-recompile, which go on with the other modules."""
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(FIXTURES / "jax" / "recompile_shape", folder)
    cut = folder / "dump" / "module_0004.jit_step.cpu_after_optimizations.txt"
    cut.write_bytes(written)
    for command in ("cost", "explain-recompile"):
        result = cli(command, str(folder / "dump"), codes=(0, 1))
        assert re.search(r"module_0004\.jit_step\.cpu_after_optimizations\.txt:1: warning: skipped: the file ends "
                         r"before its 'HloModule' line", result.stderr), (command, result.stderr)
