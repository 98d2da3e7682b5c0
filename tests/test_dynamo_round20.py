"""Dynamo round 20 (docs/accuracy.md): a recompile refused by ``set_stance("fail_on_recompile")`` (the program
stops, no guard logged), a graph break at Python's random module (a LayerDrop), a compiled module's parameter gone
(pruning), and the one call of a function compiled under another name. Each row beside the look-alikes that share
its evidence, and the real runs."""

from __future__ import annotations

import json
import textwrap

import pytest

from helpers import FIXTURES, cli
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak, GuardFailure
from hlodiff.dumps.dynamo_read import read_dynamo_log
from hlodiff.dumps.python_calls import calls_of_function
from hlodiff.explain.dynamo_log_findings import recompiles_of
from hlodiff.explain.dynamo_stance import stance_recompiles
from hlodiff.hlo.model import SourceFrame

SCENARIOS = FIXTURES / "scenarios" / "dynamo"

_STANCE_LOG = """\
WARNING:root:Defaulting to PJRT_DEVICE=CPU
Traceback (most recent call last):
  File "/home/user/project/train.py", line 22, in <module>
    loss = torch.nn.functional.cross_entropy(model(x), y)       # CALL
                                             ^^^^^^^^
  File "/usr/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 414, in __call__
    return super().__call__(*args, **kwargs)
  File "/usr/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 247, in fail_callback
    raise RuntimeError(message)
RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: '/usr/lib/python3.11/site-packages/torch/_dynamo/external_utils.py', function name: 'inner', line number: 66
"""

_FULLGRAPH_LOG = """\
Traceback (most recent call last):
  File "/home/user/project/train.py", line 27, in <module>
    loss = loss_fn(net(x), y)
  File "/usr/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 841, in compile_wrapper
torch._dynamo.exc.Unsupported: Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.

from user code:
   File "/home/user/project/train.py", line 17, in loss_fn
    if ce.item() > 4.0:
"""


def _log(tmp_path, text: str):
    path = tmp_path / "stderr.log"
    path.write_text(text)
    return read_dynamo_log(str(path))


def test_a_recompile_the_stance_refused_is_told_at_the_call_with_what_to_check(tmp_path):
    log = _log(tmp_path, _STANCE_LOG)
    assert not log.compiles and not log.graph_breaks and len(log.stance_raises) == 1
    (r,) = stance_recompiles(log)
    assert r.fix_rule == "dynamo_stance_raised" and not r.expected  # the program stopped: never "expected"
    assert (r.location.file, r.location.line) == ("/home/user/project/train.py", 22)
    assert r.function == "the module or method you passed to torch.compile"  # torch's wrapper is no name of theirs
    assert 'set_stance("fail_on_recompile")' in r.fix and "TORCH_LOGS=recompiles" in r.fix
    for words in ("as a tensor", "dtype", "limit", "mark_dynamic", "nothing to fix"):
        assert words not in r.fix, words


def test_a_break_fullgraph_raised_stays_a_raised_graph_break(tmp_path):
    # the look-alike: another exception at the end of a traceback, Dynamo's Unsupported under fullgraph=True
    log = _log(tmp_path, _FULLGRAPH_LOG)
    assert not log.stance_raises and len(log.graph_breaks) == 1 and log.graph_breaks[0].raised


def test_another_runtime_error_is_no_refused_recompile(tmp_path):
    text = _STANCE_LOG.replace("Detected recompile when torch.compile stance is 'fail_on_recompile'",
                               "Expected all tensors to be on the same device")
    log = _log(tmp_path, text + "[__recompiles] none\n")
    assert not log.stance_raises


_AT = SourceFrame("/p/t.py", 25, "forward")
_CALL = SourceFrame("/p/t.py", 36, "<module>")


