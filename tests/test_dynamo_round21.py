"""Dynamo round 21 (docs/accuracy.md): a graph break inside library code that the user's own line inside the compiled
function ran into -- torch_xla's sync (``xm.mark_step()``: its deprecation warning, then the sync) -- is told at
that line with "remove the sync", not as torch's own break that no line of the user's needs to move; and a
``torch.Generator`` Dynamo's developer context names gets its own fix; an attribute the forward tests with
hasattr() and the trainer sets later is told as that attribute (+dynamo trees: before the dict-type check that goes
with it), created in __init__. With the round's other runs."""

from __future__ import annotations

import json

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_guards import _failed_guard
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.explain.dynamo_log_findings import breaks_of, recompiles_of
from hlodiff.explain.dynamo_break_calls import CONTEXT_VALUES, LIBRARY_CALLS, USER_CALLS, break_call_facts
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"
_SITE = "/usr/lib/python3.11/site-packages/"
_CALL = SourceFrame("/p/train.py", 27, "<module>")
_LINE = SourceFrame("/p/train.py", 19, "loss_fn")
_WARN = SourceFrame(_SITE + "typing_extensions.py", 3139, "wrapper")
_WRAP = SourceFrame(_SITE + "typing_extensions.py", 3140, "wrapper")
_MARK = SourceFrame(_SITE + "torch_xla/core/xla_model.py", 1032, "mark_step")
_SYNC = SourceFrame(_SITE + "torch_xla/torch_xla.py", 93, "sync")
_DEVICE = SourceFrame(_SITE + "torch_xla/torch_xla.py", 40, "device")
_SKIPPED = "Attempted to call function marked as skipped"


def _brk(at: SourceFrame, *frames: SourceFrame, reason: str = _SKIPPED, context: str | None = None) -> GraphBreak:
    return GraphBreak("0/0", reason, "Dynamo does not know how to trace ...", at=at, call=_CALL,
                      frames=(_CALL, *frames), context=context)


def _told(*breaks: GraphBreak):
    return breaks_of(DynamoLog("x", "text", graph_breaks=list(breaks)))


def test_a_sync_inside_the_compiled_function_is_one_break_at_the_users_line():
    # xm.mark_step(): the wrapper's warnings.warn breaks first, the sync after; Dynamo repeats them without a stack
    dup = GraphBreak("0/1", _SKIPPED, None, at=_DEVICE, duplicate=True)
    (f,) = _told(_brk(_WARN, _LINE, _WARN), _brk(_DEVICE, _LINE, _WRAP, _MARK, _SYNC, _DEVICE), dup)
    assert f.fix_rule == "dynamo_graph_break_xla_sync", f.fix_rule
    assert (f.location.file, f.location.line) == ("/p/train.py", 19)
    assert "remove the sync" in f.fix and "typing_extensions.py:3139" in f.fix and "torch_xla.py:40" in f.fix
    assert "no line of yours needs to move" not in f.fix


def test_torch_xla_sync_called_directly_is_the_same_story():
    (f,) = _told(_brk(_DEVICE, _LINE, _SYNC, _DEVICE))
    assert f.fix_rule == "dynamo_graph_break_xla_sync" and f.location.line == 19


@pytest.mark.parametrize("frames", [
    # torch.compile(opt_step): torch's optimizer breaks on purpose (dyn_unfreeze_group, d11_opt_grad_none)
    (_LINE, SourceFrame(_SITE + "torch/optim/optimizer.py", 81, "_use_grad")),
    # a library's own warning reached from the user's line, no sync in the traceback
    (_LINE, _WARN),
    # a function named sync in another library is no torch_xla sync
    (_LINE, SourceFrame(_SITE + "othersync/torch_xla.py.bak", 5, "sync")),
], ids=["optimizer", "warning", "other_sync"])
def test_library_breaks_without_a_sync_keep_the_library_row_at_the_call(frames):
    (f,) = _told(_brk(frames[-1], *frames))
    assert f.fix_rule == "dynamo_graph_break_library", f.fix_rule
    assert f.location.line == 27


def test_a_generator_named_in_dynamos_context_gets_its_own_fix():
    at = SourceFrame("/p/train.py", 23, "forward")
    gen = "call_function args: SizeVariable(length=2) UserDefinedObjectVariable(Generator)"
    (f,) = _told(_brk(at, at, reason="Failed to convert args/kwargs to proxy", context=gen))
    assert f.fix_rule == "dynamo_graph_break_generator" and "randn_like" in f.fix and "as a tensor" not in f.fix
    # the same reason with another value keeps the generic row
    other = "call_function args: UserDefinedObjectVariable(Sampler)"
    (g,) = _told(_brk(at, at, reason="Failed to convert args/kwargs to proxy", context=other))
    assert g.fix_rule == "dynamo_graph_break"


@pytest.mark.parametrize("row", LIBRARY_CALLS, ids=[f"{r[0]}:{r[1]}" for r in LIBRARY_CALLS])
def test_each_library_call_row_makes_its_fact(row):
    tail, fn, fact = row
    frame = SourceFrame(_SITE + tail, 1, fn)
    assert fact in break_call_facts(_brk(frame, _LINE, frame))
    assert fact not in break_call_facts(_brk(frame, _LINE, SourceFrame(_SITE + tail, 1, fn + "_other")))


