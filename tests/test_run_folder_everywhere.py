"""Every command reads a run folder as explain-recompile does (the new-user review of 2026-11-27, F12): `compare`
and `fingerprint` refused a folder holding a save file and its logs ("pass that file instead") that
`explain-recompile`, `cost` and `inspect` read."""

from __future__ import annotations

import json

from helpers import FIXTURES, cli

RUN = FIXTURES / "torch_xla" / "metric_even_steps"  # graphs.hlo.0 beside its logs
RECORD = FIXTURES / "scenarios" / "torch_xla" / "cosine_to_zero" / "record"


def test_compare_and_fingerprint_read_a_run_folder_as_its_save_file():
    for command in ("compare", "fingerprint"):
        folder = json.loads(cli(command, RUN, "--json", codes=(0, 1)).stdout)
        file = json.loads(cli(command, RUN / "graphs.hlo.0", "--json", codes=(0, 1)).stdout)
        assert folder == file, command


def test_compare_reads_a_record_folder():
    doc = json.loads(cli("compare", RECORD, "--json", codes=(0, 1)).stdout)
    assert doc["graphs"] == 7 and len(doc["comparisons"]) == 1
