"""New-user review 13 (torch.compile): what the reviewer read wrong or twice, checked on the records they captured."""

from __future__ import annotations

import json

from hlodiff.dumps.dynamo_read import read_dynamo_log

_PRE = "V1127 20:16:09.406000 21044 torch/_logging/structured.py:28] "
_GUARD = ("0/0: T == 4.0" + " " * 49 + "# s = F.log_softmax(student(x) / T, -1)  # "
          "ork/notes/review13/runs/c2_temperature.py:13 in kd_loss")


def _trace(tmp_path, files, definition="/work/notes/review13/runs/c2_temperature.py"):
    """The reviewer's c2_rec TORCH_TRACE records, reduced: the file table, 0/1's recompile reasons, then (as torch
    writes them, after the reasons) 0/1's compilation metrics naming the function's file."""
    lines = [_PRE + json.dumps({"str": [f, i]}) for i, f in enumerate(files)]
    lines.append(_PRE + json.dumps({"artifact": {"name": "recompile_reasons", "encoding": "json"}, "frame_id": 0,
                                    "frame_compile_id": 1, "attempt": 0, "has_payload": "x"}))
    lines += ["\t[", "\t" + json.dumps(_GUARD), "\t]"]
    metrics = {"compile_id": "0/1", "co_name": "kd_loss", "co_filename": definition, "co_firstlineno": 11}
    lines.append(_PRE + json.dumps({"compilation_metrics": metrics}))
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    path.write_text("\n".join(lines) + "\n")
    return read_dynamo_log(str(path))


def test_a_guard_path_torch_cut_in_a_torch_trace_is_the_function_s_file(tmp_path):
    # F3: `hlodiff record` printed "at ork/notes/review13/runs/c2_temperature.py:13" (torch's shorten_filename
    # drops the path shared with torch's folder, "/", and one character more); the metrics name the file whole
    log = _trace(tmp_path, ["/tmp/venv/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py",
                            "/work/notes/review13/runs/c2_temperature.py"])
    (c,) = log.recompiles
    src = c.failures[0].source
    assert (src.file, src.line) == ("/work/notes/review13/runs/c2_temperature.py", 13)
    assert c.failures[0].guard == "T == 4.0"


def test_a_cut_guard_path_is_read_from_the_file_table_only_when_one_file_ends_with_it(tmp_path):
    # the guard's line in a helper file the compiled function calls: the file table names it whole
    helper = "/work/notes/review13/runs/c2_temperature.py"
    log = _trace(tmp_path, ["/work/notes/review13/runs/main.py", helper], definition="/work/notes/review13/runs/main.py")
    assert log.recompiles[0].failures[0].source.file == helper
    # two files end with the cut path: which one is not known, so it stays as torch printed it
    log = _trace(tmp_path, ["/a/work/notes/review13/runs/c2_temperature.py", "/b/work/notes/review13/runs/c2_temperature.py"],
                 definition="/work/notes/review13/runs/main.py")
    assert log.recompiles[0].failures[0].source.file == "ork/notes/review13/runs/c2_temperature.py"


# -- F4: the call of a compiled function, where Dynamo names only its def ------------------------------------------

from types import SimpleNamespace  # noqa: E402

from conftest import FIXTURES  # noqa: E402
from helpers import cli  # noqa: E402
from hlodiff.diff.model import Cause  # noqa: E402
from hlodiff.dumps.dynamo_log import GuardFailure  # noqa: E402
from hlodiff.dumps.python_calls import calls_of_function  # noqa: E402
from hlodiff.explain.dynamo import caller_in_graph  # noqa: E402
from hlodiff.dumps.source_lines import NoSources, SourceLines  # noqa: E402
from hlodiff.explain.dynamo_call_line import place_dynamo_calls  # noqa: E402
from hlodiff.explain.dynamo_types import DynamoRecompile  # noqa: E402
from hlodiff.hlo.model import SourceFrame  # noqa: E402

