"""torch.compile(backend="openxla") runs (issue 31): Dynamo's failed guard leads, at the user's line, with a fix that
fits, on real runs captured as users capture them (fixtures/torch_xla/dynamo_*); the bridge's own graphs are never
blamed on the user; graph breaks are their own finding; the control exits 0."""

from __future__ import annotations

import shutil

import pytest

from helpers import FIXTURES, cli, cli_json, truth_of
from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.dumps.dynamo_read import read_dynamo_log
from hlodiff.hlo.model import SourceFrame

DYNAMO = ["dynamo_batch", "dynamo_bf16", "dynamo_float", "dynamo_print", "dynamo_train_eval", "dynamo_steady", "dynamo_record",
          "dynamo_xla_compile"]
LIBRARY = ("site-packages", "torch_xla/", "torch/", "hlodiff/")


def _run(name: str, *extra: str) -> tuple[dict, int]:
    result = cli("explain-recompile", str(FIXTURES / "torch_xla" / name), "--json", *extra, codes=(0, 1))
    import json

    return json.loads(result.stdout), result.exit_code


@pytest.mark.parametrize("name", DYNAMO)
def test_headline_kind_line_fix_and_exit_status_follow_the_truth(name):
    truth = truth_of("torch_xla", name)
    doc, status = _run(name)
    assert status == truth["exit_status"], doc["summary"]
    head = doc["headline"]
    if truth["headline"] is None:
        assert head is None, head
        return
    assert head["kind"] == truth["headline"], head
    where = head["location"]
    assert where is not None and where["file"].endswith(truth["user_file"])
    assert where["line"] in {truth["user_line"], truth.get("origin_line")}, where
    fix = head["fix"] or ""
    for word in truth["dynamo_fix_must"]:
        assert word in fix, (word, fix)
    for word in truth["dynamo_fix_must_not"]:
        assert word not in fix, (word, fix)


@pytest.mark.parametrize("name", DYNAMO)
def test_no_library_file_is_ever_the_location_or_the_cut(name):
    doc, _ = _run(name)
    head = doc["headline"]
    if head and head["location"]:
        assert not any(part in head["location"]["file"] for part in LIBRARY), head
    for r in doc["recompilations"]:
        assert not any(c["kind"] == "partial" for c in r["causes"]), (r["graph"], [c["kind"] for c in r["causes"]])
    assert "dynamo_bridge.py" not in doc["summary"]


@pytest.mark.parametrize("name", ["dynamo_batch", "dynamo_bf16", "dynamo_float", "dynamo_train_eval"])
def test_the_guard_dynamo_printed_heads_the_report(name):
    truth = truth_of("torch_xla", name)
    doc, _ = _run(name)
    assert truth["guard"] in doc["headline"]["guard"]
    assert doc["dynamo"]["recompiles"][0]["guard"] == doc["headline"]["guard"]


def test_the_guard_is_said_in_the_terminal_with_its_graph_difference_under_it():
    out = cli("explain-recompile", str(FIXTURES / "torch_xla" / "dynamo_batch"), codes=(1,)).stdout
    lines = out.splitlines()
    guard = next(i for i, line in enumerate(lines) if "guard" in line and "size mismatch at index 0" in line)
    assert "f32[8,8]{1,0} -> f32[4,8]{1,0}" in lines[guard + 1]
    assert "drop_last" in lines[guard + 2]
    assert lines[0].startswith("Dynamo compiled forward 2 times")


def test_a_python_float_dynamo_specialised_only_dynamo_paid_for_the_later_values():
    truth = truth_of("torch_xla", "dynamo_float")
    doc, _ = _run("dynamo_float")
    dyn = doc["dynamo"]
    # torch and torch_xla counted 4 Dynamo graphs and 2 XLA compilations: two Dynamo recompilations hit XLA's cache
    assert len(dyn["recompiles"]) == truth["facts"]["dynamo_unique_graphs"] - 1
    assert dyn["cache_hits"] == truth["facts"]["dynamo_unique_graphs"] - truth["facts"]["xla_uncached_compile"]
    assert [r["xla"] for r in dyn["recompiles"]] == ["compiled", "cache_hit", "cache_hit"]


def test_a_graph_break_is_its_own_finding_not_a_recompilation():
    truth = truth_of("torch_xla", "dynamo_print")
    doc, status = _run("dynamo_print")
    assert status == 0
    dyn = doc["dynamo"]
    assert dyn["recompiles"] == []
    (brk,) = dyn["graph_breaks"]
    assert brk["location"]["line"] == truth["user_line"] and brk["call"]["line"] == truth["call_line"]
    assert brk["count"] == truth["facts"]["dynamo_graph_breaks"]
    assert brk["graphs"] == truth["facts"]["dynamo_unique_graphs"]