def test_the_warning_of_mark_step_alone_is_already_the_sync():
    # read live, the wrapper's deprecation warning breaks first, its sync not yet in the log: the quoted user line
    brk = GraphBreak("0/0", _SKIPPED, None, at=_WARN, call=_CALL, frames=(_CALL, _LINE, _WARN),
                     codes=("loss = compiled_loss(x, y)", "xm.mark_step()  # cut the graph", "warnings.warn(msg)"))
    (f,) = _told(brk)
    assert f.fix_rule == "dynamo_graph_break_xla_sync" and f.location.line == 19


@pytest.mark.parametrize("code, sync", [("xm.mark_step()", True), ("mark_step()", True),
                                        ("torch_xla.sync(wait=True)", True), ("self.mark_step_count += 1", False),
                                        ("log.warn('slow')  # mark_step() here once", False),
                                        ("my.mark_step()", False)])
def test_each_user_call_row_reads_the_statement_only(code, sync):
    assert len(USER_CALLS) == 2
    brk = GraphBreak("0/0", _SKIPPED, None, at=_WARN, frames=(_CALL, _LINE, _WARN), codes=("f()", code, "w()"))
    assert ("op:xla_sync" in break_call_facts(brk)) is sync
    # the same line as the break's own line (no library frame after it) is not a call into a library
    own = GraphBreak("0/0", _SKIPPED, None, at=_LINE, frames=(_CALL, _LINE), codes=("f()", code))
    assert "op:xla_sync" not in break_call_facts(own)


@pytest.mark.parametrize("row", CONTEXT_VALUES, ids=[r[1] for r in CONTEXT_VALUES])
def test_each_context_row_makes_its_fact(row):
    mark, fact = row
    assert fact in break_call_facts(_brk(_DEVICE, _LINE, context=f"call_function args: {mark}"))
    assert fact not in break_call_facts(_brk(_DEVICE, _LINE, context="call_function args: TensorVariable()"))


def _explain(name: str) -> tuple[dict, int]:
    result = cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1))
    return json.loads(result.stdout), result.exit_code


@pytest.mark.parametrize("name, rule, line", [("d21_mark_step_inside", "dynamo_graph_break_xla_sync", 19),
                                              ("d21_generator_noise", "dynamo_graph_break_generator", 23)])
def test_the_rounds_breaks_are_told_at_the_users_line_by_their_rows(name, rule, line):
    doc, code = _explain(name)
    (brk,) = doc["dynamo"]["graph_breaks"]
    assert brk["fix_rule"] == rule and doc["headline"]["location"]["line"] == line and code == 0


def test_the_rounds_other_runs():
    doc, code = _explain("d21_logit_adjust_late")
    assert doc["headline"]["kind"] == "guard" and "register_buffer" in doc["headline"]["fix"] and code in (0, 1)
    assert "log_prior" in doc["headline"]["fix"] and doc["dynamo"]["recompiles"][0]["fix_rule"] == "dynamo_hasattr"
    doc, code = _explain("d21_reseed_control")
    assert doc["headline"] is None and code == 0


# -- an attribute tested with hasattr(), set after the first call ---------------------------------------------------

_BUFFERS = ("TYPE_MATCH", "___check_type_id(L['self']._buffers, 1397)  # if hasattr(self, \"log_prior\"):")
_ABSENT = ("NO_HASATTR", "not hasattr(L['self'], 'log_prior')  # if hasattr(self, \"log_prior\"):")
_DYN_IDX = ("NO_HASATTR", "hasattr(L['x'], '_dynamo_dynamic_indices') == False  # return F.linear(...)")


def test_a_guard_tree_that_lost_an_absent_attribute_blames_the_attribute_not_the_dicts_type():
    # +dynamo logs: the attribute's absence and the type check of the dict it was looked up in both go
    failed = _failed_guard([_BUFFERS, _ABSENT, _DYN_IDX], [_DYN_IDX])
    assert failed.startswith("not hasattr(self, 'log_prior')"), failed


def test_dynamos_own_hasattr_guards_keep_the_tail():
    # the same kind of guard on Dynamo's bookkeeping attribute ranks after a type check (a head per task)
    failed = _failed_guard([_BUFFERS, _DYN_IDX], [])
    assert failed.startswith("___check_type_id(self._buffers"), failed


def _guarded(guard: str):
    compiles = [DynamoCompile("0/0", "forward"), DynamoCompile("0/1", "forward", failures=[GuardFailure("0/0", guard)])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles))
    return r


@pytest.mark.parametrize("guard, came", [("not hasattr(self, 'log_prior')", "appeared"),
                                         ("hasattr(self._modules['head'], 'prior')", "went away")])
def test_an_attributes_presence_is_told_to_be_created_in_init(guard, came):
    r = _guarded(guard)
    assert r.fix_rule == "dynamo_hasattr", r.fix_rule
    assert came in r.fix and "__init__" in r.fix and "register_buffer" in r.fix and "as a tensor" not in r.fix


@pytest.mark.parametrize("guard", ["hasattr(L['x'], '_dynamo_dynamic_indices') == False", "self.use_aux == True",
                                   "___check_type_id(self._buffers, 1397)"])
def test_look_alikes_of_an_attributes_presence_keep_their_rows(guard):
    assert _guarded(guard).fix_rule != "dynamo_hasattr"