DYNAMO = FIXTURES / "scenarios" / "dynamo"
_SCRIPT = '''import torch
@torch.compile(backend="openxla")
def forward(x):
    return forward_inner(x)

def forward_inner(x):
    return x * 2

for i in range(3):
    out = forward(torch.ones(4 - i))
'''


def test_the_caller_of_the_compiled_function_s_frame_in_the_xla_graph_is_its_call():
    fn = SourceFrame("/p/c1_batch.py", 9, "forward")
    call = SourceFrame("/p/c1_batch.py", 17, "<module>")
    cause = Cause("shape", "input shape changed", locations=[fn], callers={fn: (call,)})
    assert caller_in_graph(SimpleNamespace(causes=[cause]), "forward") == call
    # a frame of another function, or a caller that is library code, names no call of this one
    assert caller_in_graph(SimpleNamespace(causes=[cause]), "step") is None
    lib = SourceFrame("/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", 1775, "_call_impl")
    cause = Cause("shape", "input shape changed", locations=[fn], callers={fn: (lib,)})
    assert caller_in_graph(SimpleNamespace(causes=[cause]), "forward") is None


def test_the_one_call_of_a_function_in_its_source_file_is_found_outside_its_body(tmp_path):
    script = tmp_path / "c1.py"
    script.write_text(_SCRIPT)
    assert calls_of_function(str(script), "forward") == [10]
    assert calls_of_function(str(script), "forward_inner") == [4]
    assert calls_of_function(str(tmp_path / "gone.py"), "forward") is None


def _recompile(file, located, line):
    return DynamoRecompile("0/1", "forward", "shape", GuardFailure("0/0", "tensor 'x' size mismatch"),
                           SourceFrame(file, line, "forward"), located=located)


def test_a_recompilation_at_the_def_moves_to_the_one_call_and_one_at_a_guard_names_it(tmp_path):
    script = tmp_path / "c1.py"
    script.write_text(_SCRIPT)
    at_def, at_guard = _recompile(str(script), "definition", 2), _recompile(str(script), "guard", 4)
    place_dynamo_calls(SimpleNamespace(recompiles=[at_def, at_guard]), SourceLines())
    assert (at_def.location.line, at_def.located) == (10, "source_call")
    # review 14, F4: the call leads (the README's promise), the guard's line stays beside it
    assert (at_guard.location.line, at_guard.located, at_guard.guard_at.line) == (10, "source_call", 4)
    # two calls: which passed the new value is not known, nothing changes
    script.write_text(_SCRIPT + "forward(torch.ones(1))\n")
    twice = _recompile(str(script), "definition", 2)
    place_dynamo_calls(SimpleNamespace(recompiles=[twice]), SourceLines())
    assert (twice.location.line, twice.located, twice.called_at) == (2, "definition", None)
    # evidence built in memory has no source on disk: nothing moves
    alone = _recompile(str(script), "definition", 2)
    place_dynamo_calls(SimpleNamespace(recompiles=[alone]), NoSources())
    assert (alone.location.line, alone.located) == (2, "definition")


def test_review13_c1_under_record_heads_with_the_loop_s_call_not_the_decorator():
    out = cli("explain-recompile", DYNAMO / "rev13_c1_batch" / "record").stdout.splitlines()
    assert "0/1 at rev13_c1_batch.py:17:" in out[0]
    assert out[1].endswith("rev13_c1_batch.py:17")


def test_review13_c2_by_hand_leads_with_the_call_and_names_the_guard_s_line_when_the_source_is_here():
    """Review 14, F4: the one call (:20) leads, the guard's line (:13) beside it, not the other way round."""
    env = {"HLODIFF_SOURCE_MAP": f"/home/user/project={DYNAMO}"}
    out = cli("explain-recompile", DYNAMO / "rev13_c2_temperature", env=env).stdout.splitlines()
    assert "0/1 at rev13_c2_temperature.py:20:" in out[0], out[:3]
    assert out[1].endswith("rev13_c2_temperature.py:20, the value used at rev13_c2_temperature.py:13"), out[:3]


