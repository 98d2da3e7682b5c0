"""Dynamo, round 4 (docs/accuracy.md): the join of Dynamo's recompilations to the bridge's XLA graphs in a training
run, and the step graph that changes with an expected retrace told by a row of the fix table. Checked on real
captures (fixtures/scenarios/dynamo/) and on their look-alikes: a training recompilation compiles a forward and a
backward, a no_grad one the forward alone."""

from __future__ import annotations

import pytest

from explain_helpers import explain_status as _explain
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED, RULES_BY_NAME

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


def _index(ref: str) -> int:
    return int(ref.rsplit("#", 1)[1])


def test_a_training_retrace_is_joined_to_its_forward_not_to_the_next_retrace_s_graph():
    """dyn_modulelist_grow: 0/1 compiled the forward #8 and its backward #10, 0/2 #16 and #18 (the user's syncs
    between them). One graph per recompilation from the end joined 0/1 to #16, 0/2's forward."""
    doc, _ = _explain(SCENARIOS / "dyn_modulelist_grow")
    dynamo = doc["dynamo"]
    joined = {r["compile_id"]: _index(r["difference_graph"]) for r in dynamo["recompiles"]}
    assert joined == {"0/1": 8, "0/2": 16}
    owned = {cid: [_index(ref) for ref in refs] for cid, refs in dynamo["xla_graphs"].items()}
    assert owned["0/1"] == [8, 10] and owned["0/2"] == [16, 18]


@pytest.mark.parametrize("name", ["dyn_no_grad_metric", "review2_dyn_nograd_eval/record"])
def test_a_no_grad_retrace_compiles_its_forward_alone_and_keeps_its_graph(name):
    """The look-alike: a recompilation under no_grad compiles no backward; its group is the forward alone, so the
    join takes the graph right after the user's last sync before it (the one-each join took the same)."""
    doc, status = _explain(SCENARIOS / name)
    dynamo = doc["dynamo"]
    assert status == 0
    for r in dynamo["recompiles"]:
        if r["xla"] == "compiled":
            assert r["difference_graph"] in dynamo["bridge_recompilations"]
            owned = dynamo["xla_graphs"][r["compile_id"]]
            assert owned[0] == r["difference_graph"]


def test_the_step_that_follows_an_expected_retrace_is_a_row_of_the_table():
    """The fix of a step graph that changed with an expected Dynamo retrace is the row
    ``dynamo_step_follows_expected`` (expected, names the retrace and its guard), not words written inline."""
    row = RULES_BY_NAME["dynamo_step_follows_expected"]
    assert row.name in EXPECTED and "{cid}" in row.text and "{guard}" in row.text
    doc, status = _explain(SCENARIOS / "dyn_attr_switch")
    follows = doc["dynamo"]["follows_expected"]
    fixes = {c["fix"] for r in doc["recompilations"] if r["graph"] in follows for c in r["causes"]}
    assert status == 0 and fixes == {"expected: follows from Dynamo's recompilation 0/1 above (self.use_aux == "
                                     "False): the step around the compiled call changed with it, each version "
                                     "compiled once; nothing to fix"}


# -- the blind round's rows, each on the real run whose evidence chooses it and on its look-alikes ---------------------

from hlodiff.dumps.dynamo_guards import _failed_guard  # noqa: E402
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure, guard_failure  # noqa: E402
from hlodiff.explain.dynamo_log_findings import recompiles_of  # noqa: E402


