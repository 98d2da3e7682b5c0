"""Hostile inputs cost bounded memory and time: a located one-line error, never the machine.

The streams are generated, not stored: gzip members are concatenated, so a file of a few MB decompresses to 10 GB
(a gzip bomb of a graph body that never ends, one 10 GB line, 10 GB of frame lines, 10 GB of blank lines). Each
runs in a fresh process whose peak RSS is read back, with the default limits.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import time
import zlib

import pytest

from hlodiff.dumps.limits import Limits

MIB = 1024 * 1024
RSS_BUDGET_MB = 200
"""The documented memory budget for hostile input (docs/limits.md, "Bounded reading")."""

HEADER = (b"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n"
          b"  <module> (/home/user/project/train.py:16)\n\nRoot Hashes: (987fb93999e5ce7ae1459f2437f59ad)\n\n")
BODY_START = b"## BEGIN_GRAPH\nHloModule IrToHlo.8, entry_computation_layout={()->f32[]}\n\n"

# VmHWM, not getrusage: ru_maxrss survives exec, so a child would report the test process's own peak.
_RUN = ("import sys, atexit\n"
        "hwm = lambda: next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
        "atexit.register(lambda: sys.stderr.write('MAXRSS %s\\n' % hwm()))\n"
        "from hlodiff.cli import main\n"
        "sys.argv = ['hlodiff'] + sys.argv[1:]\n"
        "main()\n")


def hlodiff(*args: str, env: dict | None = None) -> tuple[int, list[str], int, float]:
    """Exit status, stderr lines (without the RSS line), peak RSS in MB, seconds."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _RUN, *args], capture_output=True, text=True, timeout=120, env=env)
    seconds = time.monotonic() - start
    lines = proc.stderr.splitlines()
    rss = int(next(line for line in lines if line.startswith("MAXRSS")).split()[1]) // 1024
    return proc.returncode, [line for line in lines if not line.startswith("MAXRSS")], rss, seconds


def gzip_stream(path, head: bytes, block: bytes, total: int) -> None:
    """``head`` then ``block`` repeated up to ``total`` bytes, as concatenated gzip members (compressed once)."""
    member = gzip.compress(block, 9)
    with open(path, "wb") as f:
        f.write(gzip.compress(head))
        for _ in range(total // len(block)):
            f.write(member)


def block_of(line: bytes, size: int = 64 * MIB) -> bytes:
    return line * (size // len(line))


INSTRUCTION = (b'  %add.5 = f32[8,4]{1,0} add(f32[8,4]{1,0} %p0.1, f32[8,4]{1,0} %p1.2), metadata={op_type="aten__add" '
               b'op_name="aten__add" source_file="/home/user/project/train.py" source_line=16}\n')

HOSTILE = {
    "never-ending graph body": (HEADER + BODY_START, block_of(INSTRUCTION),
                                r":\d+: error: graph 0 is too big"),
    "one 10 GB line": (HEADER + BODY_START, block_of(b"a"), r":10:33554433: error: line too long"),
    "10 GB of frame lines": (b"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n",
                             block_of(b"  <module> (/home/user/project/train.py:16)\n"),
                             r":\d+: error: the header of graph 0 never ends"),
    "10 GB of blank lines": (HEADER + BODY_START, block_of(b"\n"), r":\d+: error: more than 100,000 blank lines"),
    "10 GB of blank lines between graphs": (HEADER, block_of(b"\n"), r":\d+: error: more than 100,000 blank lines"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_gzip_stream_is_a_located_error_in_bounded_memory_and_time(tmp_path, name):
    head, block, expected = HOSTILE[name]
    path = tmp_path / "graphs.hlo.0"
    gzip_stream(path, head, block, 10 * 1024 * MIB)
    before = path.read_bytes()
    status, errors, rss, seconds = hlodiff("inspect", str(path))
    assert status == 2 and len(errors) == 1, errors
    assert errors[0].startswith(str(path)) and re.search(expected, errors[0]), errors[0]
    assert "HLODIFF_MAX_" in errors[0]  # names the setting that raises the limit
    assert rss < RSS_BUDGET_MB, f"{name}: peak RSS {rss} MB"
    assert seconds < 60
    assert path.read_bytes() == before


def test_gzip_bomb_is_refused_by_its_expansion_ratio(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    gzip_stream(path, HEADER + BODY_START, block_of(b"a" * (MIB - 1) + b"\n"), 512 * MIB)
    env = {"HLODIFF_MAX_GZIP_RATIO": "2", "HLODIFF_MAX_GRAPH_BYTES": "1G", "PATH": "/usr/bin:/bin"}
    status, errors, _, _ = hlodiff("inspect", str(path), env=env)
    assert status == 2 and "gzip data expands to more than 2x its size" in errors[0], errors
    assert "HLODIFF_MAX_GZIP_RATIO" in errors[0]


def test_a_long_line_in_a_plain_file_is_refused_at_its_line(tmp_path):
    path = tmp_path / "graphs.hlo.0"
    path.write_bytes(HEADER + BODY_START + b"a" * (Limits().line_bytes + 10) + b"\n")
    status, errors, rss, _ = hlodiff("inspect", str(path))
    assert status == 2 and errors == [f"{path}:10:33554433: error: line too long (limit 32 MiB; raise HLODIFF_MAX_LINE_BYTES "
                                      "if this is a real dump)"]
    assert rss < RSS_BUDGET_MB


def test_limits_are_configurable_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODIFF_MAX_LINE_BYTES", "2K")
    assert Limits.from_env().line_bytes == 2048
    monkeypatch.setenv("HLODIFF_MAX_LINE_BYTES", "lots")
    from hlodiff.errors import HlodiffError

    with pytest.raises(HlodiffError) as caught:
        Limits.from_env()
    assert str(caught.value) == "HLODIFF_MAX_LINE_BYTES: expected a positive number of bytes, optionally with K, " \
        "M or G (got 'lots')"


def test_compressed_text_of_a_gzip_graph_round_trips():
    from hlodiff.dumps._io import Packer

    packer = Packer()
    lines = [f"  %x.{i} = f32[] constant({i})\n".encode() for i in range(200_000)]
    for line in lines:
        packer.append(line)
    packed, tail = packer.finish()
    text = b"".join(lines)
    assert zlib.decompress(packed) == text and tail == text[-Packer.TAIL:]
