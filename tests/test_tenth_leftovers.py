"""The ninth stop's leftovers (fixed at the tenth stop): what a user read wrong on real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json

from hlodiff.dumps.loop_counters import passes_loop_counter

SC = FIXTURES / "scenarios"


def _jax(name, sources=True) -> dict:
    folder = SC / "jax" / name
    extra = ("--source-map", f"/home/user/project={SC / 'jax'}") if sources else ()
    given = [str(folder / "record")] if (folder / "record").is_dir() else \
        [str(folder / "dump"), "--jax-log", str(folder / "stderr.log")]
    return cli_json("explain-recompile", *given, *extra, codes=(0, 1))


def _static_rules(doc) -> set[str]:
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}


# 1. a counter is no size under the data's ceiling

def test_a_resumed_global_step_passed_static_is_told_as_a_counter_not_a_ceiling():
    """t10_jx_resumed_step_log: the step resumed at 1000 (1000..1005) is static for a logging branch. Its values are
    bunched like a batch statistic; the first try told 'pass the fixed value the data can reach (the dataset's class
    count; at least 1005)'. The loop's source says it counts: keep it out of the static arguments."""
    doc = _jax("t10_jx_resumed_step_log")
    head = doc["headline"]
    assert head["kind"] == "static_argument" and "static_loop_counter" in _static_rules(doc)
    assert "static_data_ceiling" not in _static_rules(doc)
    assert "lax.cond" in head["fix"] and "ceiling" not in head["fix"] and "class count" not in head["fix"]


@pytest.mark.parametrize("name, rule", [
    ("r19_jx_onehot_max_label", "static_data_ceiling"),   # a batch's largest label + 1, 8, 9, 10: counts up too
    ("jax_static_topk", "static_data_ceiling"),           # positives per query, looped with enumerate
    ("rev6_static_step", "static_value"),                 # the loop's step, values only: traced is the answer
    ("rev14_p4_static_step", "static_value"),
    ("jax_scan_inner_static", "static_loop_count"),
    ("rev9_j2_unrolled_solver", "static_unrolled_loop"),
    ("jax_window_static_start", "static_slice_start"),
])
def test_look_alike_static_arguments_keep_their_rows(name, rule):
    rules = _static_rules(_jax(name))
    assert rule in rules and "static_loop_counter" not in rules, name


def test_without_the_source_the_counter_cannot_be_told_from_a_statistic():
    """The values alone (1000..1005, bunched, counting up by one as r19's 8, 9, 10 do) keep the data's row: the
    limit is the capture's, the source decides."""
    assert "static_loop_counter" not in _static_rules(_jax("t10_jx_resumed_step_log", sources=False))


@pytest.mark.parametrize("loop, call, counted", [
    ("for step in range(1000, 1006):", "f(w, step=step)", True),
    ("for step in range(10):", "f(w, step=start + step)", True),
    ("for i, batch in enumerate(data):", "f(w, step=i)", True),
    ("for batch in data:\n    gstep += 1", "f(w, step=gstep)", True),
    ("for i in range(10):\n    gstep = offset + i", "f(w, step=gstep)", True),
    ("for i, n in enumerate(data):", "f(w, step=n)", False),               # the item, not the index
    ("for i in range(10):\n    k = sizes[i]", "f(w, step=k)", False),        # a lookup by the step
    ("for i in range(10):\n    k = int(y.max()) + 1", "f(w, step=k)", False),
    ("for i in range(10):", "f(w, step=min(i, 4))", False),                 # capped
])
def test_passes_loop_counter(tmp_path, loop, call, counted):
    body = loop + "\n    " + call
    src = tmp_path / "train.py"
    src.write_text("def f(w, step):\n    return w\n\n" + body + "\n")
    line = src.read_text().splitlines().index("    " + call) + 1
    assert passes_loop_counter(str(src), line, "f", "step") is counted


# 2. an attribute the trainer's file sets is no per-instance number

def _dynamo(name) -> dict:
    return cli_json("explain-recompile", str(SC / "dynamo" / name), "--source-map",
                    f"/home/user/project={SC / 'dynamo'}", codes=(0, 1))


def _dynamo_rules(doc) -> set[str]:
    return {r["fix_rule"] for r in doc["dynamo"]["recompiles"]}


def test_a_module_number_the_trainer_anneals_in_another_file_is_no_per_instance_number():
    """t10_d_trainer_sets_attr: the model's file sets self.temperature only in __init__, the trainer's file
    (_t10_trainer.py, its loop in the XLA graphs' frames) sets model.temperature every epoch. The first try read the
    model's file alone: 'a number each instance sets once in __init__ ... compile the whole model once'."""
    rules = _dynamo_rules(_dynamo("t10_d_trainer_sets_attr"))
    assert rules == {"dynamo_module_number"}


def test_a_per_layer_index_set_only_in_init_keeps_its_row():
    """r19_d_layer_idx_attr: set only in Block.__init__ in every user file read (the script itself)."""
    rules = _dynamo_rules(_dynamo("r19_d_layer_idx_attr"))  # the first block's requires_grad beside it
    assert "dynamo_module_instance_number" in rules and "dynamo_module_number" not in rules


def test_user_modules_follow_local_imports_only(tmp_path):
    from hlodiff.dumps.user_modules import user_modules

    (tmp_path / "trainer.py").write_text("def fit(model):\n    model.temperature = 2.0\n")
    (tmp_path / "model.py").write_text("import os, torch\nfrom trainer import fit\nimport missing_mod\n")
    files = user_modules([str(tmp_path / "model.py")])
    assert files == [str(tmp_path / "model.py"), str(tmp_path / "trainer.py")]  # os, torch: not the user's


@pytest.mark.parametrize("other, per_instance", [
    ("def fit(model):\n    model.temperature = 2.0\n", False),        # set again in the trainer
    ("def fit(model):\n    print(model.temperature)\n", True),        # only read there
    ("def fit(model):\n    setattr(model, 'temperature', 2.0)\n", False),
])
def test_set_only_in_init_across_the_user_s_files(tmp_path, other, per_instance):
    from hlodiff.dumps.init_attributes import set_only_in_init_across

    model = tmp_path / "model.py"
    model.write_text("class M:\n    def __init__(self):\n        self.temperature = 4.0\n")
    (tmp_path / "trainer.py").write_text(other)
    assert set_only_in_init_across([str(model), str(tmp_path / "trainer.py")], "temperature") is per_instance


# 3. a user's private function or lambda is no eager op of JAX's

from hlodiff.explain.run_programs import is_users_program  # noqa: E402
from hlodiff.hlo.jax_eager_ops import EAGER_OPS, PRIVATE  # noqa: E402

_PRIVATE = [op.name for op in EAGER_OPS if op.kind == PRIVATE]


@pytest.mark.parametrize("name", _PRIVATE)
def test_each_private_helper_row_is_a_function_of_jax_s_own(name):
    """A row names a function JAX defines (jax/_src) and jits when its public function runs outside jit: listed
    with the eager ops, never as the user's program."""
    jax = pytest.importorskip("jax")
    from pathlib import Path

    src = Path(jax.__file__).parent / "_src"
    assert any(f"def {name}(" in p.read_text(errors="replace") for p in src.rglob("*.py")), name
    assert not is_users_program(f"jit_{name}")


@pytest.mark.parametrize("module", ["jit__train_step", "jit__lambda", "jit__fun", "jit__loss"])
def test_a_user_s_private_function_is_the_user_s_program(module):
    assert is_users_program(module)


def test_compare_runs_lists_the_user_s_private_programs_first_with_their_lines():
    """t10_runs_private_step: `_train_step` and a jitted lambda (jit__train_step, jit__lambda) compiled again for a
    new batch size. The first try listed JAX's jit__mean first and the user's two without their lines."""
    from helpers import cli

    folder = SC / "runs" / "t10_runs_private_step"
    out = cli("compare-runs", str(folder / "run_a"), str(folder / "run_b"), codes=(1,)).output
    listed = [line.strip() for line in out.splitlines() if line.startswith("  jit_")]
    assert [line.split()[0] for line in listed] == ["jit__train_step", "jit__lambda", "jit__mean"]
    assert "(t10_runs_private_step.py:36)" in listed[0] and "t10_runs_private_step.py:" in listed[1]


# 4. jit(grad(f)) and jit(f) are two programs, told apart by the dump alone

def _split_reasons(doc) -> list[str]:
    return [f["split"]["reason"] for f in doc.get("families", []) if f.get("split")]


def test_a_gradient_and_its_forward_of_one_name_are_two_functions_in_a_dump_without_a_log():
    """t10_jx_grad_forward_dump: jax.jit(jax.grad(loss)) and jax.jit(loss) (both jit_loss), captured with XLA's dump
    flag only. The first try told a recompilation, 'either two functions of this name or one function whose static
    argument changed' (exit 1); the gradient's operations are all under JAX's jvp/transpose name stack."""
    doc = cli_json("explain-recompile", str(SC / "jax" / "t10_jx_grad_forward_dump" / "dump"), codes=(0,))
    assert doc["headline"] is None and not [r for r in doc["recompilations"] if r["family"].startswith("jit_loss")]
    assert "another function of this name" in doc["summary"]


def _modules(folder, name):
    from types import SimpleNamespace

    from hlodiff.hlo.parser import parse_module

    return [SimpleNamespace(_module=parse_module(p.read_text()))
            for p in sorted(folder.glob(f"module_*.{name}.before_optimizations.txt"))]


def test_differentiated_reads_the_name_stack_of_the_whole_function():
    from hlodiff.explain.jax_functions import _differentiated

    loss = [_differentiated(g) for g in _modules(SC / "jax" / "t10_jx_grad_forward_dump" / "dump", "jit_loss")]
    assert loss == [True, False]                              # the gradient first (step 0), then the forward
    # a step that takes its gradient inside (its update outside the jvp): neither, nothing split on it
    inside = [_differentiated(g) for g in _modules(SC / "jax" / "rev6_static_step" / "dump", "jit_train_step")]
    assert inside and all(v is None for v in inside)


def test_a_static_argument_s_recompilations_stay_one_family_without_a_log(tmp_path):
    """The look-alike the doubt was kept for: rev6_static_step's dump alone (the step static, 5 compilations of
    one function taking its gradient inside) stays one family, its recompilations told."""
    import shutil

    shutil.copytree(SC / "jax" / "rev6_static_step" / "dump", tmp_path / "dump")
    doc = cli_json("explain-recompile", str(tmp_path / "dump"), codes=(1,))
    steps = [r for r in doc["recompilations"] if r["family"] == "jit_train_step"]
    assert len(steps) == 4 and "another function" not in doc["summary"]


# 5. an expected answer leads with the call that compiled

def _head_lines(name) -> tuple[int, list[int], str]:
    doc = _jax(name)
    head = doc["headline"]
    cause = next(c for r in doc["recompilations"] for c in r["causes"] if c["fix"] == head["fix"])
    return head["location"]["line"], [f["line"] for f in cause["locations"]], cause["fix_rule"]


def test_an_expected_final_evaluation_leads_with_its_call_then_where_its_rows_were_made():
    """jax_final_eval_size: `predict` compiled once more for the 50-row test set after training, told expected. With
    the source on disk the line that made x_test (:32) led; nothing is to change there: the final call (:33) is
    the event, the making line follows it."""
    line, lines, rule = _head_lines("jax_final_eval_size")
    assert rule == "shape_final_call_jax" and line == 33 and lines[:2] == [33, 32]


@pytest.mark.parametrize("name, made", [("x6c_jx_preds_concat_eval", 15), ("rev5_generate_concat", 17)])
def test_a_fix_to_make_keeps_the_making_line_first(name, made):
    """Look-alikes: an argument grown by its own concatenation (a fix: collect on the host, preallocate) leads with
    the line that grows it."""
    line, lines, rule = _head_lines(name)
    assert rule == "shape_growing_concat_jax" and line == made and lines[0] == made


@pytest.mark.parametrize("passed, counted", [
    ("epoch", False),              # the outer loop's counter: one value for a whole inner loop, a few compilations
    ("b", True),                   # the innermost loop's counter: a new value on every call
    ("epoch * 3 + b", True),       # a global step made of both
])
def test_only_the_innermost_loop_counts_calls(tmp_path, passed, counted):
    """The tenth stop's last read: `stage = epoch` passed to every batch's call was told 'the loop's step count ...
    every call compiles again, without end'; it compiles once per epoch."""
    src = tmp_path / "train.py"
    src.write_text("def f(w, step):\n    return w\n\nfor epoch in range(3):\n    for b in range(3):\n"
                   f"        f(w, step={passed})\n")
    assert passes_loop_counter(str(src), 6, "f", "step") is counted
