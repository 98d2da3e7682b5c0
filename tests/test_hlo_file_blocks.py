"""A plain HLO file small and clean enough to read at once is split into the same blocks as the line-by-line scan
makes (module numbers, names, byte ranges, first and last lines): the fast path changes the time, not the answer."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, SHARED
from hlodiff.dumps import hlo_file
from hlodiff.dumps.limits import Limits

_MODULE = "HloModule m{n}\n\nENTRY main {{\n  ROOT c = f32[] constant({n})\n}}\n"
_CASES = {
    "one module": _MODULE.format(n=1),
    "three modules, two blank lines between": "\n\n".join(_MODULE.format(n=n) for n in range(3)),
    "lines before the first module": "// RUN: hlo-opt %s\n// a licence\n" + _MODULE.format(n=1),
    "no final newline": _MODULE.format(n=1).rstrip("\n"),
    "byte-order mark": "\ufeff" + _MODULE.format(n=1) + _MODULE.format(n=2),
    "bare computation list": "add {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n",
    "HloModule inside a line": "// see HloModule m0\n" + _MODULE.format(n=1),
    "HloModule with no name on its line": "HloModule\nm0\n" + _MODULE.format(n=1),
    "CRLF lines": _MODULE.format(n=1).replace("\n", "\r\n") + _MODULE.format(n=2).replace("\n", "\r\n"),
    "empty": "",
}


def _blocks(path, whole: bool, monkeypatch) -> list[tuple]:
    if not whole:
        monkeypatch.setattr(hlo_file, "_whole_file_blocks", lambda path, limits: None)
    blocks = list(hlo_file._blocks(str(path), False, []))
    monkeypatch.undo()
    return [(b.index, b.name, b.start, b.line, b.end, b.last_line) for b in blocks]


@pytest.mark.parametrize("text", list(_CASES.values()), ids=list(_CASES))
def test_small_file_blocks_are_the_scans(text, tmp_path, monkeypatch):
    path = tmp_path / "m.hlo"
    path.write_bytes(text.encode())
    assert hlo_file._whole_file_blocks(str(path), Limits.from_env()) is not None  # the fast path was taken
    assert _blocks(path, True, monkeypatch) == _blocks(path, False, monkeypatch)


def _real_files() -> list:
    files = sorted(FIXTURES.glob("torch_xla/*/graphs.hlo.0"))[:20]
    corpus = SHARED / "corpus"
    files += sorted(corpus.glob("wild/*.hlo*"))[:20] + sorted(corpus.glob("hlo/*.hlo"))[:10]
    return [p for p in files if not hlo_file.is_gzip(str(p))]


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name if p.parent.name in ("wild", "hlo")
                         else p.parent.name)
def test_real_file_blocks_are_the_scans(path, monkeypatch):
    assert _blocks(path, True, monkeypatch) == _blocks(path, False, monkeypatch)


@pytest.mark.parametrize("text", ["HloModule m\n\0\0\0", "HloModule m\rENTRY e {\r  ROOT c = f32[] constant(1)\r}\r"],
                         ids=["NUL tail", "bare CR lines"])
def test_damaged_or_odd_files_take_the_line_by_line_scan(text, tmp_path):
    path = tmp_path / "m.hlo"
    path.write_bytes(text.encode())
    assert hlo_file._whole_file_blocks(str(path), Limits.from_env()) is None


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_more_lines_than_the_blank_line_limit_still_read_at_once(newline, tmp_path, monkeypatch):
    """A big unrolled module has more lines than the blank-line limit; only a run of blank lines that long sends the
    file to the line-by-line scan (which reports the limit at its line)."""
    monkeypatch.setenv("HLODIFF_MAX_BLANK_LINES", "5")
    body = "".join(f"  c{i} = f32[] constant({i}){newline}" for i in range(40))
    text = f"HloModule m{newline}{newline}ENTRY main {{{newline}{body}  ROOT r = f32[] constant(0){newline}}}{newline}"
    path = tmp_path / "m.hlo"
    path.write_bytes(text.encode())
    assert hlo_file._whole_file_blocks(str(path), Limits.from_env()) is not None
    path.write_bytes(text.replace(f"{newline}}}", newline * 6 + "}").encode())
    assert hlo_file._whole_file_blocks(str(path), Limits.from_env()) is None
