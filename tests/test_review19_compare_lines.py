"""New-user review 19, F7: `compare A#0 A#1` on a `hlodiff record` folder said "in library code .../sgd.py:375"
where `explain-recompile` on the same folder named the user's `opt.step()` line. Both now run one helper
(hlodiff.explain.pair_lines.locate_lines): compare on two graphs of one run folder with live-tensor reports
gives the same line; a comparison of graphs from two folders, or of a dump with no reports, is left as it was."""

from __future__ import annotations

import shutil

from helpers import FIXTURES, cli_json

RECORD = FIXTURES / "scenarios" / "torch_xla" / "cosine_to_zero" / "record"


def _constant(body):
    return next(c for c in body["causes"] if c["kind"] == "constant")


def test_compare_names_the_users_line_explain_recompile_names():
    explained = cli_json("explain-recompile", str(RECORD), codes=(0, 1))
    line = explained["headline"]["location"]
    compared = _constant(cli_json("compare", f"{RECORD}#0", f"{RECORD}#6", codes=(1,)))
    assert compared["locations"] and compared["locations"][0]["line"] == line["line"] == 18
    assert compared["locations"][0]["file"].endswith("cosine_to_zero.py")


def test_lookalike_without_reports_compare_still_says_what_explain_recompile_says(tmp_path):
    """The same dump without its live-tensor report. Since review 21 (F2) `compare A#i A#j` of one run takes the
    lines explain-recompile gives that pair, so the two never disagree: whatever explain-recompile places without
    the report (today the user's line :18, from the run's other evidence), compare places the same."""
    bare = tmp_path / "record"
    shutil.copytree(RECORD, bare)
    (bare / "tensors_report.txt").unlink()
    explained = cli_json("explain-recompile", str(bare), codes=(0, 1))
    compared = _constant(cli_json("compare", f"{bare}#0", f"{bare}#6", codes=(1,)))
    told = explained["headline"]["location"]
    assert [(f["file"], f["line"]) for f in compared["locations"][:1]] == ([(told["file"], told["line"])] if told else [])