def test_the_bridge_s_xla_compilations_are_expected_when_dynamo_compiled_once():
    truth = truth_of("torch_xla", "dynamo_steady")
    doc, status = _run("dynamo_steady")
    assert status == 0 and doc["unexpected"] == [] and doc["dynamo"]["unexpected"] == []
    assert len(doc["dynamo"]["compiles"]) == truth["facts"]["dynamo_unique_graphs"]
    # the bridge's graphs plus the one lazy optimizer step graph are everything XLA compiled
    assert len(doc["dynamo"]["bridge_compilations"]) == truth["facts"]["xla_uncached_compile"] - 1


# -- the reader ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dynamo_batch", "dynamo_bf16", "dynamo_float", "dynamo_train_eval"])
def test_torch_logs_text_and_torch_trace_say_the_same_guards(name):
    folder = FIXTURES / "torch_xla" / name
    text = read_dynamo_log(str(folder / "stderr.log"), [])
    trace = read_dynamo_log(str(folder / "trace"), [])
    assert [(c.compile_id, [f.guard for f in c.failures]) for c in text.recompiles] == \
        [(c.compile_id, [f.guard for f in c.failures]) for c in trace.recompiles]
    truth = truth_of("torch_xla", name)
    assert all(c.call == SourceFrame(f"/home/user/project/{truth['user_file']}", truth["user_line"], "<module>")
               for c in trace.recompiles)


def test_a_cut_line_costs_only_itself(tmp_path):
    src = (FIXTURES / "torch_xla" / "dynamo_float" / "stderr.log").read_text().splitlines(keepends=True)
    damaged = tmp_path / "stderr.log"
    # the first recompile record loses its 'Recompiling function' line; the other two stay whole
    damaged.write_text("".join(src[1:]) + "V1126 19:05:4")
    warnings = []
    log = read_dynamo_log(str(damaged), warnings)
    assert [c.compile_id for c in log.recompiles] == ["0/2", "0/3"]
    assert len(warnings) == 1 and warnings[0].line == 1


def test_a_cut_structured_record_costs_only_itself(tmp_path):
    trace = FIXTURES / "torch_xla" / "dynamo_batch" / "trace" / "dedicated_log_torch_trace.log"
    lines = trace.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"compilation_metrics"' in line)
    lines[at] = lines[at][:200] + "\n"
    damaged = tmp_path / "dedicated_log_torch_trace.log"
    damaged.write_text("".join(lines))
    warnings = []
    log = read_dynamo_log(str(damaged), warnings)
    assert [c.compile_id for c in log.recompiles] == ["0/1"]
    assert log.recompiles[0].failures[0].guard.startswith("tensor 'feats' size mismatch")
    assert len(warnings) == 1 and warnings[0].line == at + 1


def test_the_dynamo_log_given_explicitly_is_read(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "torch_xla" / "dynamo_bf16" / "dump", run / "dump")
    shutil.copy(FIXTURES / "torch_xla" / "dynamo_bf16" / "debug.log", run / "debug.log")
    log = tmp_path / "elsewhere.txt"
    shutil.copy(FIXTURES / "torch_xla" / "dynamo_bf16" / "stderr.log", log)
    alone = cli_json("explain-recompile", str(run / "dump"), codes=(1,))
    assert alone["dynamo"]["no_log"] and not alone["dynamo"]["compiles"]  # the bridge's graphs, Dynamo unknown
    assert alone["headline"]["kind"] == "dtype"  # the new dtype stays XLA's story
    given = cli_json("explain-recompile", str(run / "dump"), "--dynamo-log", str(log), codes=(1,))
    assert given["headline"]["kind"] == "dtype" and "BFloat16" in given["headline"]["guard"]
    assert given["inputs"]["dynamo_logs"] == [str(log)]


def test_a_missing_dynamo_log_is_a_one_line_error():
    result = cli("explain-recompile", str(FIXTURES / "torch_xla" / "dynamo_bf16"), "--dynamo-log", "nope.log",
                 codes=(2,))
    assert "nope.log" in result.output and "Traceback" not in result.output


# -- the fix rows, each on the real run that exercises it -------------------------------------------------------------

ROWS = {"dynamo_shape_last_batch": "dynamo_batch", "dynamo_dtype": "dynamo_bf16",
        "dynamo_python_value": "dynamo_float", "dynamo_mode": "dynamo_train_eval",
        "dynamo_graph_break_print": "dynamo_print"}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_each_dynamo_row_is_what_its_real_run_records(row):
    doc, _ = _run(ROWS[row])
    dyn = doc["dynamo"]
    recorded = {r["fix_rule"] for r in dyn["recompiles"]} | {b["fix_rule"] for b in dyn["graph_breaks"]}
    assert row in recorded and row in RULES_BY_NAME