def _break(reason: str, explanation: str) -> dict:
    from hlodiff.explain.dynamo_log_findings import breaks_of

    (b,) = breaks_of(DynamoLog("x", "text", [], graph_breaks=[GraphBreak("0/0", reason, explanation, _AT, _CALL)]))
    return {"rule": b.fix_rule, "fix": b.fix}


_SKIPPED = "Attempted to call function marked as skipped"


@pytest.mark.parametrize("explanation", [
    "Dynamo does not know how to trace the builtin `<unknown module>.Random.random.` This function is either a "
    "Python builtin (e.g. _warnings.warn) or a third-party C/C++ Python extension (perhaps created with pybind).",
    "inline in skipfiles: Random.randrange | randrange /usr/lib/python3.10/random.py",
], ids=["torch-2.9", "older"])
def test_a_break_at_python_s_random_asks_for_a_torch_draw_and_a_mask(explanation):
    b = _break(_SKIPPED, explanation)
    assert b["rule"] == "dynamo_graph_break_python_random"
    assert "torch.rand" in b["fix"] and "mask" in b["fix"] and "torch.where" in b["fix"]
    for words in ("expected", "eval", "pad", "limit", ".item()"):
        assert words not in b["fix"], words


def test_the_torch_2_9_break_names_the_call_as_written():
    b = _break(_SKIPPED, "Dynamo does not know how to trace the builtin `<unknown module>.Random.random.` ...")
    assert "(`random.random()`)" in b["fix"]


@pytest.mark.parametrize("explanation, rule", [
    ("Dynamo does not know how to trace the builtin `time.perf_counter.` This function is ...", "dynamo_graph_break"),
    ("Dynamo does not know how to trace the builtin `torch.random.fork_rng.` ...", "dynamo_graph_break"),
    ("Dynamo does not know how to trace the builtin `print.` ...", "dynamo_graph_break_print"),
], ids=["clock", "torch-random", "print"])
def test_other_skipped_calls_keep_their_rows(explanation, rule):
    assert _break(_SKIPPED, explanation)["rule"] == rule


def _guarded(guard: str):
    compiles = [DynamoCompile("0/0", "inner"), DynamoCompile("0/1", "inner", failures=[GuardFailure("0/0", guard)])]
    (r,) = recompiles_of(DynamoLog("x", "text", compiles))
    return r


def test_a_parameter_gone_from_the_compiled_module_names_pruning_and_parametrizations():
    r = _guarded("KeyError on fn._modules['0']._parameters['weight']")
    assert r.fix_rule == "dynamo_parameter_removed" and r.kind == "guard"
    assert "`weight` of `fn._modules['0']`" in r.fix and "prune" in r.fix and "in place" in r.fix
    for words in ("as a tensor", "requires_grad", "dtype", "limit", "pad"):
        assert words not in r.fix, words


@pytest.mark.parametrize("guard, rule", [
    # weight_norm's new class, its source unread: a submodule of another class (round 26's row; a slot not named
    # for dropout gets the swap row without the eval sentence since the last read), never a parameter's
    ("___check_type_id(fn._modules['2'], 94628423920512)", "dynamo_submodule_swap"),
    ("tensor 'fn._modules['2']._parameters['weight']' size mismatch at index 0. expected 3, actual 5",
     "dynamo_parameter_shape"),  # a head replaced by a wider one
    ("KeyError on L['batch']['mask']", "dynamo_guard"),  # a key of an argument, no parameter
], ids=["module-class", "parameter-size", "other-key"])
def test_the_parameter_row_s_look_alikes_keep_theirs(guard, rule):
    assert _guarded(guard).fix_rule == rule


def test_the_call_of_a_function_compiled_under_another_name_is_its_call(tmp_path):
    script = tmp_path / "t.py"
    script.write_text(textwrap.dedent("""\
        import torch
        def loss_fn(x, y):
            return (x - y).sum()
        compiled = torch.compile(loss_fn, backend="openxla")
        other = torch.compile(print)
        for step in range(3):
            loss = compiled(x, y)
        other(1)
        """))
    assert calls_of_function(str(script), "loss_fn") == [7]
    assert calls_of_function(str(script), "print") == [8]  # passed to torch.compile at :5, called as `other`


