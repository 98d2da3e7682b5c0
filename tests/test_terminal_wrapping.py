"""Long report lines: piped, a cause or fix stays one line (grep and diff see it whole); on a terminal narrower than
the line it wraps with its continuation lines under its own text, never at column 0 (review item 8).

Input: the real run of fixtures/torch_xla/slice_index.py (a slice bound baked in, a long fix line).
"""

from __future__ import annotations

import io

from rich.console import Console

from helpers import cli, cli_json
from hlodiff.dumps.run_folder import discover
from helpers import explained
from hlodiff.render.terminal import render_explanation

from conftest import FIXTURES

DUMP = str(FIXTURES / "torch_xla" / "slice_index" / "graphs.hlo.0")


def _fixes() -> list[str]:
    doc = cli_json("explain-recompile", DUMP)
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c.get("fix")]
    assert fixes and all(len(f) > 60 for f in fixes)
    return fixes


def test_piped_output_keeps_a_long_cause_and_its_fix_on_one_line():
    result = cli("explain-recompile", DUMP, columns=60)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    for fix in _fixes():
        assert f"{'':<12}fix: {fix}" in lines  # whole, with its indent, though far wider than 60 columns
    assert any(len(line) > 60 and line.startswith("  attribute ") for line in lines)


def test_terminal_wraps_a_long_fix_under_its_own_text():
    buffer = io.StringIO()
    console = Console(file=buffer, width=60, color_system=None, highlight=False, soft_wrap=False)
    render_explanation(console, explained(discover([DUMP], None, None), []))
    lines = buffer.getvalue().splitlines()
    assert all(len(line.rstrip()) <= 60 for line in lines)
    for fix in _fixes():
        start = lines.index(next(line for line in lines if line.startswith(f"{'':<12}fix: ")))
        block = [lines[start]]
        for line in lines[start + 1:]:
            if not line.startswith(" " * 17) or line[17] == " ":
                break
            block.append(line)
        assert len(block) > 1  # it did wrap, and every continuation starts under the fix's text (column 17)
        assert " ".join(" ".join(block).split()) == " ".join(f"fix: {fix}".split())
