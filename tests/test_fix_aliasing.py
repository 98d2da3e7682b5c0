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
