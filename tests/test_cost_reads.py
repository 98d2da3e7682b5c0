"""Boundaries from `reads=` on report headers (what `hlodiff record` writes), read without torch_xla: the committed
pipeline fixture's reports, each header given the reads the fixture script's own probe of torch_xla recorded.
tests/test_record_boundaries.py makes the same check on a real recording."""

from __future__ import annotations

import re
import shutil

import pytest

from helpers import FIXTURES, cli_json, truth_of

MB2 = FIXTURES / "torch_xla" / "pipeline" / "mb2"


def with_reads(tmp_path, reads_of) -> str:
    """A copy of the mb2 fixture whose n-th report header carries ``reads=<reads_of(n)>``."""
    folder = tmp_path / "mb2"
    shutil.copytree(MB2, folder)
    report = folder / "tensors_report.txt"
    text = re.sub(r"^## SYNC (\d+)(.*)$", lambda m: f"## SYNC {m[1]}{m[2]} reads={reads_of(int(m[1]))}",
                  report.read_text(), flags=re.M)
    report.write_text(text)
    return str(folder / "graphs.hlo.0")


def crossings(doc: dict) -> set[tuple[int, int, int]]:
    return {(int(b["from"].rsplit("#", 1)[1]), int(b["to"].rsplit("#", 1)[1]), t["id"])
            for b in doc["boundaries"] for t in b["tensors"]}


def test_reads_name_every_crossing_the_script_recorded(tmp_path):
    probes = truth_of(MB2)["probes"]
    doc = cli_json("cost", with_reads(tmp_path, lambda n: ",".join(map(str, probes[n]["reads"]))), codes=(0,))
    made = {i: p["entry"] for p in probes for i in p["computes"]}
    truth = {(made[i], p["entry"], i) for p in probes for i in p["reads"] if made.get(i, p["entry"]) < p["entry"]}
    assert truth and truth <= crossings(doc)
    assert all(t["evidence"] == "read" for b in doc["boundaries"] for t in b["tensors"])
    # the accumulated gradients: what the first backward computed crosses into the second backward
    assert {(1, 3, i) for i in probes[1]["computes"]} <= crossings(doc)


@pytest.mark.parametrize("bad", ["²", "9" * 5000, "abc", "--7", "1,x"])
def test_a_reads_word_that_is_not_ids_is_ignored_with_a_warning(tmp_path, bad):
    plain = cli_json("cost", str(MB2 / "graphs.hlo.0"), codes=(0,))
    doc = cli_json("cost", with_reads(tmp_path, lambda n: bad), codes=(0,))
    assert crossings(doc) == crossings(plain)
    assert any("reads= that is not a list of tensor ids" in w for w in doc["warnings"])
