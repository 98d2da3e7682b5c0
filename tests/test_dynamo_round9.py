"""Dynamo, round 9 (docs/accuracy.md): a size of 1 under a dynamic dim (0/1 specialization), an input's rank, an
input on another device, a submodule's number past the recompile limit (the later calls ran without Dynamo),
a guard that names torch's own line, and Dynamo's cache emptied mid-run (torch._dynamo.reset()). Each row is checked
on the guard as Dynamo prints it and its look-alikes, and on the real run whose evidence chooses it."""

from __future__ import annotations

import pytest

from explain_helpers import explain_status as _explain, guard_recompiles as _rules
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GuardFailure
from hlodiff.dumps.dynamo_trace import log_of_records
from hlodiff.explain.dynamo_log_findings import recompiles_of
from hlodiff.hlo.library_modules import cut_module_path

SCENARIOS = FIXTURES / "scenarios" / "dynamo"


_DISPATCH = ("tensor 'labels' dispatch key set mismatch. expected DispatchKeySet({}), actual DispatchKeySet({})")
_XLA = "XLA, BackendSelect, Functionalize, ADInplaceOrView, AutogradXLA"
_CPU = "CPU, BackendSelect, ADInplaceOrView, AutogradCPU"


@pytest.mark.parametrize("guard, rule", [
    # a size of 1 where the dim is dynamic: Dynamo's lower bound 2 (0/1 specialization)
    ("2 <= args[0].size()[0]", "dynamo_shape_zero_one"),
    ("2 <= L['x'].size()[1]", "dynamo_shape_zero_one"),
    # look-alikes: an ordinary size change keeps the size rows; an int's lower bound is no tensor's size
    ("tensor 'args[0]' size mismatch at index 1. expected 8, actual 16", "dynamo_shape"),
    ("2 <= L['n']", "dynamo_guard"),
    # an input's rank
    ("tensor 'args[0]' rank mismatch. expected 2, actual 1", "dynamo_shape_rank"),
    # an input on another device, from its dispatch keys
    (_DISPATCH.format(_XLA, _CPU), "dynamo_device"),
    # look-alikes: an inference tensor (no autograd keys, one device) keeps its row; other keys, the generic guard
    (_DISPATCH.format(_XLA, "XLA, BackendSelect, Functionalize"), "dynamo_inference_tensor"),
    (_DISPATCH.format(_XLA, "XLA, BackendSelect, ADInplaceOrView, AutogradXLA"), "dynamo_guard"),
    # a submodule's number on a compiled nn.Module (torch 2.9's wrapper names it `fn`)
    ("fn._modules['1'].p == 0.025", "dynamo_module_number"),
    ("self._modules['drop'].p == 0.025", "dynamo_module_number"),
    # look-alikes: a bare `fn.x` may be any argument; an optimizer's lr keeps the Python value row
    ("fn.scale == 0.5", "dynamo_python_float_once"),  # one failed guard of a float: review 22's row
    ("self.param_groups[0]['lr'] == 0.1", "dynamo_python_value_lr"),  # review 13 F6: an lr's own row
])
def test_round_9_guards_and_their_look_alikes(guard, rule):
    assert _rules(guard)[0].fix_rule == rule


def test_the_fix_of_a_size_of_one_names_drop_last_and_no_tensor():
    (r,) = _rules("2 <= args[0].size()[0]")
    assert "drop_last" in r.fix and "as a tensor" not in r.fix and r.fix_rule not in EXPECTED
    (rank,) = _rules("tensor 'args[0]' rank mismatch. expected 2, actual 1")
    assert "unsqueeze" in rank.fix and "pad" not in rank.fix and "2 dimensions, then 1" in rank.seen
    (device,) = _rules(_DISPATCH.format(_XLA, _CPU))
    assert device.seen == "labels on XLA, then on CPU" and "inference_mode" not in device.fix


def _limited(guard: str) -> list:
    compiles = [DynamoCompile("0/0")] + [DynamoCompile(f"0/{n}", "inner", failures=[GuardFailure(f"0/{n - 1}", guard)])
                                         for n in range(1, 3)]
    log = DynamoLog("x", "text", compiles, limit_hits=[("0/2", 8)])
    found = recompiles_of(log)
    for r in found:  # as findings() marks them: this frame ran past the limit
        r.facts, r.limit = r.facts | {"limit_hit"}, 8
    from hlodiff.explain.dynamo_recompile_fixes import choose_fix
    for r in found:
        choose_fix(r)
    return found


@pytest.mark.parametrize("guard, rule", [
    ("fn._modules['1'].p == 0.15", "dynamo_module_number_limit"),
    ("step == 6", "dynamo_python_value_limit"),
    # look-alike: a string past the limit keeps its row (raise the limit to the number of values)
    ("task == 'cls'", "dynamo_python_string_limit"),
])
def test_past_the_limit_the_fix_says_the_later_calls_ran_without_dynamo(guard, rule):
    r = _limited(guard)[-1]
    assert r.fix_rule == rule
    if rule != "dynamo_python_string_limit":
        assert "without Dynamo (eagerly" in r.fix and "tensor" in r.fix and "raise" not in r.fix


