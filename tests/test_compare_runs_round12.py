"""compare-runs rules learned from the twelfth blind round across a persistent cache
(fixtures/scenarios/runs/runs12_*): one test per row, each beside the look-alikes that share the row's evidence but
one fact and must keep the answer they had."""

from __future__ import annotations

import zlib

from runs_helpers import RUNS, runs_headline as _head
from hlodiff.dumps.cached_run import read_run
from hlodiff.dumps.graph_record import GraphRecord
from hlodiff.explain.exponent_type import EXPONENT_TYPE, exponent_type_differences
from hlodiff.render.across_runs_fixes import ACROSS_RUNS_RULES, GRAPH_FIXES


def test_table_rows_are_the_ones_tested():
    assert {"exponent_type", "library_setting_across_runs"} <= set(GRAPH_FIXES)
    assert ACROSS_RUNS_RULES["ops_library_setting"] == "library_setting_across_runs"


def _step(name: str, run: str, program: str = "jit_train_step"):
    """A JAX run's first compilation of ``program``."""
    return next(r for r in read_run(str(RUNS / name / run), None, []).records if r.module_name == program)


def _program(*ops: tuple[str, int]) -> GraphRecord:
    """A one-computation JAX program with one instruction per (primitive, line) of step.py."""
    body = "\n".join(f'  %p{i} = f32[4]{{0}} multiply(%x, %x), metadata={{op_name="jit(f)/{prim}" '
                     f'source_file="/home/u/step.py" source_line={line}}}' for i, (prim, line) in enumerate(ops))
    text = (f"HloModule jit_f\n\nENTRY %main (x: f32[4]) -> f32[4] {{\n  %x = f32[4]{{0}} parameter(0)\n{body}\n"
            f"  ROOT %r = f32[4]{{0}} add(%x, %x)\n}}\n")
    return GraphRecord(path="run", index=0, kind="xla_dump", start_line=1, packed_text=zlib.compress(text.encode()))


# -- an exponent written 2 in one run and 2.0 in the other ------------------------------------------------------------

def test_an_int_then_float_exponent_names_its_type_not_another_path():
    # first try: "the traced Python took another path ... (a flag, a config or command line value, a static
    # argument)": right in kind, but the user could not tell that 2 and 2.0 were the difference
    head = _head("runs12_pow_config")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "ops")
    assert head["location"]["line"] == 32
    assert "integer (integer_pow) at runs12_pow_config.py:32" in head["fix"]
    assert "float (pow) at runs12_pow_config.py:32" in head["fix"] and "int(" in head["fix"]
    assert "took another path" not in head["fix"]


def test_exponent_type_reads_the_primitive_each_line_traced():
    diff = exponent_type_differences(_step("runs12_pow_config", "run_a"), _step("runs12_pow_config", "run_b"))
    assert [(d.name, d.a, d.b) for d in diff] == [(EXPONENT_TYPE, "integer (integer_pow) at runs12_pow_config.py:32",
                                                  "float (pow) at runs12_pow_config.py:32")]


def test_exponent_type_wants_one_kind_on_each_side_of_one_line():
    int_at_7, float_at_7 = _program(("integer_pow", 7)), _program(("pow", 7))
    assert exponent_type_differences(int_at_7, float_at_7)[0].b == "float (pow) at step.py:7"
    assert exponent_type_differences(float_at_7, int_at_7)[0].a == "float (pow) at step.py:7"
    # another integer power at the same line (2 -> 3): the same primitive, nothing to say
    assert exponent_type_differences(int_at_7, _program(("integer_pow", 7), ("integer_pow", 7))) == []
    # the float power at another line: not one power written two ways
    assert exponent_type_differences(int_at_7, _program(("pow", 9))) == []
    # both kinds at the line in one run: not a type swapped
    assert exponent_type_differences(int_at_7, _program(("integer_pow", 7), ("pow", 7))) == []


def test_lookalike_a_code_change_keeps_the_path_words():
    # a layer norm added (more ops, the loss's integer power in both runs) and a clip turned on by the environment
    for name in ("runs12_layernorm_added", "rev15_jx_cache_clip"):
        head = _head(name)
        assert head["verdict"] == "miss_hlo_differs" and "exponent" not in head["fix"], name


def test_lookalike_a_static_loop_count_keeps_its_words():
    head = _head("runs7_static_argv")
    assert "exponent" not in head["fix"] and "integer_pow" not in head["fix"]


# -- a library call's setting changed between the runs (torch_xla) ----------------------------------------------------

def test_a_library_calls_setting_between_runs_is_expected_once_if_deliberate():
    # first try: the within-run row's "keep its settings the same" only; between two runs a setting of the run
    # (a loss's option from the command line) is a deliberate change as often as not
    head = _head("runs12_torch_label_smoothing")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "ops")
    assert "torch/nn/functional.py:" in head["fix"] and "between two runs" in head["fix"]
    assert "expected once if it was changed on purpose" in head["fix"]
    assert "same settings in both runs" in head["fix"]


def test_lookalike_more_micro_batches_keep_the_loop_count_words():
    # ops and inputs added by a loop that ran more times: its own row, not a library setting
    head = _head("runs11_torch_microbatches")
    assert "repeats run A's work" in head["fix"] and "library code" not in head["fix"]