def _explain(name: str) -> tuple[dict, int]:
    result = cli("explain-recompile", str(SCENARIOS / name), "--json", codes=(0, 1),
                 env={"HLODIFF_SOURCE_MAP": f"/home/user/project={SCENARIOS}"})
    return json.loads(result.stdout), result.exit_code


def test_the_run_stopped_by_the_stance_is_told_at_its_call():
    doc, code = _explain("d20_fail_on_recompile")
    head = doc["headline"]
    assert code == 1 and head["kind"] == "guard" and head["location"]["line"] == 22
    assert "fail_on_recompile" in head["fix"]


@pytest.mark.parametrize("name, kind, rule, code", [
    ("d20_layerdrop_random", "graph_break", "dynamo_graph_break_python_random", (0, 1)),
    ("d20_prune_rounds", "guard", "dynamo_parameter_removed", (1,)),
    ("d20_subclass_batch", "guard", "dynamo_tensor_type", (1,)),
])
def test_the_round_s_runs_are_told_by_their_rows(name, kind, rule, code):
    doc, exit_code = _explain(name)
    assert doc["headline"]["kind"] == kind and doc["dynamo"]["headline"]["fix_rule"] == rule and exit_code in code


def test_the_subclass_recompile_is_placed_at_the_call_read_from_the_source():
    doc, _ = _explain("d20_subclass_batch")
    assert doc["headline"]["location"]["line"] == 33
    assert "x.as_subclass(torch.Tensor)" in doc["headline"]["fix"]  # how to unwrap a subclass, not only a Parameter


@pytest.mark.parametrize("name", ["d20_stash_activation_control", "d20_assert_finite_control",
                                  "d20_fresh_criterion_control"])
def test_the_round_s_controls_have_no_headline(name):
    doc, code = _explain(name)
    assert doc["headline"] is None and code == 0


def test_the_pruning_call_is_the_line_of_the_parameter_gone(tmp_path):
    # read from the source on disk (the log names only torch's wrapper); a file that prunes nothing keeps no line
    doc, _ = _explain("d20_prune_rounds")
    assert doc["dynamo"]["headline"]["located"] == "decision" and doc["headline"]["location"]["line"] == 19
    from hlodiff.dumps.source_lines import SourceLines
    from hlodiff.explain.decision_line import place_dynamo_decisions
    from hlodiff.explain.dynamo_types import DynamoFindings

    script = tmp_path / "t.py"
    script.write_text("import torch\nmodel = torch.compile(net)\nfor s in range(3):\n    model(x)\n")
    r = _guarded("KeyError on fn._modules['0']._parameters['weight']")
    place_dynamo_decisions(DynamoFindings([], recompiles=[r]), SourceLines(), [str(script)])
    assert r.location is None


def _xla_rules(doc: dict) -> set[str]:
    return {c.get("fix_rule") for r in doc["recompilations"] for c in r["causes"]}


def test_the_step_graphs_of_a_function_dynamo_made_no_graph_of_follow_the_break():
    doc, _ = _explain("d20_layerdrop_random")
    assert doc["dynamo"]["eager_break_graphs"] and _xla_rules(doc) == {"dynamo_eager_break"}
    assert doc["headline"]["kind"] == "graph_break"  # the break still leads


@pytest.mark.parametrize("name", ["dyn_tolist_split",  # a function given up whole (WON'T CONVERT): its own row
                                  "dyn_print_break", "d17_train_step_backward"])  # breaks with Dynamo's graphs
def test_breaks_with_graphs_or_a_function_given_up_keep_their_xla_stories(name):
    doc, _ = _explain(name)
    assert not doc["dynamo"]["eager_break_graphs"] and "dynamo_eager_break" not in _xla_rules(doc)