def test_a_size_that_changes_mid_run_gets_the_bucket_row_not_the_last_batch():
    from hlodiff.explain.dynamo_guard_kinds import _classify

    kind, _, _, facts = _classify("tensor 'x' size mismatch at index 1. expected 128, actual 256")
    from hlodiff.diff.fixes import choose

    assert kind == "shape" and choose(kind, frozenset(facts)).name == "dynamo_shape"
    assert "drop_last" not in choose(kind, frozenset(facts)).text


def test_any_other_guard_and_any_other_break_get_the_general_rows():
    from hlodiff.diff.fixes import choose
    from hlodiff.explain.dynamo_guard_kinds import _classify

    kind, _, _, facts = _classify("___check_obj_id(L['self'].cfg, 140000)")
    assert kind == "guard" and choose(kind, frozenset(facts)).name == "dynamo_guard"
    assert choose("graph_break", frozenset({"dynamo"})).name == "dynamo_graph_break"


@pytest.mark.parametrize("name", ["dynamo_batch", "dynamo_bf16", "dynamo_train_eval"])
def test_the_graph_difference_shown_is_the_graph_the_recompilation_compiled(name):
    """The first Dynamo compile's graphs (forward, backward, the bridge's syncs) come first; the recompilation's
    graph is the bridge's last compilation, not the backward compared with the forward."""
    doc, _ = _run(name)
    dyn = doc["dynamo"]
    (r,) = dyn["recompiles"]
    assert r["xla"] == "compiled" and r["difference_graph"] == dyn["bridge_compilations"][-1]


def test_a_text_log_alone_says_which_line_it_could_name(tmp_path):
    """TORCH_LOGS text holds no call stack: the headline is the compiled function's definition (batch) or the line
    the guard names (a Python float), and the report says TORCH_TRACE would name the call."""
    for name, located, line in (("dynamo_batch", "definition", 30), ("dynamo_float", "guard", 31)):
        run = tmp_path / name
        shutil.copytree(FIXTURES / "torch_xla" / name / "dump", run / "dump")
        shutil.copy(FIXTURES / "torch_xla" / name / "debug.log", run / "debug.log")
        shutil.copy(FIXTURES / "torch_xla" / name / "stderr.log", run / "stderr.log")
        doc = cli_json("explain-recompile", str(run / "dump"), codes=(1,))
        assert doc["headline"]["location"]["line"] == line
        assert doc["dynamo"]["recompiles"][0]["located"] == located
        out = cli("explain-recompile", str(run / "dump"), codes=(1,)).stdout
        assert "a TORCH_TRACE log (TORCH_TRACE=DIR) records the call" in out


def test_records_the_reader_does_not_use_are_skipped_unparsed(tmp_path):
    """A full TORCH_TRACE log is mostly FX graphs and timing events (payload lines after a tab); only the records
    the reader uses are parsed, and an unused record's payload never leaks into the next record."""
    trace = FIXTURES / "torch_xla" / "dynamo_batch" / "trace" / "dedicated_log_torch_trace.log"
    lines = trace.read_text().splitlines(keepends=True)
    noise = ('V1126 19:04:16.100000 10392 torch/_dynamo/output_graph.py:1989] {"dynamo_output_graph": {"sizes": '
             '{}}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0, "has_payload": "0"}\n'
             '\t[\n\t"0/0: not a guard, part of a graph"\n\t]\n')
    at = next(i for i, line in enumerate(lines) if '"recompile_reasons"' in line)
    full = tmp_path / "dedicated_log_torch_trace.log"
    full.write_text("".join(lines[:at]) + noise + noise.replace("{\"dynamo_output_graph\": {\"sizes\": {}}", "{cut")
                    + "".join(lines[at:]))
    warnings = []
    log = read_dynamo_log(str(full), warnings)
    assert [[f.guard for f in c.failures] for c in log.recompiles] == \
        [["tensor 'feats' size mismatch at index 0. expected 8, actual 4"]]
    assert warnings == []  # a record the reader does not use costs nothing, even cut ('{cut'): never parsed


def test_each_compile_id_owns_the_xla_graphs_compiled_for_it():
    """dynamo_float: 0/0 compiled the graph with 1.0 baked in, 0/1 the graph taking the value as data, 0/2 and 0/3
    found it compiled (torch and torch_xla counted 4 Dynamo graphs and 2 XLA compilations)."""
    truth = truth_of("torch_xla", "dynamo_float")
    doc, _ = _run("dynamo_float")
    owned = doc["dynamo"]["xla_graphs"]
    assert [len(owned.get(f"0/{k}", [])) for k in range(4)] == [1, 1, 0, 0]
    assert sum(len(v) for v in owned.values()) == truth["facts"]["xla_uncached_compile"]
