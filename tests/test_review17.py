"""New-user review 17, F1, F2, F3, F5 (the reviewer's programs: fixtures/scenarios/*/rev17_*).

F1: `if step % 3 == 0: print(...)` inside a compiled function, `step` a Python int: hlodiff said "pass it as a
tensor", which turns the guard into a data-dependent branch on every call (the reviewer tried it). F2: that break,
"Data-dependent branching", was told the boolean-mask / nonzero row of an op whose output size follows the data.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json

from hlodiff.dumps.branch_only_source import steers_only_branches
from hlodiff.dumps.dynamo_log import DynamoCompile, DynamoLog, GraphBreak
from hlodiff.explain.dynamo import breaks_of
from hlodiff.hlo.model import SourceFrame

DYN = FIXTURES / "scenarios" / "dynamo"


def _dynamo(name: str) -> dict:
    return cli_json("explain-recompile", DYN / name, "--source-map", f"/home/user/project={DYN}",
                    codes=(0, 1))["dynamo"]


# -- F1: a number that only steers Python control flow ---------------------------------------------------------------

def test_a_step_counter_read_only_by_a_print_branch_is_told_to_move_the_branch_out_not_to_become_a_tensor():
    recompiles = _dynamo("rev17_tc_print_step")["recompiles"]
    assert recompiles and {r["fix_rule"] for r in recompiles} == {"dynamo_int_steers_branch"}
    fix = recompiles[0]["fix"]
    assert "out of the compiled function" in fix and "print" in fix
    assert "torch.tensor(" not in fix and "pass it as a tensor" not in fix


@pytest.mark.parametrize("name", ["rev15_tc_warmup_step", "dyn_loop_index", "dyn_call_counter",
                                  "rev8_tc_diffusion_t", "dyn_int_scale"])
def test_a_number_that_feeds_tensor_math_keeps_its_row(name):
    # look-alikes: Python-number guards whose number is used in math, as an index, or changed inside the call
    rules = {r["fix_rule"] for r in _dynamo(name)["recompiles"]}
    assert rules and "dynamo_int_steers_branch" not in rules, rules


_SOURCES = {
    "branch_only": "def forward(x, step):\n    out = x * 2\n    if step % 3 == 0:\n"
                   "        print(f'step {step}')\n    return out\n",
    "logged": "import logging\nlog = logging.getLogger()\ndef forward(x, step):\n    while step > 5:\n"
              "        log.info('late %d', step)\n        break\n    return x\n",
    "math_too": "def forward(x, step):\n    if step % 3 == 0:\n        print(step)\n    return x * step\n",
    "index": "def forward(x, step):\n    if step:\n        pass\n    return x[:, step]\n",
    "assigned": "def forward(x, step):\n    step += 1\n    if step % 3 == 0:\n        print(step)\n    return x\n",
    "print_only": "def forward(x, step):\n    print(step)\n    return x\n",
    "nested": "def forward(x, step):\n    if step:\n        pass\n    f = lambda y: y * step\n    return f(x)\n",
    # the branch does work of its own: moving it out would change the result (eleventh stop's read)
    "branch_work": "def forward(x, step):\n    out = x * 2\n    if step % 3 == 0:\n        out = out * 0.5\n"
                   "    return out\n",
    "else_work": "def forward(x, step):\n    out = x * 2\n    if step % 3 == 0:\n        print(step)\n"
                 "    elif step > 7:\n        out = out + 1\n    return out\n",
    "two_defs": "def forward(x, step):\n    if step:\n        print(step)\n    return x\n"
                "class M:\n    def forward(self, x, step):\n        return x * step\n",
}


@pytest.mark.parametrize("case, expected", [
    ("branch_only", True), ("logged", True),
    ("math_too", False), ("index", False), ("assigned", False), ("print_only", False), ("nested", False),
    ("two_defs", False), ("branch_work", False), ("else_work", False),
])
def test_only_a_number_read_in_tests_and_reports_steers_only_branches(tmp_path, case, expected):
    f = tmp_path / "m.py"
    f.write_text(_SOURCES[case])
    assert steers_only_branches(str(f), "forward", "step") is expected


def test_without_the_source_on_disk_nothing_is_claimed(tmp_path):
    assert steers_only_branches(str(tmp_path / "gone.py"), "forward", "step") is False


# -- F2: an `if` on a tensor is a branch, not a data-sized op ------------------------------------------------------------

def _break(reason: str, explanation: str) -> GraphBreak:
    return GraphBreak("0/0", reason, explanation, at=SourceFrame("/p/t.py", 12, "forward"),
                      call=SourceFrame("/p/t.py", 18, "<module>"))


_BRANCH = _break("Data-dependent branching", "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). "
                 "Dynamo does not support tracing dynamic control flow.")
_NONZERO = _break("Dynamic shape operator", "Operator `aten.nonzero.default`'s output shape depends on input Tensor "
                  "data.")


def _break_fix(brk: GraphBreak):
    (b,) = breaks_of(DynamoLog("x", "text", [DynamoCompile("0/0", "forward")], graph_breaks=[brk]))
    return b


def test_an_if_on_a_tensor_is_told_as_a_branch():
    b = _break_fix(_BRANCH)
    assert b.fix_rule == "dynamo_graph_break_data_dependent_branch"
    assert "torch.where" in b.fix and "torch.cond" in b.fix and "outside the compiled function" in b.fix
    for words in ("masked_select", "nonzero", "boolean-mask", "output size"):
        assert words not in b.fix, words


def test_an_op_sized_by_the_data_keeps_the_mask_row():
    b = _break_fix(_NONZERO)
    assert b.fix_rule == "dynamo_graph_break_data_dependent" and "masked_select" in b.fix


def test_the_tensor_if_scenario_is_told_as_a_branch():
    (b,) = _dynamo("dyn_tensor_if")["graph_breaks"]
    assert b["fix_rule"] == "dynamo_graph_break_data_dependent_branch" and "masked_select" not in b["fix"]


# -- F3: a run that loaded every program from the persistent cache --------------------------------------------------

RUNS = FIXTURES / "scenarios" / "runs"
JAX = FIXTURES / "scenarios" / "jax"


def _explain_text(folder, engine_dir, *extra) -> tuple[str, int]:
    from helpers import cli

    result = cli("explain-recompile", folder, "--source-map", f"/home/user/project={engine_dir}", *extra, codes=(0, 1))
    return result.stdout, result.exit_code


def test_a_fully_cached_run_has_one_count_and_exits_0():
    out, code = _explain_text(RUNS / "rev17_jx_all_cached" / "run_b", RUNS)
    first = out.splitlines()[0]
    assert "0 compilations" in first and "0 recompilations" in first and "nothing compiled" in first
    assert "story: " not in out  # no "story: 2 recompilations" of eager ops loaded from the cache
    assert code == 0
    # the weak_type finding is still told: two cache entries for one step
    assert "weak_type" in out and "one type every call" in out


def test_a_fully_cached_run_has_nothing_unexpected_in_json():
    doc = cli_json("explain-recompile", RUNS / "rev17_jx_all_cached" / "run_b", codes=(0, 1))
    assert doc["unexpected"] == [] and doc["headline"]["kind"] == "weak_type"


def test_a_run_that_compiled_its_weak_type_recompilation_still_exits_1():
    # look-alike: the same program without a cache (run A compiled both train steps): the weak_type is unexpected
    doc = cli_json("explain-recompile", RUNS / "rev17_jx_all_cached" / "run_a", codes=(1,))
    assert doc["unexpected"] and doc["headline"]["kind"] == "weak_type"


# -- F5: eager staging ops are no recompilations; where the differently placed array was made ----------------------

def test_an_eager_staging_op_is_not_counted_as_a_recompilation():
    out, code = _explain_text(JAX / "rev17_jx_sharded_eval", JAX)
    first = out.splitlines()[0]
    assert "1 recompilation " in first and "2 recompilations" not in first and "of them" not in first
    assert "eager op outside jit" in first and code == 1


def test_an_eager_op_for_another_array_is_not_diffed_against_it():
    out, _ = _explain_text(JAX / "rev17_jx_sharded_eval", JAX)
    block = out[out.index("compiled for another shape (jit_stage)"):]
    assert "0% alike; expected" not in block.splitlines()[0] and "input shape changed" not in block
    assert "no change of yours" in block
    verbose, _ = _explain_text(JAX / "rev17_jx_sharded_eval", JAX, "-v")
    assert "input shape changed on parameter" in verbose  # -v still lists the differences


def test_a_sharding_cause_names_the_line_that_made_the_array_then_the_call():
    doc = cli_json("explain-recompile", JAX / "rev17_jx_sharded_eval", "--source-map", f"/home/user/project={JAX}",
                   codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "sharding" and head["location"]["line"] == 31  # xv = jnp.asarray(...)
    out, _ = _explain_text(JAX / "rev17_jx_sharded_eval", JAX)
    assert "rev17_jx_sharded_eval.py:31" in out and "rev17_jx_sharded_eval.py:35" in out


def test_without_the_source_the_sharding_cause_stays_at_the_call():
    doc = cli_json("explain-recompile", JAX / "rev17_jx_sharded_eval", codes=(1,))
    assert doc["headline"]["location"]["line"] == 35


@pytest.mark.parametrize("code, expected", [
    ("if step % 3 == 0:", True), ("    elif step > 10:  # late", True), ("while step < n:", True),
    ("out = x * step", False), ("if steps_done:", False), ("if cfg.step:", False), ("for i in range(step):", False),
])
def test_the_guards_own_line_shows_a_number_tested_by_a_branch(code, expected):
    from hlodiff.explain.dynamo_branch_only import tested_in_branch

    assert tested_in_branch("step", code) is expected


def test_without_the_source_a_tested_number_is_told_both_ways_branch_first():
    # the capture read where its program is not on disk (no --source-map): Dynamo's quoted `if` line is the evidence
    doc = cli_json("explain-recompile", DYN / "rev17_tc_print_step", codes=(0, 1))["dynamo"]
    (rule,) = {r["fix_rule"] for r in doc["recompiles"]}
    fix = doc["recompiles"][0]["fix"]
    assert rule == "dynamo_int_tested_in_branch"
    assert fix.index("out of the compiled function") < fix.index("torch.tensor(")


def test_a_batch_taken_from_a_loops_iterator_keeps_the_call():
    # look-alike: the differently placed batch comes out of a prefetching generator (`for step, (x, y) in ...`):
    # the loop's header made nothing, so the call stays the line (jax_prefetch_fallback)
    doc = cli_json("explain-recompile", JAX / "jax_prefetch_fallback", "--source-map", f"/home/user/project={JAX}",
                   codes=(1,))
    assert doc["headline"]["kind"] == "sharding" and doc["headline"]["location"]["line"] == 34


def test_records_last_line_counts_as_the_summary_of_a_fully_cached_run(capsys):
    # `record`'s verdict line (explain with the command's exit status): "3 recompilations (1 unexpected)" before
    from hlodiff.cli_explain import explain_paths

    with pytest.raises(SystemExit) as stop:
        explain_paths([str(RUNS / "rev17_jx_all_cached" / "run_b")], as_json=False, html_path=None, exit_status=0)
    assert stop.value.code == 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("hlodiff: 0 recompilations;") and "unexpected" not in last, last
