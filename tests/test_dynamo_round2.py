"""Dynamo, round 2 (docs/accuracy.md): what a failed guard is about, told apart by the guard's own form and by the
XLA graphs joined to it, on the real torch.compile(backend="openxla") runs of fixtures/scenarios/dynamo/ whose
truths were written first. Each new fix row is checked on the run whose evidence chooses it, and on the look-alikes
that share that evidence (a float that should become a tensor vs an int that sets a shape; a symbolic size XLA
compiles per value vs the bridge's own warm-up graphs)."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.diff.fix_rules import EXPECTED, RULES_BY_NAME
from hlodiff.explain.dynamo_log_findings import recompiles_of
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _explain(name: str) -> tuple[dict, int]:
    folder = SCENARIOS / name
    target = folder / "record" if (folder / "record").is_dir() else folder
    result = cli("explain-recompile", str(target), "--json", codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


def _rules(doc: dict) -> set[str]:
    dynamo = doc["dynamo"] or {}
    found = dynamo.get("recompiles", []) + dynamo.get("xla_sizes", []) + dynamo.get("graph_breaks", [])
    return {r["fix_rule"] for r in found}


ROWS = {
    "dynamo_xla_per_size": "dyn_dynamic_true",
    "dynamo_int_sets_shape": "dyn_int_shape",
    "dynamo_python_flag": "dyn_attr_switch",
    "dynamo_container_length": "dyn_list_len",
    "dynamo_dict_keys": "dyn_dict_keys",
    "dynamo_requires_grad": "dyn_requires_grad",
    "dynamo_graph_break_item": "dyn_item_branch",
}


@pytest.mark.parametrize("row, name", sorted(ROWS.items()))
def test_each_row_heads_the_real_run_whose_evidence_chooses_it(row, name):
    doc, status = _explain(name)
    assert row in RULES_BY_NAME
    assert row in _rules(doc), doc["summary"]
    truth = json.loads((SCENARIOS / f"{name}.truth.json").read_text())
    assert status in truth["exit"], doc["summary"]
    if row in EXPECTED:  # the flag switched on for good: Dynamo's side is expected; the optimizer step that now
        assert doc["headline"]["fix"].startswith("expected")  # updates the aux head is XLA's own recompilation


@pytest.mark.parametrize("name", ["dyn_global_scale", "dyn_cache_limit"])
def test_a_number_xla_never_compiled_a_size_for_stays_a_tensor_fix(name):
    """The look-alike of an int that sets a shape: a float, or an int used in arithmetic (XLA receives it as data
    and reuses its graph), is told to become a tensor, never to pad."""
    doc, status = _explain(name)
    assert status == 1
    # dyn_cache_limit runs past the recompile limit: its row says so too (round 9), the advice is the same
    assert _rules(doc) == {"dynamo_python_value" if name == "dyn_global_scale" else "dynamo_python_value_limit"}
    assert "tensor" in doc["headline"]["fix"] and "pad" not in doc["headline"]["fix"]


def test_a_symbolic_size_compiled_per_value_is_unexpected_and_the_bridge_warm_up_is_not():
    """dynamic=True: Dynamo traced once, XLA compiled 4 sizes: told, exit 1. The steady control (the bridge's own
    warm-up graphs, no new size) and the new-module control stay quiet."""
    doc, status = _explain("dyn_dynamic_true")
    assert status == 1 and doc["headline"]["kind"] == "shape"
    assert "s64[4,5] -> s64[4,7]" in doc["headline"]["fix"] and "mark_dynamic" not in doc["headline"]["fix"]
    for control in ("dyn_new_module_control", "dyn_kwarg_control"):
        doc, status = _explain(control)
        assert status == 0 and doc["headline"] is None, doc["summary"]
        assert not (doc["dynamo"] or {}).get("xla_sizes")
    steady = cli("explain-recompile", str(FIXTURES / "torch_xla" / "dynamo_steady"), "--json", codes=(0, 1))
    assert steady.exit_code == 0 and not json.loads(steady.stdout)["dynamo"]["xla_sizes"]


@pytest.mark.parametrize("guard, kind, fact", [
    ("len(crops) == 2", "guard", "container_length"),
    ("not ___dict_contains('attention_mask', batch)", "guard", "dict_keys"),
    ("___dict_contains('attention_mask', batch)", "guard", "dict_keys"),
    ("tensor 'x' requires_grad mismatch. expected requires_grad=0", "guard", "requires_grad"),
    ("self.use_aux == False", "python_value", "python_flag"),
    ("step == 3", "python_value", "python_int"),
    ("G['LOSS_SCALE'] == 1.5", "python_value", "python_float"),
])
def test_guard_forms_dynamo_prints_are_read_as_what_they_guard(guard, kind, fact):
    log = DynamoLog("x", "text", [DynamoCompile("0/0"), DynamoCompile("0/1", "f", failures=[GuardFailure("0/0", guard)])])
    (r,) = recompiles_of(log)
    assert r.kind == kind and fact in r.facts, (r.kind, r.facts)


@pytest.mark.parametrize("path, warmup, status", [
    ("torch_xla/dynamo_batch", None, 1), ("torch_xla/dynamo_batch", 2, 1), ("torch_xla/dynamo_batch", 3, 0),
    ("scenarios/dynamo/dyn_dynamic_true", 2, 1), ("scenarios/dynamo/dyn_dynamic_true", 4, 0),
    # a Dynamo recompilation whose XLA graph was a cache hit has no place in the dump: --warmup never excuses it
    ("scenarios/dynamo/dyn_global_scale", 8, 1),
])
def test_warmup_applies_to_dynamo_recompilations_by_the_call_their_xla_graph_ran_at(path, warmup, status):
    args = ["--warmup", str(warmup)] if warmup is not None else []
    assert cli("explain-recompile", str(FIXTURES / path), "-q", *args, codes=(0, 1)).exit_code == status


def test_a_plus_dynamo_log_is_read_without_its_recompiles_channel():
    """TORCH_LOGS=+dynamo prints no recompile reasons: the failed guard is the one of compile F/K-1 that F/K no
    longer holds in Dynamo's guard trees, and the stack of 'torchdynamo start compiling' gives the user's call."""
    from hlodiff.dumps.dynamo_read import read_dynamo_log

    log = read_dynamo_log(str(SCENARIOS / "dyn_global_scale_plus" / "stderr.log"))
    recompiled = [c for c in log.compiles if c.recompiled]
    assert len(recompiled) == 5
    assert recompiled[0].failures[0].guard == "G['LOSS_SCALE'] == 1.0" and recompiled[0].failures[0].against == "0/0"
    assert (recompiled[0].call.line, recompiled[0].call.function) == (21, "<module>")
    doc, status = _explain("dyn_global_scale_plus")
    assert status == 1 and doc["headline"]["location"]["line"] == 21 and "tensor" in doc["headline"]["fix"]


def test_the_recompile_limit_dynamo_hit_is_told():
    doc, _ = _explain("dyn_cache_limit")
    assert doc["dynamo"]["limit_hits"] == [{"compile_id": "0/8", "limit": 8, "function": "warm_loss"}]
    # review 18 F1: the refused attempt 0/8 compiled nothing, and the function ran without torch.compile after it
    assert "gave up on warm_loss at its recompile limit (8): the attempt 0/8 compiled nothing" in doc["summary"]
    assert "compiled warm_loss 8 times" in doc["summary"]


def test_a_multi_rank_run_gives_each_rank_its_own_torch_trace_file(tmp_path):
    """--dynamo-log naming a TORCH_TRACE folder of several ranks (dedicated_log_torch_trace_rank_N_*.log): each rank
    reads its own file. Rank 0 ran the short last batch (dynamo_batch), rank 1 the steady loop (dynamo_steady)."""
    import shutil

    for rank, name in ((0, "dynamo_batch"), (1, "dynamo_steady")):
        shutil.copytree(FIXTURES / "torch_xla" / name / "dump", tmp_path / "run" / f"rank{rank}" / "dump")
        (tmp_path / "trace").mkdir(exist_ok=True)
        (trace,) = (FIXTURES / "torch_xla" / name / "trace").glob("*.log")
        shutil.copy(trace, tmp_path / "trace" / f"dedicated_log_torch_trace_rank_{rank}_x.log")
    result = cli("explain-recompile", str(tmp_path / "run"), "--dynamo-log", str(tmp_path / "trace"), "--json",
                 codes=(0, 1))
    ranks = json.loads(result.stdout)["ranks"]
    assert "size mismatch at index 0. expected 8, actual 4" in ranks[0]["summary"]
    assert ranks[1]["summary"].startswith("Dynamo compiled loss_fn 1 time") and "mismatch" not in ranks[1]["summary"]
    assert result.exit_code == 1


@pytest.mark.parametrize("name, status, kind", [("dynamo_steady", 0, None), ("dynamo_train_eval", 0, None),
                                                ("dynamo_batch", 1, "shape"), ("dynamo_bf16", 1, "dtype")])
def test_without_dynamo_s_log_the_bridge_s_own_graphs_are_not_a_python_if(name, status, kind, tmp_path):
    """An XLA dump and torch_xla's debug log of a torch.compile run, no Dynamo log: the forward and backward the bridge runs in turn (and its warm-up
    variants) differ in ops and inputs; they are not told as a Python `if`. A new input size or dtype stays told,
    and the summary says Dynamo's log is missing."""
    import shutil

    shutil.copytree(FIXTURES / "torch_xla" / name / "dump", tmp_path / "dump")  # the dump and the PT_XLA_DEBUG
    shutil.copy(FIXTURES / "torch_xla" / name / "debug.log", tmp_path / "pt_xla_debug.log")  # log, no Dynamo log
    result = cli("explain-recompile", str(tmp_path / "dump"), "--json", codes=(0, 1))
    doc = json.loads(result.stdout)
    assert result.exit_code == status, doc["summary"]
    assert (doc["headline"] or {}).get("kind") == kind
    assert doc["dynamo"]["no_log"] and doc["summary"].startswith("torch.compile run without Dynamo's log")


@pytest.mark.parametrize("name", ["dyn_list_len", "dyn_dict_keys", "dyn_dynamic_true"])
def test_without_dynamo_s_log_a_changed_program_is_still_told(name, tmp_path):
    """The look-alike of the bridge's forward/backward pair: a retrace XLA compiled (more inputs, another size) is
    the same program changed, mostly alike its earlier graph: still unexpected without Dynamo's log."""
    import shutil

    shutil.copytree(SCENARIOS / name / "dump", tmp_path / "dump")
    shutil.copy(SCENARIOS / name / "pt_xla_debug.log", tmp_path / "pt_xla_debug.log")
    result = cli("explain-recompile", str(tmp_path / "dump"), "--json", codes=(0, 1))
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and doc["headline"] is not None and doc["dynamo"]["no_log"], doc["summary"]
