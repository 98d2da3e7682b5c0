"""The library host reads table (hlodiff/diff/library_reads.py): one test per row, on the stack an early execution
records (innermost frame first, as torch_xla's debug log and save-tensors file print it), and the user's own read
beside it (review 2026-11-27, F10)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from helpers import cli_json
from hlodiff.diff.library_reads import LIBRARY_READS, library_read
from hlodiff.hlo.model import SourceFrame

SITE = "/usr/lib/python3.11/site-packages"
USER = SourceFrame("/home/user/project/train.py", 14, "<module>")

# each row: the innermost library frames a real stack of that call shows (file, line, function)
STACKS = {
    "clip_grad_norm_nonfinite_xla": [(f"{SITE}/torch_xla/_patched_functions.py", 51, "clip_grad_norm_")],
    "clip_grad_norm_nonfinite": [(f"{SITE}/torch/nn/utils/clip_grad.py", 110, "_get_total_norm"),
                                 (f"{SITE}/torch/nn/utils/clip_grad.py", 44, "_no_grad_wrapper"),
                                 (f"{SITE}/torch/nn/utils/clip_grad.py", 220, "clip_grad_norm_")],
    "grad_scaler_found_inf": [(f"{SITE}/torch/amp/grad_scaler.py", 356, "_maybe_opt_step"),
                              (f"{SITE}/torch/amp/grad_scaler.py", 461, "step")],
    "distribution_validate_args": [(f"{SITE}/torch/distributions/distribution.py", 76, "__init__"),
                                   (f"{SITE}/torch/distributions/normal.py", 66, "__init__")],
    "embedding_bag_offsets": [(f"{SITE}/torch/nn/functional.py", 2745, "embedding_bag"),
                              (f"{SITE}/torch/nn/modules/sparse.py", 465, "forward")],
    # round 10 (r10_ctc_fallback's PT_XLA_DEBUG log): the CPU fallback of aten::_ctc_loss, called from F.ctc_loss
    "ctc_loss_cpu_fallback": [(f"{SITE}/torch/nn/functional.py", 3071, "ctc_loss"),
                              (f"{SITE}/torch/nn/modules/loss.py", 2014, "forward")],
    # round 14 (r14_tx_embed_maxnorm's save file): the CPU fallback of aten::embedding_renorm_ under max_norm
    "embedding_max_norm_renorm": [(f"{SITE}/torch/nn/functional.py", 2425, "_no_grad_embedding_renorm_"),
                                  (f"{SITE}/torch/nn/functional.py", 2541, "embedding"),
                                  (f"{SITE}/torch/nn/modules/sparse.py", 192, "forward")],
    # Dynamo round 24 (d24_save_on_cpu_steps's PT_XLA_DEBUG log): save_on_cpu's pack hook, under the user's call
    "save_on_cpu_pack": [(f"{SITE}/torch/autograd/graph.py", 380, "pack_to_cpu")],
    # round 25 (r25_tx_resume_state_to_device's PT_XLA_DEBUG log): AdamW's bias correction reads a step counter
    # that a checkpoint restore moved to the device
    # round 27 (r27_tx_prune_schedule's PT_XLA_DEBUG log): a second l1_unstructured on one weight, its masks
    # combined by a boolean index inside PruningContainer
    "prune_combine_masks": [(f"{SITE}/torch/nn/utils/prune.py", 400, "_combine_masks"),
                            (f"{SITE}/torch/nn/utils/prune.py", 406, "compute_mask"),
                            (f"{SITE}/torch/nn/utils/prune.py", 186, "apply"),
                            (f"{SITE}/torch/nn/utils/prune.py", 933, "l1_unstructured")],
    "optimizer_step_count_on_device": [(f"{SITE}/torch/optim/optimizer.py", 97, "_get_value"),
                                       (f"{SITE}/torch/optim/adam.py", 519, "_single_tensor_adam"),
                                       (f"{SITE}/torch/optim/adam.py", 953, "adam"),
                                       (f"{SITE}/torch/optim/optimizer.py", 150, "maybe_fallback")],
}


def test_every_row_has_its_stack():
    assert set(STACKS) == {r.name for r in LIBRARY_READS}


@pytest.mark.parametrize("row", LIBRARY_READS, ids=[r.name for r in LIBRARY_READS])
def test_each_row_names_the_library_read_on_its_stack(row):
    frames = [SourceFrame(*f) for f in STACKS[row.name]] + [USER]
    assert library_read(frames) is row
    # the user's own read (their line innermost) is theirs, even when the library call is further out
    assert library_read([USER] + frames) is None
    # another function of the same file makes no read the row knows
    other = [SourceFrame(f.file, f.line, "something_else") for f in frames[:-1]] + [USER]
    assert library_read(other) is None
    assert row.fix and row.call and row.reads


def test_a_step_split_by_torch_xla_s_clip_grad_norm_gets_the_flag_not_read_it_later():
    """The real run (fixtures/scenarios/torch_xla/review2_clip_nonfinite): three graphs a step, cut by the isnan and
    isinf reads inside torch_xla's patched clip_grad_norm_: a split, and the fix is the flag at the user's call."""
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios/torch_xla/review2_clip_nonfinite/graphs.hlo.0"),
                   codes=(1,))
    head = doc["headline"]
    assert doc["patterns"][0].startswith("split:") and "split in three" in doc["patterns"][0]
    assert "error_if_nonfinite=False" in head["fix"] and head["location"]["line"] == 14
    assert "read it after the sync" not in head["fix"]


@pytest.mark.parametrize("fixture", ["torch_xla/item_partial", "torch_xla/print_partial"])
def test_a_user_s_own_early_read_keeps_the_read_later_fix(fixture):
    """Look-alikes: the user's .item()/print cut the step; no library row may claim it."""
    folder = FIXTURES / fixture
    doc = cli_json("explain-recompile", str(folder / "graphs.hlo.0"), codes=(0, 1))
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"]]
    assert fixes and not any("error_if_nonfinite" in f or "library call cuts" in f for f in fixes)


