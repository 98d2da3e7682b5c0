"""An array a JAX step takes as its batch (undonated beside donated state, nothing returned like it) is the caller's
data in every function of the run: another function returning a new array of that name and shape (an inference
function's ``noisy - net(noisy)``) replaces no state (hlodiff/cost/donation.py's ``data_arguments``), on the real
captures of crossings round 4 and their look-alikes."""

from __future__ import annotations

from conftest import FIXTURES
from helpers import cli_json

COST = FIXTURES / "scenarios" / "cost"


def _headline(name: str, *paths: str) -> dict | None:
    d = COST / name
    args = [str(d / p) for p in paths] if paths else [str(d / "dump"), "--jax-log", str(d / "stderr.log")]
    return cli_json("cost", *args, codes=(0,))["headline"]


def test_an_inference_function_returning_the_donated_step_s_batch_shape_is_no_finding():
    """x4c_residual_denoise_control: train_step(params, noisy, clean) donates params; denoise(params, noisy)
    returns noisy - net(noisy): the batch, read again by the caller."""
    assert _headline("x4c_residual_denoise_control") is None


def test_the_same_function_without_a_step_naming_its_batch_is_still_told():
    """The denoise module alone: no module of the run says `noisy` is a batch, so the replaced input is told."""
    head = _headline("x4c_residual_denoise_control", "dump/module_0008.jit_denoise.cpu_after_optimizations.txt")
    assert head is not None and head["kind"] == "not_donated" and head["arguments"] == ["noisy"]


def test_state_another_function_updates_undonated_is_still_told():
    """x4c_ema_no_donate: the donated train step's batch is (x, y); the EMA tree it does not take stays a finding."""
    head = _headline("x4c_ema_no_donate")
    assert head["kind"] == "not_donated" and head["arguments"] == ["ema"] and head["location"]["line"] == 38
