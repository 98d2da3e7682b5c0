"""New-user review 12 (2026-11-27), the findings it left open (F5, F8a-d), each on the reviewer's program captured as a
scenario (fixtures/scenarios/*/rev12_*) and on the look-alikes that share its evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli, cli_json

JAX = FIXTURES / "scenarios" / "jax"


def _eager(doc, op: str) -> list[dict]:
    """The causes of the identical-HLO recompilations of one eager op's family (``jit_dynamic_slice``)."""
    return [c for r in doc["recompilations"] if r["family"].startswith(op) and r["hlo_identical"] for c in r["causes"]]


def _pattern(doc, op: str) -> str:
    (line,) = [p for p in doc["patterns"] if p.startswith(f"eager op: {op} ")]
    return line


# -- F5: an eager op compiled again under a config context is the context's doing, not a placement ------------------

@pytest.mark.parametrize("name, setting, line", [
    ("rev12_jx_matmul_precision", "jax_default_matmul_precision", 28),   # the reviewer's program
    ("rev12_jx_promotion_eval", "jax_numpy_dtype_promotion", 29),        # another config context
    ("rev12_jx_default_device_eval", "jax_default_device", 21),          # a context that places (devices differ)
])
def test_an_eager_op_under_a_context_follows_from_the_context_jax_names_on_its_line(name, setting, line):
    doc = cli_json("explain-recompile", str(JAX / name), codes=(0, 1))
    for op in ("jit_dynamic_slice", "jit_squeeze"):
        causes = _eager(doc, op)
        assert causes and {c["fix_rule"] for c in causes} == {"cache_key_context_here"}
        assert all(f"`{setting}`" in c["fix"] and f"{name}.py:{line}" in c["fix"] and "device_put" not in c["fix"]
                   for c in causes)
        # (A,B,A,B): the second A is the first call under the context, and the words say so
        assert "once per shape and config context it was called with (A,B,A,B)" in _pattern(doc, op)
    assert "jax.device_put" not in cli("explain-recompile", str(JAX / name), codes=(0, 1)).stdout


def test_a_real_device_put_of_eager_indexed_arrays_keeps_its_placement_story():
    # look-alike: arrays put on device 1 with jax.device_put, indexed there; no config context anywhere
    doc = cli_json("explain-recompile", str(JAX / "rev12_jx_eager_device_put"), codes=(0, 1))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "cache_key_context_here" not in rules
    assert doc["headline"]["kind"] == "sharding" and "config context" not in doc["headline"]["fix"]
    assert "once per shape and device it was called with" in _pattern(doc, "jit_dynamic_slice")


@pytest.mark.parametrize("fixture", ["scenarios/jax/jax_device_roundrobin", "jax/look_device_put",
                                     "scenarios/jax/rev8_jx_round_robin"])
def test_an_identical_program_on_another_device_keeps_the_placement_row(fixture):
    doc = cli_json("explain-recompile", str(FIXTURES / fixture), codes=(0, 1))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "cache_key_placement" in rules and "cache_key_context_here" not in rules


# -- F8c: a slice of another length is the shape an eager op was called for -----------------------------------------

def test_an_eager_slice_of_another_length_is_labelled_a_shape_like_its_siblings():
    """jx_control_fori: data[step] then data[0, 0] of the same array: dynamic_slice_sizes {1,2,8,16} -> {1,1,8,16}."""
    doc = cli_json("explain-recompile", str(JAX / "rev12_jx_control_fori"), codes=(0,))
    assert "(shape at rev12_jx_control_fori.py:33)" in _pattern(doc, "jit_dynamic_slice")
    assert "(shape at rev12_jx_control_fori.py:33)" in _pattern(doc, "jit_squeeze")
    # the detail still shows what the graph holds: the slice sizes, an attribute
    assert any(c["kind"] == "attribute" and "dynamic_slice_sizes" in c["summary"]
               for r in doc["recompilations"] if r["family"].startswith("jit_dynamic_slice") for c in r["causes"])


# -- F8b: JAX live lines: an op run outside jit is counted, never told by step or as a placement --------------------

def test_eager_ops_under_a_context_are_counted_live_not_told_as_device_put():
    """jx_matmul_precision watched: xs[0] inside the context compiles again before JAX names the context (at the
    jitted call after it); the live lines counted the first eager op and told the others one by one as "arguments
    on another device (jax.device_put)"."""
    result = cli("watch", str(JAX / "rev12_jx_matmul_precision"), "--until-idle", "0.5")
    lines = [line for line in result.stdout.splitlines() if not line.startswith("hlodiff:   ")]
    assert len([line for line in lines if "outside jit" in line]) == 1
    assert not any("jit_dynamic_slice" in line or "jit_squeeze" in line for line in lines)
    assert "device_put" not in result.stdout and not any(line.startswith("hlodiff: step ") for line in lines)
    (told,) = [line for line in lines if "recompiled" in line]
    assert "jit_loss_fn" in told and "jax_default_matmul_precision" in told


def test_an_eager_op_compiled_again_for_the_same_shapes_is_expected_without_a_placement_claim():
    from hlodiff.diff.fix_rules import RULES_BY_NAME
    from hlodiff.diff.fix_stance import FixStance, stance_of_rule

    row = RULES_BY_NAME["eager_op_same_hlo"]
    assert stance_of_rule(row.name) is FixStance.EXPECTED and "device_put" not in row.text
    assert "once per new shape" not in row.text  # the same shapes: the context or the device keyed it


# -- F8d: the headline reads in the first three lines of a wide terminal ----------------------------------------------

def test_the_one_hot_headline_reads_in_three_lines_of_a_wide_terminal():
    """tx_onehot_nc: the summary and the fix ran to ~700 characters (4 lines at 200 columns, 7 at 120), the fix saying
    one_hot three times; the fix keeps what the truth needs (num_classes=C at the read's line, no "pad to the
    maximum") in one line."""
    import math

    out = cli("explain-recompile", str(FIXTURES / "scenarios" / "torch_xla" / "rev12_tx_onehot_nc" / "record"),
              codes=(1,)).stdout.splitlines()
    summary, fix = out[0], out[1]
    assert fix.startswith("fix: ") and "rev12_tx_onehot_nc.py:16" in fix and "F.one_hot(y, num_classes=C)" in fix
    assert "pad to the maximum" not in fix and fix.count("one_hot") == 1
    assert sum(math.ceil(len(line) / 200) for line in (summary, fix)) <= 3


def test_the_live_story_revises_an_eager_op_to_the_context_once_jax_names_it():
    """jx_default_device_eval watched: the eager xs[0] under jax.default_device(devices[1]) compiles on device 1
    before JAX names the context at the jitted call on the same line; the line told when the run ends ties it to the
    context, as the report does, though the family's window no longer holds the jitted call."""
    result = cli("watch", str(JAX / "rev12_jx_default_device_eval"), "--until-idle", "0.5")
    revised = [line for line in result.stdout.splitlines() if "now that more of the run is known" in line
               and ("jit_dynamic_slice" in line or "jit_squeeze" in line)]
    assert revised and all("config context" in line and "`jax_default_device`" in line for line in revised)
