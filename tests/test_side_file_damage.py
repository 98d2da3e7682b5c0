"""Damage to a side file costs only that file (the new-user review of 2026-11-27, F6 and F12): a recording whose
live-tensor report or compile-time table is broken is still explained, with a warning naming the file; an empty
stderr beside a run is no evidence, not an error; a debug log cut short drops none of the dump's modules; a cut
manifest is reported at its line and column; one damage found by two readers is told once."""

from __future__ import annotations

import json
import shutil

from helpers import FIXTURES, cli

RECORD = FIXTURES / "scenarios" / "torch_xla" / "cosine_to_zero" / "record"
DUMP_RUN = FIXTURES / "scenarios" / "torch_xla" / "review_grad_accum"  # its stderr.log is empty, as a clean run's


def _explain(folder) -> tuple[dict, list[str], int]:
    result = cli("explain-recompile", "--json", str(folder), codes=(0, 1))
    doc = json.loads(result.stdout)
    doc["graphs"] = [(g["index"], g["fingerprint"], g["compiled"]) for g in doc["graphs"]]  # paths differ
    return doc, doc["warnings"], result.exit_code


def _compiled(doc) -> int:
    return sum(1 for _, _, compiled in doc["graphs"] if compiled)


def _copy(tmp_path, source=RECORD):
    folder = tmp_path / "rec"
    shutil.copytree(source, folder)
    return folder


def test_a_binary_tensors_report_is_a_warning_and_the_graphs_are_still_explained(tmp_path):
    clean, _, clean_exit = _explain(RECORD)
    folder = _copy(tmp_path)
    (folder / "tensors_report.txt").write_bytes(b"\x89\x00\x13junk" * 500)
    doc, warnings, status = _explain(folder)
    assert status == clean_exit and doc["graphs"] == clean["graphs"]
    assert any("tensors_report.txt: warning: not a text log: binary data" in w and w.endswith("not read")
               for w in warnings), warnings
    assert not any("not an HLO dump" in w for w in warnings)


def test_a_compile_time_row_that_is_no_number_costs_only_its_row(tmp_path):
    folder = _copy(tmp_path)
    table = folder / "compile_times.tsv"
    lines = table.read_text().splitlines(keepends=True)
    cells = lines[1].split("\t")
    cells[2] = "not-a-number"
    table.write_text(lines[0] + "\t".join(cells) + "".join(lines[2:]))
    doc, warnings, status = _explain(folder)
    assert status in (0, 1) and doc["graphs"] == _explain(RECORD)[0]["graphs"]
    assert any("compile_times.tsv:2: warning: compile seconds 'not-a-number' is not a number; row skipped" in w
               for w in warnings), warnings


def test_a_debug_log_cut_short_keeps_every_compiled_module_and_says_so_once(tmp_path):
    clean, _, _ = _explain(RECORD)
    folder = _copy(tmp_path)
    log = folder / "pt_xla_debug.log"
    text = log.read_bytes()
    second = text.index(b"Compilation Analysis: Compilation Cause", text.index(b"Compilation Analysis: Compilation "
                                                                                 b"Cause") + 10)
    log.write_bytes(text[:second + 200])  # killed while writing the second compilation's block
    doc, warnings, _ = _explain(folder)
    assert _compiled(doc) == _compiled(clean) == 2, (doc["graphs"], clean["graphs"])
    assert any("ends before the XLA dump's last" in w for w in warnings), warnings
    assert len(warnings) == len(set(warnings)), warnings
    cut = [w for w in warnings if "block cut off at end of file" in w]
    assert len(cut) == 1, warnings


def test_an_empty_stderr_beside_a_run_is_no_evidence_for_compare_runs(tmp_path):
    assert (DUMP_RUN / "stderr.log").stat().st_size == 0
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(DUMP_RUN, a)
    shutil.copytree(DUMP_RUN, b)
    result = cli("compare-runs", str(a), str(b))
    assert result.exit_code in (0, 1), result.output
    assert "empty file" not in result.output


def test_a_cut_manifest_is_reported_at_its_line_and_column(tmp_path):
    folder = _copy(tmp_path)
    manifest = folder / "hlodiff-record.json"
    manifest.write_text(manifest.read_text()[:150])
    result = cli("explain-recompile", str(folder))
    assert result.exit_code == 2
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"{manifest}:") and ": error: unreadable capture manifest: " in line
    where = line[len(str(manifest)) + 1:].split(":")[:2]
    assert all(part.isdigit() for part in where), line
