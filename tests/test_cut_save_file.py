"""A save-tensors file cut off mid-graph follows the dump folder's rule (review F10).

A killed run (or a copy cut short) leaves the last graph half written. In a dump folder that graph is a compiled
module: the summary says "1 more compilation whose HLO was cut off" and the exit status is 1. A save-tensors file
cut the same way said it on stderr only and exited 0; a cut gzip save was given a pattern its cut sequence does not
show. Inputs: real cut copies of committed fixtures, cut here into tmp_path: metric_even_steps (6 graphs, A,B
alternating), long_run (60 graphs, gzip, A then B x4 repeating: period 5), xla_dump_extra_op (a dump folder).
"""

from __future__ import annotations

import shutil

from helpers import FIXTURES, cli, cli_json, truth_of

METRIC = FIXTURES / "torch_xla" / "metric_even_steps" / "graphs.hlo.0"
LONG = FIXTURES / "torch_xla" / "long_run" / "graphs.hlo.0"  # gzip data under the save file's own name


def _nth(data: bytes, needle: bytes, n: int) -> int:
    at = -1
    for _ in range(n + 1):
        at = data.index(needle, at + 1)
    return at


def _cut_inside_graph(tmp_path, n: int):
    """The save file cut in the middle of graph ``n``'s HLO, as a killed run leaves it."""
    data = METRIC.read_bytes()
    start, end = _nth(data, b"## BEGIN_GRAPH", n), _nth(data, b"Graph Hash:", n)
    cut = tmp_path / "graphs.hlo.0"
    cut.write_bytes(data[:(start + end) // 2])
    return cut


def test_a_save_file_cut_mid_graph_says_so_in_the_summary_and_exits_1(tmp_path):
    cut = _cut_inside_graph(tmp_path, 2)  # graphs 0 and 1 compiled; graph 2 (a cache hit of 0) is cut
    doc = cli_json("explain-recompile", str(cut), codes=(1,))
    assert doc["unread"] == [f"{cut}#2"]
    assert "1 more graph cut off mid-write (#2, not read" in doc["summary"]
    out = cli("explain-recompile", str(cut), codes=(1,))
    assert "cut off mid-write (#2" in out.stdout.splitlines()[0]  # the summary, not only stderr
    assert "warning: graph 2 cut off mid-write" in out.stderr


def test_a_cut_first_recompilation_alone_still_exits_1(tmp_path):
    """The review's case: what was read compiled once (exit 0 before); the cut graph ran and is unknown."""
    cut = _cut_inside_graph(tmp_path, 1)
    doc = cli_json("explain-recompile", str(cut), codes=(1,))
    assert doc["headline"] is None and doc["unread"] == [f"{cut}#1"]
    assert doc["summary"].startswith("1 graph, 1 compilation, 0 recompilations")


def test_same_rule_as_a_dump_folder_with_a_cut_module(tmp_path):
    shutil.copytree(FIXTURES / "torch_xla" / "xla_dump_extra_op", tmp_path / "run")
    (module,) = (tmp_path / "run" / "dump").glob("module_0001.*before_optimizations.txt")
    text = module.read_text()
    module.write_text(text[:len(text) // 2])
    dump = cli_json("explain-recompile", str(tmp_path / "run"), codes=(1,))
    save = cli_json("explain-recompile", str(_cut_inside_graph(tmp_path, 2)), codes=(1,))
    assert len(dump["unread"]) == len(save["unread"]) == 1
    assert "cut off" in dump["summary"] and "cut off" in save["summary"]


def test_a_save_file_ending_between_graphs_is_a_shorter_run_not_a_cut_one(tmp_path):
    """Look-alike: the file ends right after a whole graph (the run stopped there): nothing is cut."""
    data = METRIC.read_bytes()
    short = tmp_path / "graphs.hlo.0"
    short.write_bytes(data[:_nth(data, b"[ScheduleSyncTensorsGraph]", 4)])
    doc = cli_json("explain-recompile", str(short), codes=(0, 1))
    assert doc["unread"] == [] and "cut off" not in doc["summary"]
    assert doc["families"][0]["pattern"]["name"] == "alternating"  # A,B,A,B read whole


def _cut_gzip(tmp_path, fraction: float):
    data = LONG.read_bytes()
    cut = tmp_path / "graphs.hlo.0.gz"
    cut.write_bytes(data[:int(len(data) * fraction)])
    return cut


def test_a_cut_gzip_save_names_no_pattern_its_cut_sequence_does_not_show(tmp_path):
    """long_run is period 5 (truth: every fifth step keeps the logged loss). Cut after 9 graphs it reads
    A,B,B,B,B,A,B,B,B: one period and a piece. Not 'recurring in no fixed order', not 'warm-up then steady': what
    was seen, and that the file was cut."""
    assert truth_of("torch_xla", "long_run")["steps"] == 60
    cut = _cut_gzip(tmp_path, 0.36)
    doc = cli_json("explain-recompile", str(cut), codes=(1,))
    (family,) = doc["families"]
    assert family["pattern"]["name"] == "cut short"
    assert family["pattern"]["letters"] == "ABBBBABBB"
    assert doc["summary"].split(": ", 1)[1].startswith("cut short: 9 graphs of sync at long_run.py:37 read before "
                                                       "the file was cut off (A,B,B,B,B,A,B,B,B)")
    for claim in ("recurring", "no fixed order", "alternating", "steady", "periodic"):
        assert claim not in doc["summary"]
    four = cli_json("explain-recompile", str(_cut_gzip(tmp_path, 0.30)), codes=(1,))
    assert four["families"][0]["pattern"]["name"] == "cut short"  # A,B,B,B: not 'warm-up only, then steady'


def test_a_period_read_twice_in_full_before_the_cut_is_still_named(tmp_path):
    """Look-alike: cut after 15 graphs, the period shows three times: 'periodic' is what was read."""
    doc = cli_json("explain-recompile", str(_cut_gzip(tmp_path, 0.45)), codes=(1,))
    (family,) = doc["families"]
    assert family["pattern"]["name"] == "periodic" and family["pattern"]["period"] == 5
    assert len(doc["unread"]) == 1


def test_the_whole_gzip_file_is_untouched_by_the_rule():
    doc = cli_json("explain-recompile", str(LONG), codes=(0, 1))
    assert doc["unread"] == [] and doc["families"][0]["pattern"]["name"] == "periodic"
