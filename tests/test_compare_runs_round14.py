"""compare-runs rules learned from the fourteenth blind round across a persistent cache
(fixtures/scenarios/runs/runs14_*): one test per row, beside the look-alikes that share the row's evidence but one
fact and must keep the answer they had."""

from __future__ import annotations

from runs_helpers import RUNS, runs_headline as _head
from hlodiff.dumps.cached_run import read_run
from hlodiff.dumps.log_call_sites import call_sites_from_misses
from hlodiff.diff.fix_rules import RULES_BY_NAME
from hlodiff.render.across_runs_fixes import ACROSS_RUNS_RULES, GRAPH_FIXES


def test_table_row_is_the_one_tested():
    assert ACROSS_RUNS_RULES["outputs_jax"] == "outputs_across_runs"
    assert "{summary}" in GRAPH_FIXES["outputs_across_runs"]


# -- outputs that differ between two runs: another program, not a function's calls ---------------------------------

def test_outputs_added_between_runs_are_another_program_not_a_call_returning_other_values():
    # first try: "the function returns other values on some calls (a metric, a log): return the same outputs every
    # call"; run B chose AdamW on the command line, whose moments the step carries in and out (SGD carries none)
    head = _head("runs14_jx_optimizer_adamw")
    assert head["verdict"] == "miss_hlo_differs"
    assert "another program" in head["fix"] and "optimizer" in head["fix"]
    assert "expected once if the change was deliberate" in head["fix"]
    assert "on some calls" not in head["fix"] and "every call" not in head["fix"]


def test_the_within_run_row_keeps_its_words():
    # explain-recompile compares two calls of one process: there a function returning other values on some calls
    # is the story, and the across-runs table is compare-runs' only
    assert "return the same outputs every call" in RULES_BY_NAME["outputs_jax"].text


def test_lookalikes_with_outputs_or_inputs_changed_keep_their_rows():
    # a loss term added (ops and outputs) and another model size (inputs): their own across-runs words
    assert "traced inside library code" in _head("runs12_torch_label_smoothing")["fix"]
    assert "not a first-step warm-up" in _head("runs13_torch_cli_layers")["fix"]
    assert "another program" not in _head("runs12_layernorm_added")["fix"]


# -- logs alone (JAX_EXPLAIN_CACHE_MISSES=1 without JAX_LOG_COMPILES): each program's call line ------------------------

def test_logs_alone_tie_each_program_to_the_line_jax_named_before_it(tmp_path):
    # first try: "jit_train_step  compiled again: another cache key" with no line, though JAX's explain message
    # "TRACING CACHE MISS at .../runs14_max_length_config.py:58:19" stands just before its cache lookup
    run = read_run(str(RUNS / "runs14_max_length_config" / "run_b"), None, [])
    assert [(s.file.rsplit("/", 1)[-1], s.line) for s in run.call_sites] == [
        ("runs14_max_length_config.py", 58), ("runs14_max_length_config.py", 59)]


def test_a_compilation_without_a_message_before_it_gets_no_line(tmp_path):
    # an eager operation's compilation follows another program's: the earlier message is not its call site
    log = tmp_path / "stderr.log"
    log.write_text("TRACING CACHE MISS at /p/train.py:12:4 (<module>):\n  never seen function:\n"
                   "PERSISTENT COMPILATION CACHE MISS for 'jit_step' with key 'k1'\n"
                   "PERSISTENT COMPILATION CACHE MISS for 'jit_add' with key 'k2'\n")
    sites = call_sites_from_misses(str(log), {0: 3, 1: 4})
    assert sites[0] is not None and (sites[0].file, sites[0].line) == ("/p/train.py", 12)
    assert sites[1] is None


def test_logs_with_compiling_lines_keep_their_own_sites():
    # the look-alike: a dumped run with JAX_LOG_COMPILES keeps the sites read_jax_log anchors to Compiling lines
    run = read_run(str(RUNS / "runs_batch_env" / "run_b"), None, [])
    assert run.call_sites and any(s is not None for s in run.call_sites)