def test_a_step_split_by_torch_distributions_validation_gets_validate_args_false():
    """Round 5 (fixtures/scenarios/torch_xla/dist_validate_args): Normal(mu, std) on device tensors validates its
    parameters in __init__ and the target in log_prob, every step: a split whose fix is validate_args=False at the
    user's Normal(...) line, not "read it after the sync" (the user reads nothing)."""
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios/torch_xla/dist_validate_args"), codes=(1,))
    head = doc["headline"]
    assert doc["patterns"][0].startswith("split:")
    assert "validate_args=False" in head["fix"] and head["location"]["line"] in (15, 16)
    assert "read it after the sync" not in head["fix"]


def test_the_sample_check_of_log_prob_is_the_same_row():
    """log_prob's sample check (Distribution._validate_sample) is the row's other function."""
    frames = [SourceFrame(f"{SITE}/torch/distributions/distribution.py", 321, "_validate_sample"),
              SourceFrame(f"{SITE}/torch/distributions/normal.py", 89, "log_prob"), USER]
    assert library_read(frames).name == "distribution_validate_args"


def test_a_step_cut_by_save_on_cpu_under_torch_compile_names_the_offloading_context():
    """Dynamo round 24 (fixtures/scenarios/dynamo/d24_save_on_cpu_steps): every third step's compiled forward runs
    under save_on_cpu(); its pack hook copies a saved activation to the host mid-step, and the bridge's own graphs
    run between that cut and the step's sync. The step's sync is still the rest of the cut step: the headline is
    the cut at the call inside the context, with the context's fix, never a loop count to pad or a read to move."""
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios/dynamo/d24_save_on_cpu_steps"), codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "partial" and head["location"]["line"] == 21
    assert "save_on_cpu" in head["fix"] and "pad" not in head["fix"] and "read it after the sync" not in head["fix"]
def test_a_step_cut_by_adam_reading_step_counters_moved_to_the_device_gets_the_cpu_state_fix():
    """Round 25 (fixtures/scenarios/torch_xla/r25_tx_resume_state_to_device): a rollback restores the optimizer's
    state through a to-device helper; AdamW then reads each step counter on the XLA device with .item() inside
    opt.step(): the fix is to keep the counters on the CPU (the state as saved), not "read it after the sync" (the
    user reads nothing)."""
    doc = cli_json("explain-recompile", str(FIXTURES / "scenarios/torch_xla/r25_tx_resume_state_to_device"),
                   codes=(1,))
    head = doc["headline"]
    assert head["location"]["line"] == 39
    assert "step counters on the CPU" in head["fix"] and "capturable=True" in head["fix"]
    assert "read it after the sync" not in head["fix"] and "add_step_closure" not in head["fix"]


def test_a_cpu_step_counter_read_on_the_host_is_no_library_read_of_the_row():
    """Look-alike: the user's own .item() of a loss beside an optimizer step (rev15_tx_stable_item_control reads
    its loss after the sync; item_partial before it) names no optimizer row: the row needs _get_value innermost."""
    frames = [SourceFrame(f"{SITE}/torch/optim/adam.py", 519, "_single_tensor_adam"), USER]
    assert library_read(frames) is None


@pytest.mark.parametrize("caller", [
    # ASGD keeps step, eta and mu on the parameter's device itself and reads them every step: no restore moved them
    (f"{SITE}/torch/optim/asgd.py", 269, "_single_tensor_asgd"),
    (f"{SITE}/torch/optim/asgd.py", 255, "_single_tensor_asgd"),
    # the foreach paths of Adamax and NAdam read lr (a tensor lr) with _get_value, no step counter
    (f"{SITE}/torch/optim/adamax.py", 415, "<listcomp>"),
    (f"{SITE}/torch/optim/nadam.py", 569, "_multi_tensor_nadam"),
])
def test_a_get_value_read_of_another_optimizer_value_is_not_the_step_counter_row(caller):
    """The eleventh stop's read: any _get_value frame used to match; the row needs a single-tensor step's caller."""
    frames = [SourceFrame(f"{SITE}/torch/optim/optimizer.py", 97, "_get_value"), SourceFrame(*caller), USER]
    assert library_read(frames) is None


@pytest.mark.parametrize("file, function", [
    ("adam.py", "_single_tensor_adam"), ("nadam.py", "_single_tensor_nadam"), ("radam.py", "_single_tensor_radam"),
    ("adamax.py", "_single_tensor_adamax"), ("adagrad.py", "_single_tensor_adagrad"),
])
def test_each_single_tensor_step_reading_its_counter_is_the_row(file, function):
    frames = [SourceFrame(f"{SITE}/torch/optim/optimizer.py", 97, "_get_value"),
              SourceFrame(f"{SITE}/torch/optim/{file}", 300, function), USER]
    assert library_read(frames).name == "optimizer_step_count_on_device"