# -- F6: a number's fix speaks of an lr only for an lr ------------------------------------------------------------

import pytest  # noqa: E402

from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog  # noqa: E402
from hlodiff.explain.dynamo_log_findings import recompiles_of  # noqa: E402


@pytest.mark.parametrize("guard, rule", [
    ("T == 4.0", "dynamo_python_value"),                              # review 13's C2: a temperature
    ("cfg.margin == 0.5", "dynamo_python_value"),
    ("L['lr'] == 0.01", "dynamo_python_value_lr"),                    # an lr passed to a compiled step
    ("self.param_groups[0]['lr'] == 0.1", "dynamo_python_value_lr"),  # a compiled opt.step (dyn_sched_lr)
    ("cfg.learning_rate == 0.001", "dynamo_python_value_lr"),
    ("slr == 0.5", "dynamo_python_value"),                             # a name that only contains the letters
])
def test_only_an_lr_s_fix_speaks_of_optimizer_lrs(guard, rule):
    log = DynamoLog("x", "text", [DynamoCompile("0/0"), DynamoCompile("0/1", "f", failures=[GuardFailure("0/0", guard)]),
                                  DynamoCompile("0/2", "f", failures=[GuardFailure("0/1", guard)])])
    for r in recompiles_of(log):
        assert r.fix_rule == rule
        assert ("optimizer lr" in r.fix) == (rule == "dynamo_python_value_lr")
        assert "pass it as a tensor (torch.tensor(v, device=device))" in r.fix


# -- F6: what is the same is told once -------------------------------------------------------------------------------

from hlodiff.render.dynamo import folded  # noqa: E402
from hlodiff.render.story import fold_alike  # noqa: E402


def test_review13_c2_tells_its_four_recompilations_of_one_cause_as_one_block():
    out = cli("explain-recompile", DYNAMO / "rev13_c2_temperature").stdout.splitlines()
    heads = [line for line in out if line.startswith("Dynamo recompiled kd_loss")]
    assert len(heads) == 1 and "4 times: 0/1 to 0/4" in heads[0], heads
    guard = next(line for line in out if line.strip().startswith("guard"))
    assert "T == 4.0" in guard and "then T == 3.2" in guard
    told = [line for line in out if line.strip()]
    assert len(told) == len(set(told)), "a line printed twice"
    assert not any("optimizer lr" in line for line in out)


def _dyn(cid, guard, difference=None):
    r = DynamoRecompile(cid, "kd_loss", "python_value", GuardFailure(None, guard),
                        SourceFrame("/p/c2.py", 13, "kd_loss"), subject="T", fix="pass it as a tensor", xla="cache_hit")
    r.difference = difference
    return r


def test_recompilations_fold_by_story_but_one_whose_graphs_differed_keeps_its_block():
    groups = folded([_dyn("0/1", "T == 4.0"), _dyn("0/2", "T == 3.2", "input shape changed"), _dyn("0/3", "T == 2.56")])
    assert [[r.compile_id for r in g] for g in groups] == [["0/1", "0/3"], ["0/2"]]


def test_lines_that_read_the_same_are_told_once_with_their_count():
    line = "steady: torch.compile (XLA bridge) compiled once in 5 graphs"
    assert fold_alike([line, "periodic: x", line]) == [f"{line}, for each of 2 graph families", "periodic: x"]


def test_a_graph_s_fix_that_is_the_headline_s_is_not_printed_again():
    # review 13's T2 (warm-up from lr 0): the same ~80-word fix under the headline and in its graph's block
    out = cli("explain-recompile", FIXTURES / "scenarios" / "torch_xla" / "warmup_from_zero").stdout
    assert out.count("keep it off 0 and 1") == 1 and "fix: the same as above" in out