@pytest.mark.parametrize("guard, source, rule", [
    ("___check_type_id(fn._modules['2'], 9462)", "weight_norm(net[2])\n", "dynamo_parametrized"),
    ("___check_type_id(fn._modules['2'], 9462)", "net[2] = torch.nn.Linear(8, 4)\n", "dynamo_submodule_swap"),
    ("___check_type_id(head, 9462)", "weight_norm(net[2])\n", "dynamo_object_type"),  # an argument, no submodule
], ids=["parametrized", "no-parametrization", "argument"])
def test_a_submodule_s_new_class_is_a_parametrization_when_the_source_registers_one(tmp_path, guard, source, rule):
    from hlodiff.dumps.source_lines import SourceLines
    from hlodiff.explain.dynamo_parametrized import mark_parametrized
    from hlodiff.explain.dynamo_types import DynamoFindings

    script = tmp_path / "t.py"
    script.write_text("import torch\nfrom torch.nn.utils.parametrizations import weight_norm\n" + source)
    r = _guarded(guard)
    mark_parametrized(DynamoFindings([], recompiles=[r]), SourceLines(), [str(script)])
    assert r.fix_rule == rule
    if rule == "dynamo_parametrized":
        assert r.expected and r.location.line == 3 and "weight_norm" in r.fix and "before the first compiled" in r.fix


def test_the_weight_norm_run_is_told_at_the_parametrization():
    doc, code = _explain("d20_weight_norm_late")
    assert doc["dynamo"]["headline"]["fix_rule"] == "dynamo_parametrized" and code == 0
    assert doc["headline"]["location"]["line"] == 18


def _live_row(case_id: str) -> dict:
    import importlib.util

    spec = importlib.util.spec_from_file_location("scenario_score_live", FIXTURES / "scenarios" / "score_live.py")
    live = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(live)
    return live.score_live(live.score.local_cases([case_id]))["cases"][0]


@pytest.mark.parametrize("case_id", ["dynamo/d20_fresh_criterion_control",  # e-nolog: the bridge's graphs by ops
                                     "dynamo/r19_d_cfg_dict_rebuilt_control"])  # a look-alike with the debug log
def test_live_a_control_without_dynamo_s_log_tells_the_bridge_s_graphs_as_its_own(case_id):
    row = _live_row(case_id)
    assert row["right"], row


def test_a_break_that_left_dynamo_with_no_graph_says_so():
    doc, _ = _explain("d20_layerdrop_random")
    assert doc["dynamo"]["graph_breaks"][0]["graphs"] == 0
    assert doc["summary"].startswith("Dynamo made no graph of forward: a graph break gave it up")
    doc, _ = _explain("dyn_print_break")  # a break between Dynamo's graphs: its count stays
    assert doc["dynamo"]["graph_breaks"][0]["graphs"] == 2 and doc["summary"].startswith("Dynamo compiled forward")


def test_a_parametrization_counts_only_on_the_guarded_submodule(tmp_path):
    """The tenth stop's last read: weight_norm on layer 0 before the compile, and a head swapped at :5 (guard on
    `_modules['2']`), was told 'a parametrization is registered at :4 ... nothing to fix'. Only a call on the
    guarded submodule (net[2], model.head) is its reason."""
    from hlodiff.dumps.python_calls import calls_on_submodule

    src = tmp_path / "train.py"
    src.write_text("import torch\nnet = torch.nn.Sequential()\nfrom torch.nn.utils.parametrizations import "
                   "weight_norm\nweight_norm(net[0])\nnet[2] = Head()\nweight_norm(model.head)\nweight_norm(net['2'])\n")
    names = ("weight_norm",)
    assert calls_on_submodule(str(src), names, "2") == [7]
    assert calls_on_submodule(str(src), names, "0") == [4]
    assert calls_on_submodule(str(src), names, "head") == [6]
    assert calls_on_submodule(str(tmp_path / "gone.py"), names, "2") == []
