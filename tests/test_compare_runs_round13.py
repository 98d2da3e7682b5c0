"""compare-runs rules learned from the thirteenth blind round across a persistent cache
(fixtures/scenarios/runs/runs13_*) and from round 12's two WRONG_NOW rows: one test per row, each beside the
look-alikes that share the row's evidence but one fact and must keep the answer they had."""

from __future__ import annotations

import inspect
import re

import pytest

from helpers import cli_json
from runs_helpers import RUNS, compare_runs as _compare, copy_runs as _copy, runs_headline as _head
from hlodiff.dumps.cached_run import read_run
from hlodiff.explain.across_runs import compare_runs
from hlodiff.explain.added_function_call import lead_with_new_function_calls
from hlodiff.explain.library_module_calls import FUNCTION_MODULES
from hlodiff.render.across_runs_fixes import ACROSS_RUNS_RULES, CACHE_FIXES, GRAPH_FIXES


def _with_sources(name: str, folder=None, codes=(1,)) -> dict:
    """The headline of ``name``'s runs (or of ``folder``, a copy) with the user's scripts on disk: the runs/ folder,
    or the folder holding the copy."""
    folder = folder or RUNS / name
    return cli_json("compare-runs", str(folder / "run_a"), str(folder / "run_b"), "--source-map",
                    f"/home/user/project={folder.parent}", codes=codes)["headline"]


def test_table_rows_are_the_ones_tested():
    assert {"device_count_header", "device_count_header_torch_xla"} <= set(CACHE_FIXES)
    assert {"state_inputs_across_runs", "library_setting_across_runs_call"} <= set(GRAPH_FIXES)
    for row in ("inputs_user_warmup", "inputs_module_warmup", "inputs_optimizer_warmup", "inputs_first_step_warmup",
                "inputs_library_warmup", "inputs_library_state_dumped", "inputs_state_dumped",
                "inputs_library_state", "inputs_library_state_kept"):
        assert ACROSS_RUNS_RULES[row] == "state_inputs_across_runs"


# -- one computation built for another number of devices (the module header's replica_count) ------------------------

def test_a_replica_count_in_the_header_names_the_device_count_not_xla_flags():
    # first try: "the same HLO under another graph hash ...: compare what else the runs' environments set
    # (torch_xla version, XLA_FLAGS, PJRT_DEVICE)"; run B had CPU_NUM_DEVICES=2 and the header replica_count=2
    head = _head("runs13_torch_device_count")
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "device_count")
    assert "built for 2 devices (replica_count), run A's for 1" in head["fix"]
    assert "CPU_NUM_DEVICES" in head["fix"] and "XLA_FLAGS" not in head["fix"]


def test_lookalike_without_the_header_count_stays_unexplained(tmp_path):
    folder = _copy("runs13_torch_device_count", tmp_path)
    for dumped in (folder / "run_b" / "dump").glob("*.txt"):
        dumped.write_text(dumped.read_text().replace(", replica_count=2", ""))
    head = _compare(folder)["headline"]
    assert (head["verdict"], head["reason"]) == ("miss_key_differs", "unknown")
    assert "replica_count" not in head["fix"]


def test_lookalikes_with_a_flag_keep_it():
    assert _head("runs_torch_flags")["reason"] == "xla_flag"  # the same HLO, a flag in the dumped options
    head = _head("runs_host_device_flag")  # JAX: a host device count flag, the header the same
    assert head["reason"] == "device_count" and "xla_force_host_platform_device_count" in head["fix"]


# -- warm-up rows between two runs: state one run's model holds ----------------------------------------------------

def test_inputs_one_runs_model_holds_are_not_a_first_step_warm_up():
    # first try: "expected warm-up: torch/nn/modules/module.py creates its state on its first step ... (this run is
    # too short to show it)": words for two steps of one run; run B's model had one more layer
    head = _head("runs13_torch_cli_layers")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "inputs")
    assert "not a first-step warm-up" in head["fix"] and "more layers" in head["fix"]
    assert "expected warm-up" not in head["fix"] and "too short" not in head["fix"]