@pytest.mark.parametrize("path, cut", [
    ("nn/modules/dropout.py", True),        # Dynamo's guard source, cut short: torch's own line
    ("nn/modules/linear.py", True),
    ("mp/dyn9p/p_symint.py", False),        # a user's script, cut short the same way
    ("train.py", False),                    # a bare name stays user code
    ("/abs/nn/modules/dropout.py", False),  # an absolute path is judged by where it is installed, not here
])
def test_a_cut_guard_source_of_torch_is_library_code(path, cut):
    assert cut_module_path(path) is cut


def test_a_dropout_rate_annealed_past_the_limit_is_told_as_the_module_s_number_never_at_torch_s_line():
    doc, code = _explain(SCENARIOS / "dyn_dropout_anneal")
    head = doc["headline"]
    # since review 20 (F9) the rate is known to reach F.dropout's number-only parameter: that row's limit words
    assert code == 1 and doc["dynamo"]["headline"]["fix_rule"] in ("dynamo_module_number_limit",
                                                                   "dynamo_number_only_param_limit")
    assert head["location"] is None or "dropout.py" not in head["location"]["file"]
    assert "without Dynamo" in head["fix"] and "limit (8)" in head["fix"]


def _records(*compiles: tuple[str, str, int, bool]) -> list:
    """(compile id, function, first line, finished) -> a dynamo_start record, and a compilation_metrics record when
    it finished (one that did not is an analysis Dynamo restarted within one compile)."""
    out, line = [], 0
    for cid, fn, first, finished in compiles:
        frame, n = cid.split("/")
        line += 1
        out.append((line, {"dynamo_start": {"stack": []}, "frame_id": int(frame), "frame_compile_id": int(n),
                           "attempt": 0}, []))
        if not finished:
            continue
        line += 1
        out.append((line, {"compilation_metrics": {"compile_id": cid, "co_name": fn, "co_filename": "/p/t.py",
                                                   "co_firstlineno": first}}, []))
    return out


@pytest.mark.parametrize("compiles, restarts", [
    # the same function compiled as 0/0 three times: two restarts of Dynamo's cache
    ([("0/0", "loss", 5, True), ("0/0", "loss", 5, True), ("0/0", "loss", 5, True)], 2),
    # look-alikes: two functions, each compiled once; a recompilation (0/1); a restarted analysis within one
    # compile (attempt 0 then 1, one metrics record); another function under 0/0 after a reset (a new model)
    ([("0/0", "loss", 5, True), ("1/0", "evaluate", 9, True)], 0),
    ([("0/0", "loss", 5, True), ("0/1", "loss", 5, True)], 0),
    ([("0/0", "loss", 5, False), ("0/0", "loss", 5, True)], 0),
    ([("0/0", "loss", 5, True), ("0/0", "other_loss", 20, True)], 0),
])
def test_a_function_compiled_again_under_a_finished_id_is_a_reset(compiles, restarts):
    assert len(log_of_records("x", _records(*compiles)).restarts) == restarts


def test_dynamo_reset_every_epoch_is_told_at_the_function_with_the_reset_to_remove():
    doc, code = _explain(SCENARIOS / "dyn_reset_epoch")
    (reset,) = doc["dynamo"]["resets"]
    assert code == 1 and doc["headline"]["kind"] == "reset" and reset["fix_rule"] == "dynamo_cache_reset"
    assert "torch._dynamo.reset()" in doc["headline"]["fix"] and "as a tensor" not in doc["headline"]["fix"]
    assert doc["summary"].startswith("Dynamo compiled loss_fn 3 times")


@pytest.mark.parametrize("name", ["dyn_random_aug_control", "dyn_eager_eval_control", "dyn_two_fns_control",
                                  "dyn_compile_in_loop_control"])
def test_controls_have_no_reset_and_no_headline(name):
    """Look-alikes: a compiled function made again every step (compile in the loop), two compiled functions,
    random values Dynamo replays, an eager validation call: no cache emptied, nothing unexpected."""
    doc, code = _explain(SCENARIOS / name)
    assert code == 0 and doc["headline"] is None and not doc["dynamo"]["resets"]


@pytest.mark.parametrize("name, restarts", [
    # TORCH_LOGS=+dynamo: the same `[0/0] torchdynamo start compiling loss_fn` after its guard tree was printed
    ("dyn_reset_epoch_plus", 2),
    # look-alikes: +dynamo logs of recompilations (a mode, an enum, a float), each start a new compile id
    ("dyn_eval_mode", 0), ("dyn_enum_phase", 0), ("dyn_global_scale_plus", 0),
])
def test_a_verbose_log_shows_a_reset_with_the_user_s_call(name, restarts):
    from hlodiff.dumps.dynamo_read import read_dynamo_log

    log = read_dynamo_log(str(SCENARIOS / name / "stderr.log"))
    assert len(log.restarts) == restarts
    assert all(r.call is not None and r.call.line == 25 for r in log.restarts)


def test_a_reset_in_a_verbose_log_is_told_at_the_call():
    doc, code = _explain(SCENARIOS / "dyn_reset_epoch_plus")
    assert code == 1 and doc["headline"]["kind"] == "reset" and doc["headline"]["location"]["line"] == 25