@pytest.mark.parametrize("guard, kind, facts, rule", [
    ("mode == 'train'", "python_value", {"python_string"}, "dynamo_python_string"),
    ('task == "cls"', "python_value", {"python_string"}, "dynamo_python_string"),
    ("GLOBAL_STATE changed: autocast ", "mode", {"autocast"}, "dynamo_autocast"),
    # look-alikes: a float and an int by value, grad mode, a module's training flag
    # a float whose guard fails once (one recompilation here): review 22's row, a value set once or another type
    ("cfg.margin == 0.5", "python_value", {"python_float"}, "dynamo_python_float_once"),
    ("self.step == 0", "python_value", {"python_int", "module_attribute"}, "dynamo_module_number"),
    ("L['self'].scale == 0.5", "python_value", {"python_float", "module_attribute"}, "dynamo_module_number"),
    ("self.use_aux == False", "python_value", {"python_flag", "module_attribute"}, "dynamo_python_flag"),
    # an int whose guard fails once in the log (this table's logs hold one recompilation): round 14's row, which
    # names the value and the type (1 then 1.0); an int failing again keeps dynamo_python_value (round 10's test)
    ("accum == 1", "python_value", {"python_int"}, "dynamo_python_int_once"),
    # an lr keeps the aside on eager torch_xla's opposite advice (review 13 F6: only an lr)
    ("self.param_groups[0]['lr'] == 0.1", "python_value", {"python_float", "optimizer_lr"}, "dynamo_python_value_lr"),
    ("self._modules['head'].temperature == 2.0", "python_value", {"module_attribute"}, "dynamo_module_number"),
    ("GLOBAL_STATE changed: grad_mode ", "mode", set(), "dynamo_mode"),
    ("fn._modules['1'].training == True", "mode", set(), "dynamo_mode"),
])
def test_guard_forms_of_round_4_and_their_look_alikes(guard, kind, facts, rule):
    log = DynamoLog("x", "text", [DynamoCompile("0/0"), DynamoCompile("0/1", "f", failures=[GuardFailure("0/0", guard)])])
    (r,) = recompiles_of(log)
    assert r.kind == kind and facts <= r.facts and r.fix_rule == rule, (r.kind, r.facts, r.fix_rule)
    for fact in ("autocast", "python_string", "module_attribute"):
        assert (fact in r.facts) == (fact in facts), fact


@pytest.mark.parametrize("name, rule, status, words", [
    ("dyn_mode_string", "dynamo_python_string", 0, "once per value"),
    ("dyn_task_limit", "dynamo_python_string_limit", 1, "recompile limit (4) is below the number of values"),
    ("dyn_autocast_steps", "dynamo_autocast", 0, "torch.autocast is enabled on some calls only"),
    ("dyn_eval_mode", "dynamo_mode", 0, "one graph per mode"),
    # look-alikes: numbers past the limit stay "a tensor", never "raise the limit" (round 9: their rows past the
    # limit also say the later calls ran without Dynamo); grad mode stays dynamo_mode
    ("dyn_cache_limit", "dynamo_python_value_limit", 1, "pass it as a tensor"),
    ("dyn_step_attr", "dynamo_module_number_limit", 1, "keep it in a tensor instead (a buffer"),
    ("dyn_sched_lr", "dynamo_python_value_lr", 1, "pass it as a tensor"),
    ("dyn_no_grad_metric", "dynamo_mode", 0, "one graph per mode"),
])
def test_each_round_4_row_heads_its_real_run_and_not_its_look_alikes(name, rule, status, words):
    doc, code = _explain(SCENARIOS / name)
    head = doc["dynamo"]["headline"]
    assert code == status and head["fix_rule"] == rule and words in doc["headline"]["fix"], doc["summary"]
    assert (rule in EXPECTED) == (status == 0)
    if rule in ("dynamo_python_value", "dynamo_python_value_lr", "dynamo_module_number"):
        assert "limit" not in doc["headline"]["fix"]


def test_a_guard_comment_followed_by_dynamo_s_hint_is_still_the_guard_s_line():
    """torch 2.9 ends an nn.Module int attribute's guard with (HINT: ...): the guard is `self.step == 0`, its
    line the read in the forward (dyn_step_attr.py:20), not the function's def."""
    text = ("self.step == 0      # w = min(1.0, self.step / 10)  # USE: read  # p/dyn_step_attr.py:20 in forward "
            "(HINT: torch.compile considers integer attributes of the nn.Module to be static.)")
    failure = guard_failure("0/0", text)
    assert failure.guard == "self.step == 0" and failure.source.line == 20
    doc, _ = _explain(SCENARIOS / "dyn_step_attr")
    assert doc["headline"]["location"]["line"] == 20 and doc["headline"]["kind"] == "python_value"