def test_lookalikes_with_inputs_added_keep_their_rows():
    assert "XLA_NO_SPECIAL_SCALARS" in _head("runs9_torch_no_special_scalars")["fix"]
    assert "repeats run A's work" in _head("runs11_torch_microbatches")["fix"]


# -- x64 set in code or by an import ------------------------------------------------------------------------------

def test_x64_names_the_code_and_imports_beside_the_environment():
    # first try: "jax_enable_x64 (JAX_ENABLE_X64) was most likely on in run B": run B's environment had no such
    # variable; its --metrics flag imported a module that calls jax.config.update at import time
    head = _head("runs13_import_x64")
    assert (head["verdict"], head["reason"]) == ("miss_hlo_differs", "dtype")
    assert 'jax.config.update("jax_enable_x64", True)' in head["fix"] and "imports" in head["fix"]


def test_lookalike_x64_from_the_environment_keeps_its_line_and_variable():
    head = _head("runs_x64")
    assert head["reason"] == "dtype" and "JAX_ENABLE_X64" in head["fix"] and head["location"]["line"] == 25


# -- a library function called through its module (nn.CrossEntropyLoss -> cross_entropy) ---------------------------

@pytest.mark.parametrize("function,classes", sorted(FUNCTION_MODULES.items()))
def test_each_module_row_calls_its_function_in_forward(function, classes):
    torch = pytest.importorskip("torch")
    for name in classes:
        source = inspect.getsource(getattr(torch.nn, name).forward)
        assert re.search(rf"\bF\.{function}\(", source), f"{name}.forward does not call F.{function}"


def test_a_loss_called_through_its_module_places_the_call():
    # round 12's WRONG_NOW row: the smoothing ops name only functional.py:3458 (cross_entropy); the script calls
    # it through crit = nn.CrossEntropyLoss(label_smoothing=...) and crit(...) at :28
    head = _with_sources("runs12_torch_label_smoothing")
    assert head["location"]["line"] == 28
    assert "reached from your call at runs12_torch_label_smoothing.py:28" in head["fix"]
    assert "no line of yours" not in head["fix"]


def test_lookalike_without_the_sources_keeps_no_line():
    head = _head("runs12_torch_label_smoothing")
    assert head["location"] is None and "no line of yours" in head["fix"]


def test_lookalike_with_two_calls_of_the_loss_keeps_no_line(tmp_path):
    folder = _copy("runs12_torch_label_smoothing", tmp_path)
    script = (RUNS / "runs12_torch_label_smoothing.py").read_text()
    script = script.replace("    loss = crit(model(x), y)", "    loss = crit(model(x), y)\n    aux = crit(model(x), y)")
    (tmp_path / "runs12_torch_label_smoothing.py").write_text(script)
    head = _with_sources("runs12_torch_label_smoothing", folder)
    assert head["location"] is None and "no line of yours" in head["fix"]


# -- ops added by a function run A never traced --------------------------------------------------------------------

def test_a_function_new_to_the_program_is_placed_at_its_call():
    # round 12's WRONG_NOW row: the added layer norm was placed at jnp.var inside it (_runs12_net_b.py:9)
    head = _head("runs12_layernorm_added")
    assert (head["location"]["file"].rsplit("/", 1)[-1], head["location"]["line"]) == ("_runs12_net_b.py", 14)


def _verdicts(name: str):
    run_a, run_b = (read_run(str(RUNS / name / r), None, []) for r in ("run_a", "run_b"))
    return compare_runs(run_a, run_b, []).verdicts


def test_lookalike_a_function_run_a_traced_too_keeps_its_lines():
    v = next(v for v in _verdicts("runs12_layernorm_added") if v.program == "jit_train_step")
    lines = [f.line for f in v.cause.locations]
    assert lines[0] == 14
    v.cause.locations = v.cause.locations[1:]
    v.a_record = v.b_record  # run A's program names layer_norm: an edited function, not a new one
    lead_with_new_function_calls([v])
    assert v.cause.locations[0].line == 9


def test_lookalike_one_added_line_keeps_it():
    head = _head("rev15_jx_cache_clip")
    assert head["location"]["line"] == 23
