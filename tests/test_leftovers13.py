"""The twelfth stop's leftovers, mended at the thirteenth (docs/accuracy.md, "Leftovers of the twelfth stop"): each on
its scenario and on the look-alikes that share its evidence."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json
from hlodiff.diff.fixes import choose

SCEN = FIXTURES / "scenarios"


def _first_line(*parts: str, codes=(0, 1)) -> str:
    return cli("explain-recompile", str(SCEN.joinpath(*parts)), codes=codes).stdout.splitlines()[0]


# -- a family that came back to one graph twice, among others seen once, recurs ---------------------------------

def test_lengths_drawn_from_a_few_values_recur():
    """r27_tx_scan_seq_len: lengths 9,9,6,9,12,9,9,9 (A,A,B,A,C,A,A,A): back to A twice, not 3 compilations."""
    first = _first_line("torch_xla", "r27_tx_scan_seq_len")
    assert "recurring:" in first and "(A,A,B,A,C,A,A,A)" in first


def test_one_return_among_new_graphs_is_not_called_recurring():
    # look-alike: r16_tx_randaug_ops, A,B,A,C,D,E,F,G: one draw seen again, new graphs after it
    first = _first_line("torch_xla", "r16_tx_randaug_ops")
    assert "recurring" not in first


def test_a_graph_left_once_and_back_stays_one_off():
    # look-alike: one graph in a steady run, then back (A,...,B,A,...): two variants, a one-off, not recurring
    first = _first_line("torch_xla", "rev10_tx_item_mid")
    assert "one-off" in first and "recurring" not in first


# -- a weight tied after the first compiled steps: one parameter's update leaves the step ------------------------

TIE = SCEN / "dynamo" / "d27_tie_late"


def test_a_weight_tied_after_two_compiled_steps_is_told_as_a_switch_with_the_tie_as_its_fix():
    doc = cli_json("explain-recompile", str(TIE), codes=(1,))
    head = doc["headline"]
    rules = {c["fix_rule"] for r in doc["recompilations"] if r["graph"] == head["graph"] for c in r["causes"]}
    assert head["kind"] == "outputs" and "outputs_update_dropped" in rules
    assert "tie" in head["fix"] and "__init__" in head["fix"]
    assert "freez" not in head["fix"] and "requires_grad" not in head["fix"] and "a value is kept" not in head["fix"]
    assert any(p.startswith("switched") for p in doc["patterns"])


def test_the_first_compiled_call_s_cut_step_stays_warm_up():
    # the same run's step 1 (B, after the bridge cut step 0) is still the first call's warm-up
    doc = cli_json("explain-recompile", str(TIE), codes=(1,))
    rules = [c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]]
    assert "dynamo_first_call_sync" in rules


def test_update_dropped_rows_need_their_fact():
    assert choose("outputs", frozenset({"is:outputs", "update_dropped"})).name == "outputs_update_dropped"
    assert choose("ops", frozenset({"is:ops", "update_dropped"})).name == "ops_update_dropped"
    assert choose("outputs", frozenset({"is:outputs", "update_dropped", "comes_back"})).name != "outputs_update_dropped"


# -- a compiled model converted to bfloat16 after compiling: no retrace, the conversion is the story ---------------

BF16 = SCEN / "dynamo" / "d28_to_bf16_midrun"


def test_a_model_converted_after_compiling_heads_with_the_conversion_not_the_bridge_s_warm_up():
    doc = cli_json("explain-recompile", str(BF16), codes=(0, 1))
    head = doc["headline"]
    assert head["kind"] == "dtype" and "float32 -> bfloat16" in head["fix"]
    assert "before calling torch.compile" in head["fix"] and "pad" not in head["fix"]
    assert doc["dynamo"]["converted"][0]["fix_rule"] == "dynamo_converted_after_compile"


def test_a_bfloat16_copy_or_a_retraced_dtype_is_no_conversion_after_compiling():
    # look-alikes: a bf16 copy of the model through the same compiled function (Dynamo retraces for it), a dtype
    # passed per call at two sites
    for name in ("d14_bf16_eval_copy", "dyn_dtype_two_sites", "rev7_tc_dtype"):
        doc = cli_json("explain-recompile", str(SCEN / "dynamo" / name), codes=(0, 1))
        assert doc["dynamo"]["converted"] == [], name


# -- a JAX argument's line follows the function's argument order, as the summary does ------------------------------

def test_two_arguments_padded_alike_are_told_at_the_first_argument_s_line():
    """runs10_pad_longest: tokens (:36) and mask (:37) both padded to max_len; the summary names tokens, and the line
    was mask's (name order: mask.1 before tokens.1)."""
    run = SCEN / "runs" / "runs10_pad_longest"
    env = {"HLODIFF_SOURCE_MAP": f"/home/user/project={SCEN / 'runs'}"}  # the source on disk, as score.py reads it
    doc = cli_json("compare-runs", str(run / "run_a"), str(run / "run_b"), codes=(0, 1), env=env)
    assert doc["headline"]["location"]["line"] == 36


# -- optimizer state begun late is told at the line of the graph that reads it back -------------------------------

def test_momentum_raised_late_is_told_at_the_optimizer_step_that_reads_the_buffers():
    """r11_tx_momentum_warmup: the buffers begun at step 3 are outputs with no instruction of their own (line
    unknown); step 4's graph reads them in torch/optim/sgd.py, placed at `opt.step()` (:20)."""
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "r11_tx_momentum_warmup"), codes=(0, 1),
                   env={"HLODIFF_SOURCE_MAP": f"/home/user/project={SCEN / 'torch_xla'}"})
    head = doc["headline"]
    assert head["kind"] == "outputs" and head["location"]["line"] == 20


def test_every_begun_row_names_a_read_row_of_the_table():
    from hlodiff.diff.fix_rules import RULES_BY_NAME
    from hlodiff.explain.optimizer_state_lines import BEGUN_READ

    for begun, read in BEGUN_READ.items():
        assert begun in RULES_BY_NAME and read in RULES_BY_NAME


# -- one change repeated per stage: the line found at one recompilation is the family's ---------------------------

def test_an_unrolled_loop_s_first_stage_takes_the_loop_body_line_its_next_stage_names():
    """inner_loop_count: the first added block's lead is a dot in torch's frames only; the second names :16."""
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "inner_loop_count"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "ops" and head["location"]["line"] == 16


def test_same_change_rows_are_rows_of_the_table():
    from hlodiff.diff.fix_rules import RULES_BY_NAME
    from hlodiff.explain.sibling_lines import SAME_CHANGE_ROWS

    assert SAME_CHANGE_ROWS <= set(RULES_BY_NAME)
