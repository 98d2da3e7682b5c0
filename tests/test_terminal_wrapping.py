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
from hlodiff.render.explain_recompile import render_explanation

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
        # whole, with its indent, though far wider than 60 columns (the headline's own fix once, at the top: its
        # graph's block then says it is the same, review 13 F6)
        assert f"{'':<12}fix: {fix}" in lines or (f"fix: {fix}" in lines
                                                  and f"{'':<12}fix: the same as above" in lines)
    assert any(len(line) > 60 and line.startswith("  attribute ") for line in lines)


def test_terminal_wraps_a_long_fix_under_its_own_text():
    buffer = io.StringIO()
    console = Console(file=buffer, width=60, color_system=None, highlight=False, soft_wrap=False)
    render_explanation(console, explained(discover([DUMP], None, None), []))
    lines = buffer.getvalue().splitlines()
    assert all(len(line.rstrip()) <= 60 for line in lines)
    # the headline's fix, at the top (its graph's block says "the same as above", review 13 F6), and any block's
    # own fix: each wraps under its own text (column 5 at the top, 17 in a block)
    starts = [(i, 5) for i, line in enumerate(lines) if line.startswith("fix: ")]
    starts += [(i, 17) for i, line in enumerate(lines) if line.startswith(f"{'':<12}fix: ")
               and "the same as above" not in line]
    told = set()
    for start, column in starts:
        block = [lines[start]]
        for line in lines[start + 1:]:
            if not line.startswith(" " * column) or line[column] == " ":
                break
            block.append(line)
        assert len(block) > 1  # it did wrap, and every continuation starts under the fix's text
        told.add(" ".join(" ".join(block).split()))
    assert {" ".join(f"fix: {fix}".split()) for fix in _fixes()} <= told