def test_a_builtins_dict_dynamo_renumbers_is_no_failed_guard():
    """Dynamo numbers G['__builtins_dict___N'] anew per compile: the same ID_MATCH on `iter` is no failure, so the
    Dropout's training flag is (dyn_eval_mode, TORCH_LOGS=+dynamo)."""
    before = [("ID_MATCH", "___check_obj_id(G['__builtins_dict___0']['iter'], 1396)  # return iter(x)  # c.py:239 in f"),
              ("TRUE_MATCH", "L['fn']._modules['1'].training == True  # F.dropout(...)  # nn/modules/dropout.py:73 in forward")]
    after = [("ID_MATCH", "___check_obj_id(G['__builtins_dict___2']['iter'], 1396)  # return iter(x)  # c.py:239 in f"),
             ("FALSE_MATCH", "L['fn']._modules['1'].training == False  # F.dropout(...)  # nn/modules/dropout.py:73 in forward")]
    assert _failed_guard(before, after).startswith("fn._modules['1'].training == True")
    # a different object behind the same renumbered name still fails
    after[0] = ("ID_MATCH", "___check_obj_id(G['__builtins_dict___2']['iter'], 9999)  # return iter(x)  # c.py:239 in f")
    after[1] = before[1]
    assert _failed_guard(before, after).startswith("___check_obj_id(G['__builtins_dict___0']['iter'], 1396)")


def test_the_sync_that_alternates_with_autocast_follows_it_and_not_beside_another_mode(tmp_path):
    """dyn_autocast_steps: the step's sync graph takes one variant per precision (A,A,B,C,B,C) and follows the
    expected autocast retrace: exit 0. The same run with Dynamo's log saying grad mode changed instead keeps it
    unexpected (grad mode leaves the eager code's dtypes alone)."""
    import shutil

    doc, status = _explain(SCENARIOS / "dyn_autocast_steps")
    assert status == 0 and len(doc["dynamo"]["follows_expected"]) == 2 and not doc["unexpected"]
    assert _index(doc["dynamo"]["recompiles"][0]["difference_graph"]) == 4  # its forward, not the input sync #13
    shutil.copytree(SCENARIOS / "dyn_autocast_steps", tmp_path / "run")
    for log in [tmp_path / "run" / "stderr.log", *(tmp_path / "run" / "trace").iterdir()]:
        log.write_text(log.read_text().replace("GLOBAL_STATE changed: autocast", "GLOBAL_STATE changed: grad_mode"))
    doc, status = _explain(tmp_path / "run")
    assert doc["dynamo"]["headline"]["fix_rule"] == "dynamo_mode"
    assert status == 1 and not doc["dynamo"]["follows_expected"] and doc["unexpected"], doc["summary"]


@pytest.mark.parametrize("name, hits", [("dyn_global_cfg", 2), ("dyn_global_scale", 4), ("dyn_closure_temp", 2),
                                        ("dyn_cache_limit", 7), ("dyn_step_attr", 6)])
def test_a_text_log_s_missing_first_compile_is_counted_and_the_limit_s_attempt_is_not(name, hits):
    """A TORCH_LOGS=recompiles log names 0/1.. only; Dynamo compiled 0/0 too, and the attempt that hit the recompile
    limit compiled nothing. Counting both right, the XLA cache hits are as many as the recompilations XLA did not
    compile for (dyn_global_cfg: 5 Dynamo compiles, 3 forward graphs; it was told 1 hit and 0/1 joined to #6, its
    backward, instead of #4)."""
    doc, _ = _explain(SCENARIOS / name)
    dynamo = doc["dynamo"]
    assert dynamo["cache_hits"] == hits
    assert sum(r["xla"] == "cache_hit" for r in dynamo["recompiles"]) == hits
    if name == "dyn_global_cfg":
        assert _index(dynamo["recompiles"][0]["difference_graph"]) == 4
