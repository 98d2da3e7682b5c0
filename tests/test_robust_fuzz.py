"""Seeded, bounded fuzzing of real dumps through the CLI: truncation at any offset, mutation, hostile insertions.

Every run must end with exit 0/1 and the right graphs, or exit 2 with exactly one error line; never modify its input
(not even when told to write the report over it); and stay within a memory bound. The limits are lowered through
their environment variables so the hostile cases (a never-ending body, a huge line, endless frames or blank lines)
are reached in a few hundred KB.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import FIXTURES, cli, cli_json
from test_fuzz_parser import mutate, mutation

SAVE_FILES = [FIXTURES / "torch_xla" / name / "graphs.hlo.0" for name in ("metric_even_steps", "lr_constant")]
SAVE_TEXTS = [p.read_bytes() for p in SAVE_FILES]
LIMITS = {"HLODIFF_MAX_LINE_BYTES": "64K", "HLODIFF_MAX_GRAPH_BYTES": "512K", "HLODIFF_MAX_HEADER_BYTES": "64K",
          "HLODIFF_MAX_BLANK_LINES": "2000", "COLUMNS": "200"}
RSS_GROWTH_MB = 150


ORIGINAL = {}


def original(index: int) -> list[tuple[int, str]]:
    """(index, fingerprint) of every graph of an unmodified source, computed once."""
    if index not in ORIGINAL:
        graphs = cli_json("inspect", SAVE_FILES[index], codes=(0,), env=LIMITS)["graphs"]
        ORIGINAL[index] = [(g["index"], g["fingerprint"]) for g in graphs]
    return ORIGINAL[index]


def entry_ends(data: bytes) -> list[int]:
    """Byte offset just past each entry's ``## END_GRAPH`` line."""
    return [m.end() for m in re.finditer(rb"^## END_GRAPH\n", data, re.M)]


def entry_starts(data: bytes) -> list[int]:
    return [m.start() for m in re.finditer(rb"^\[ScheduleSyncTensorsGraph\]", data, re.M)]


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux)
        return True
    except OSError:
        return False


def _peak_and_current() -> tuple[int, int]:
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                key, value = line.split(":")
                values[key] = int(value.split()[0]) // 1024
    return values["VmHWM"], values["VmRSS"]


def check(path: Path, command: str) -> object:
    """Run one command on ``path``; the invariants that hold whatever the input."""
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    measured = _reset_peak()
    start_rss = _peak_and_current()[1]
    args = {"inspect": ["inspect", "--json"], "compare": ["compare", "--json"],
            "explain": ["explain-recompile", "--json", "--html", str(path.parent / "report.html")],
            "explain-over-input": ["explain-recompile", "--html", str(path)]}[command]
    result = cli(*args, str(path), env=LIMITS)
    if measured:
        peak = _peak_and_current()[0]
        assert peak - start_rss < RSS_GROWTH_MB, f"{command}: RSS grew by {peak - start_rss} MB"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the input was modified"
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    if result.exit_code == 2:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and ": error: " in lines[0], result.stderr
    if command == "explain-over-input":
        assert result.exit_code == 2 and "refusing to write" in result.stderr
    return result


def write(tmp: str, data: bytes, gz: bool) -> Path:
    path = Path(tmp) / "graphs.hlo.0"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


_settings = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@_settings
@given(st.integers(0, len(SAVE_FILES) - 1), st.floats(0, 1), st.booleans())
def test_truncated_dump_keeps_every_complete_graph(index, where, gz):
    data = SAVE_TEXTS[index]
    cut = int(where * len(data))
    truncated = data[:cut]
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, truncated, gz)
        result = check(path, "inspect")
        complete = sum(1 for end in entry_ends(data) if end <= cut)
        begun = sum(1 for start in entry_starts(data) if start < cut)
        if result.exit_code == 2:
            assert complete == 0 and (begun <= 1), result.stderr  # nothing whole to show
            return
        got = [(g["index"], g["fingerprint"]) for g in json.loads(result.stdout)["graphs"]]
        assert complete <= len(got) <= begun
        assert got[:complete] == original(index)[:complete]
        if len(got) < begun:  # a graph was begun and not shown: the user is told
            assert json.loads(result.stdout)["warnings"], "a begun graph vanished without a warning"


def _hostile(kind: str, size: int) -> bytes:
    if kind == "long line":
        return b"  %x = f32[] constant(0)" + b"0" * size + b"\n"
    if kind == "blank lines":
        return b"\n" * size
    if kind == "frame lines":
        return b"  <module> (/home/user/project/train.py:1)\n" * (size // 40)
    if kind == "body":
        return b"  %c.1 = f32[] constant(0), metadata={op_type=\"aten__add\"}\n" * (size // 58)
    if kind == "bom":
        return b"\xef\xbb\xbf"
    if kind == "ansi":
        return b"\x1b[2J\x1b]0;owned\x07"
    return b"\r"


@_settings
@given(st.integers(0, len(SAVE_FILES) - 1),
       st.sampled_from(["long line", "blank lines", "frame lines", "body", "bom", "ansi", "cr"]),
       st.integers(1_000, 1_200_000), st.floats(0, 1), st.booleans(),
       st.sampled_from(["inspect", "compare", "explain"]))
def test_hostile_insertions_give_a_result_or_one_error(index, kind, size, where, gz, command):
    data = SAVE_TEXTS[index]
    starts = entry_starts(data) + [len(data)]
    line_start = starts[int(where * (len(starts) - 1))]  # an entry boundary: the graphs before it are untouched
    anchor = {"frame lines": b"TensorsGraphInfo:\n", "body": b"## BEGIN_GRAPH\n"}.get(kind)
    at = line_start
    if anchor is not None and data.find(anchor, line_start) >= 0:  # inside the entry's header, or its HLO
        at = data.find(anchor, line_start) + len(anchor)
        if kind == "body":
            at = data.index(b"\n", at) + 1  # after the HloModule line
    mutated = data[:at] + _hostile(kind, size) + data[at:]
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, mutated, gz)
        result = check(path, command)
        if command == "inspect" and result.exit_code == 0:
            before = sum(1 for s in entry_starts(data) if s < line_start)
            got = [(g["index"], g["fingerprint"]) for g in json.loads(result.stdout)["graphs"]]
            assert got[:before] == original(index)[:before]


@_settings
@given(st.integers(0, len(SAVE_FILES) - 1), st.lists(mutation, min_size=1, max_size=3), st.booleans(),
       st.sampled_from(["inspect", "explain", "explain-over-input"]))
def test_mutated_dump_never_loses_graphs_silently(index, steps, gz, command):
    text = mutate(SAVE_TEXTS[index].decode(), steps)
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, text.encode(), gz)
        result = check(path, command)
        if command == "inspect" and result.exit_code == 0:
            doc = json.loads(result.stdout)
            headers = len(re.findall(r"^\[ScheduleSyncTensorsGraph\]\s*$", text, re.M))
            said = sum(1 for w in doc["warnings"] if re.search(r"skipped|cut off|no Graph Hash", w))
            assert len(doc["graphs"]) + said >= headers, (len(doc["graphs"]), said, headers, doc["warnings"])


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
def test_memory_probe_works():
    assert _reset_peak()
    peak, current = _peak_and_current()
    assert peak >= current > 0
