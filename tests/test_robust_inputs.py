"""Odd but real-world input: negative dimensions, byte-order marks, CR line endings, unreadable modules.

Each gives the right graphs (with a warning where something was skipped) or a one-line error; never silently
fewer graphs.
"""

from __future__ import annotations

import json
import shutil


from helpers import FIXTURES, cli

METRIC = FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0"
JAX_DUMP = FIXTURES / "jax" / "recompile_shape" / "dump"
JAX_MODULE = JAX_DUMP / "module_0002.jit_step.before_optimizations.txt"


def error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and ": error: " in lines[0], result.stderr
    return lines[0]


def test_negative_dimension_is_a_located_error(tmp_path):
    text = JAX_MODULE.read_text()
    lines = text.splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if "%x.1 = f32[6,8]" in line)
    lines[n] = lines[n].replace("f32[6,8]", "f32[-6,8]", 1)
    path = tmp_path / "neg.hlo"
    path.write_text("".join(lines))
    result = cli("inspect", path)
    assert result.exit_code == 2
    line = error_line(result)
    assert line.startswith(f"{path}:{n + 1}:") and "bad dimension '-6'" in line


BOM = b"\xef\xbb\xbf"


def test_byte_order_mark_keeps_graph_zero_of_a_save_tensors_file(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_bytes(BOM + METRIC.read_bytes())
    with_bom, plain = cli("inspect", "--json", path), cli("inspect", "--json", METRIC)
    assert with_bom.exit_code == 0, with_bom.output
    got = [(g["index"], g["fingerprint"]) for g in json.loads(with_bom.stdout)["graphs"]]
    assert got == [(g["index"], g["fingerprint"]) for g in json.loads(plain.stdout)["graphs"]]
    assert len(got) == 6


def test_byte_order_mark_on_a_plain_hlo_file_and_a_dump_module(tmp_path):
    path = tmp_path / "module.hlo"
    path.write_bytes(BOM + JAX_MODULE.read_bytes())
    result = cli("fingerprint", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.split()[0] == cli("fingerprint", JAX_MODULE).stdout.split()[0]
    dump = tmp_path / "dump"
    shutil.copytree(JAX_DUMP, dump)
    target = dump / JAX_MODULE.name
    target.write_bytes(BOM + target.read_bytes())
    assert len(json.loads(cli("inspect", "--json", dump).stdout)["graphs"]) == \
        len(json.loads(cli("inspect", "--json", JAX_DUMP).stdout)["graphs"])


def test_cr_only_line_endings_read_like_lf(tmp_path):
    """XLA's parser reads lines ending in a bare CR (hlo_parser_test.cc, SlashSlashCommentMacEolFormat), so a dump
    saved with classic Mac line endings reads as the same graphs, at the same lines."""
    path = tmp_path / "graphs.hlo.0"
    path.write_bytes(METRIC.read_bytes().replace(b"\n", b"\r"))
    result = cli("inspect", "--json", path)
    assert result.exit_code == 0, result.output
    want = json.loads(cli("inspect", "--json", METRIC).stdout)["graphs"]
    got = json.loads(result.stdout)["graphs"]
    assert [(g["fingerprint"], g["trigger"]) for g in got] == [(g["fingerprint"], g["trigger"]) for g in want]
    assert len(got) > 1
    assert "equal after normalization" in cli("compare", f"{path}#0", f"{METRIC}#0").stdout


def test_unreadable_module_in_a_dump_folder_is_a_warning(tmp_path, monkeypatch):
    from hlodiff.dumps import xla_dump

    dump = tmp_path / "dump"
    shutil.copytree(JAX_DUMP, dump)
    victim = str(dump / JAX_MODULE.name)
    real_open = open

    def failing_open(path, *args, **kwargs):  # failure injection: root can read any file on this machine
        if str(path) == victim:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(xla_dump, "open", failing_open, raising=False)
    result = cli("inspect", "--json", dump)
    doc = json.loads(result.stdout)
    assert any(victim in w and "Permission denied" in w for w in doc["warnings"]), doc["warnings"]


def test_dangling_module_link_in_a_dump_folder_is_a_warning(tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(JAX_DUMP, dump)
    (dump / "module_0009.jit_step.before_optimizations.txt").symlink_to(tmp_path / "gone.txt")
    result = cli("inspect", dump)
    assert result.exit_code == 0
    assert "module_0009.jit_step.before_optimizations.txt: warning: module file skipped" in result.stderr


def test_a_dump_folder_shared_as_an_archive_says_to_extract_it(tmp_path):
    import tarfile
    import zipfile

    folder = FIXTURES / "torch_xla" / "steady"
    with tarfile.open(tmp_path / "run.tar.gz", "w:gz") as tar:
        tar.add(folder, arcname="steady")
    with zipfile.ZipFile(tmp_path / "run.zip", "w") as z:
        z.write(folder / "graphs.hlo.0", "steady/graphs.hlo.0")
    import bz2
    import lzma

    text = (folder / "graphs.hlo.0").read_bytes()
    (tmp_path / "graphs.hlo.0.xz").write_bytes(lzma.compress(text))
    (tmp_path / "graphs.hlo.0.bz2").write_bytes(bz2.compress(text))
    expected = {"run.tar.gz": "a tar archive; extract it first (tar xf FILE) and pass the folder",
                "run.zip": "a zip archive; extract it first (unzip FILE) and pass the folder",
                "graphs.hlo.0.xz": "xz-compressed; decompress it first (xz -dk FILE)",
                "graphs.hlo.0.bz2": "bzip2-compressed; decompress it first (bunzip2 -k FILE)"}
    for name, says in expected.items():
        result = cli("inspect", str(tmp_path / name))
        assert result.exit_code == 2
        assert result.output.strip().splitlines() == [f"{tmp_path / name}: error: not an HLO dump: {says}"]
