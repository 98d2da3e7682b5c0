"""Donation differences on torch_xla: torch_xla decides donation itself (XLA_ENABLE_PARAM_ALIASING), so its
runs are never told about donate_argnums, and donation that comes with the optimizer's warm-up follows from it."""

from __future__ import annotations



from helpers import FIXTURES, cli_json
from hlodiff.diff.compare import diff_modules
from hlodiff.hlo.parser import parse_module

RUN = FIXTURES / "torch_xla" / "record_adamw" / "dump"


def test_record_capture_warm_up_donation_follows_from_the_new_inputs():
    # a real `hlodiff record` folder (XLA dump + PT_XLA_DEBUG log); AdamW's warm-up is expected: exit status 0
    doc = cli_json("explain-recompile", str(RUN), codes=(0,))
    (r,) = doc["recompilations"]
    kinds = [c["kind"] for c in r["causes"]]
    assert kinds[0] == "inputs" and "aliasing" in kinds
    assert "warm-up" in doc["summary"]
    aliasing = r["causes"][kinds.index("aliasing")]
    assert aliasing["fix"].startswith("follows from the inputs change (warm-up)")
    assert "XLA_ENABLE_PARAM_ALIASING" in aliasing["fix"] and "nothing to fix" in aliasing["fix"]
    assert not any("donate_argnums" in (c["fix"] or "") for c in r["causes"])


def test_compare_of_the_warm_up_pair_also_says_it_follows():
    doc = cli_json("compare", f"{RUN}#0", f"{RUN}#1", codes=(1,))
    (aliasing,) = [c for c in doc["causes"] if c["kind"] == "aliasing"]
    assert aliasing["fix"].startswith("follows from the inputs change")
    assert "donate_argnums" not in aliasing["fix"]


_BODY = """
ENTRY main {
  w = f32[8]{0} parameter(0)
  g = f32[8]{0} parameter(1)
  ROOT s = f32[8]{0} subtract(w, g)
}
"""


def test_torch_xla_donation_toggle_says_what_torch_xla_does():
    left = parse_module("HloModule SyncTensorsGraph.7\n" + _BODY)
    right = parse_module("HloModule SyncTensorsGraph.7, buffer_donor={ (0, {}) }\n" + _BODY)
    (cause,) = diff_modules(left, right).causes
    assert cause.kind == "aliasing"
    assert "torch_xla decides donation itself" in cause.fix and "donate_argnums" not in cause.fix
    jax = diff_modules(parse_module("HloModule jit_step\n" + _BODY),
                       parse_module("HloModule jit_step, buffer_donor={ (0, {}) }\n" + _BODY)).causes[0]
    assert "donate_argnums" in jax.fix  # JAX users do choose donation


def _aliasing_causes(path: str, codes=(1,)) -> list[str]:
    doc = cli_json("explain-recompile", path, codes=codes)
    return [c["summary"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "aliasing"]


def test_an_added_input_that_renumbers_the_donated_parameters_is_no_donation_change():
    # review 3, F3: the batch gains key "w" (an f32[4,1] input at number 0); bias and weight are donated on both sides,
    # as parameters 1, 2 on the left and 2, 3 on the right: the parameter matching says they are the same tensors
    run = FIXTURES / "scenarios" / "torch_xla" / "review3_collate_key" / "record"
    assert _aliasing_causes(str(run)) == []
    doc = cli_json("compare", f"{run}#0", f"{run}#2", codes=(1,))
    assert not [c for c in doc["causes"] if c["kind"] == "aliasing"]
    assert any(c["kind"] == "inputs" for c in doc["causes"])


def test_donation_of_removed_inputs_is_named_by_the_removed_tensors():
    # the depth head's bias and weight (f32[1], f32[1,32]) are donated on the left and absent on the right; the
    # classifier head (f32[5], f32[5,32]) is donated on both sides under other numbers and is not named
    (summary,) = _aliasing_causes(str(FIXTURES / "scenarios" / "torch_xla" / "multitask_missing_key"))
    assert "donated on the left only" in summary and "right only" not in summary
    assert "f32[1]{0}" in summary and "f32[1,32]{1,0}" in summary and "f32[5" not in summary
