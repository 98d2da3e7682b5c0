"""Blind round 7 (docs/accuracy.md, "Round 7 (blind, small)"): the rules it changed, each shown on the real run it
was wrong on and on the real look-alikes that share its evidence.

* JAX: typed PRNG keys of one type in another number (``key<fry>[2] -> key<fry>[4]``, split(key, n) with another
  n) are a shape change, told with its own row (``shape_prng_keys_jax``), not a key-type change;
* JAX: a static argument that changes only a loop's trip count (lax.scan's length, no shape) is answered by a fixed
  count with a mask (``static_loop_count``), not by padding to buckets;
* torch_xla: a 0 or 1 baked in is not sent to a 0-d ``torch.tensor(v, device=device)``, which torch_xla treats as
  the number itself, but to a one-element tensor moved from the host."""

from __future__ import annotations

import pytest

from explain_helpers import explain_capture as _doc, fix_rules as _rules, head_cause as _head_cause


def test_keys_split_in_another_number_are_a_shape_change():
    doc = _doc("scenarios/jax/jax_split_count", codes=(1,))
    head = doc["headline"]
    assert head["kind"] == "shape" and head["location"]["line"] in (26, 28, 30)
    assert "same number of keys" in head["fix"] and "dtype" not in head["fix"]
    assert "dtype_prng_key_jax" not in _rules(doc)
    assert not any(c["kind"] == "dtype" for r in doc["recompilations"] for c in r["causes"])


def test_a_key_whose_type_changed_stays_a_key_type_change():
    """The look-alike: JAX names a key argument both times, but its type changed (key<fry>[] -> u32[2])."""
    doc = _doc("scenarios/jax/jax_key_type", codes=(1,))
    assert "dtype_prng_key_jax" in _rules(doc)
    assert "shape_prng_keys_jax" not in _rules(doc)


def test_a_static_loop_count_is_answered_by_a_fixed_count_with_a_mask():
    doc = _doc("scenarios/jax/jax_scan_inner_static", codes=(1,))
    cause = _head_cause(doc)
    assert cause["kind"] == "static_argument" and cause["fix_rule"] == "static_loop_count"
    assert "mask" in doc["headline"]["fix"] and "bucket" not in doc["headline"]["fix"]


@pytest.mark.parametrize("path", [
    "jax/scan_length",                     # scan's length static, and the stacked outputs' length with it: shapes
    "scenarios/jax/jax_static_topk",       # a static k: shapes
])
def test_a_static_argument_that_sets_shapes_keeps_its_row(path):
    doc = _doc(path, codes=(1,))
    assert "static_loop_count" not in _rules(doc)


@pytest.mark.parametrize("path,rule", [
    ("scenarios/torch_xla/scalar_tensors_collide", "constant_float_special"),  # 0-d device tensors, 1.0 baked
    ("scenarios/torch_xla/kl_beta_anneal", "constant_float_special"),          # a Python float reaching 0/1
    ("torch_xla/offset_index", "constant_int_special"),                        # a Python int 0/1 in an index
])
def test_a_baked_0_or_1_is_never_sent_to_a_0_d_device_tensor(path, rule):
    """torch_xla 2.9 treats a 0-d tensor made per step as the number it holds (scalar_tensors_collide): the 0/1 rows
    advise a one-element tensor moved from the host and say why not a 0-d one."""
    doc = _doc(path, codes=(1,))
    assert rule in _rules(doc)
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["fix_rule"] == rule]
    assert all("torch.tensor([" in f and "0-d tensor" in f and "still treated as the number" in f for f in fixes)


@pytest.mark.parametrize("path", ["torch_xla/lr_zero_one", "scenarios/torch_xla/warmup_from_zero"])
def test_a_baked_optimizer_lr_of_0_or_1_is_kept_off_those_values_not_made_a_tensor(path):
    """Review 7: "torch.tensor([lr]).to(device), read as t[0]" applied to SGD's lr gave 3 compilations instead of 2
    and a graph cut inside torch/optim/sgd.py (SGD passes lr as alpha=-lr, a Python number, reading a tensor back
    each step). A warm-up from 0 is fixed by starting above 0, or the one compilation is accepted."""
    doc = _doc(path, codes=(1,))
    fixes = [c["fix"] for r in doc["recompilations"] for c in r["causes"] if c["fix_rule"] == "constant_lr_special"]
    assert fixes
    assert all("above 0" in f and "accept" in f and "torch.tensor([" not in f for f in fixes), fixes
