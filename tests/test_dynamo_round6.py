"""Dynamo, round 6 (docs/accuracy.md): a replaced submodule's parameter that changed shape, a batch smaller than
the one before that is not the run's last call, and a global list the loop appends to while the compiled code reads
it. Each row is checked on the real run whose evidence chooses it, or on the guard as Dynamo prints it, and on its
look-alikes (tests/test_fix_rules.py checks every row's evidence on its own)."""

from __future__ import annotations

import pytest

from explain_helpers import explain_status as _explain, guard_recompiles as _rules
from helpers import FIXTURES
from hlodiff.diff.fix_rules import EXPECTED

SCENARIOS = FIXTURES / "scenarios" / "dynamo"

_PARAM = ("tensor 'self._modules['head']._parameters['bias']' size mismatch at index 0. expected 3, actual 5. Guard "
          "failed on a parameter, consider using torch._dynamo.config.force_parameter_static_shapes = False to "
          "allow dynamism on parameters.")


@pytest.mark.parametrize("guards, rule", [
    # a parameter's size (nested quotes in the tensor's name): the module was replaced, not an input resized
    ((_PARAM,), "dynamo_parameter_shape"),
    # look-alike: an argument's size keeps the size rows
    (("tensor 'x' size mismatch at index 1. expected 16, actual 24",), "dynamo_shape"),
    # a batch smaller than the one before, then the full size again: the short-batch row (not the run's last call)
    (("tensor 'x' size mismatch at index 0. expected 8, actual 4",
      "tensor 'x' size mismatch at index 0. expected 4, actual 8"), "dynamo_shape_short_batch"),
    # look-alike: the short batch as the run's last recompilation stays the last-batch row
    (("tensor 'x' size mismatch at index 0. expected 8, actual 4",), "dynamo_shape_last_batch"),
])
def test_round_6_size_guards_and_their_look_alikes(guards, rule):
    assert _rules(*guards)[0].fix_rule == rule


def test_a_parameter_guard_is_read_as_a_size_with_its_full_name():
    (r,) = _rules(_PARAM)
    assert r.kind == "shape" and "parameter_shape" in r.facts
    assert r.seen == "dim 0 of self._modules['head']._parameters['bias']: 3 -> 5"


def test_a_replaced_head_is_expected_and_never_sends_to_dynamic_parameters_or_a_tensor():
    doc, code = _explain(SCENARIOS / "dyn_head_swap")
    fix = doc["headline"]["fix"]
    assert code == 0 and doc["dynamo"]["headline"]["fix_rule"] == "dynamo_parameter_shape" in EXPECTED
    assert fix.startswith("expected") and "force_parameter_static_shapes" not in fix and "as a tensor" not in fix


def test_a_bank_the_loop_appends_to_is_told_to_become_a_preallocated_buffer():
    doc, code = _explain(SCENARIOS / "dyn_closure_bank")
    assert code == 1 and doc["dynamo"]["headline"]["fix_rule"] == "dynamo_global_length"
    assert "preallocated tensor of fixed size" in doc["headline"]["fix"]


@pytest.mark.parametrize("name", ["dyn_kv_cat", "dyn_auto_dynamic", "dyn_last_batch_static"])
def test_size_fixes_no_longer_name_mark_dynamic(name):
    doc, code = _explain(SCENARIOS / name)
    fix = doc["headline"]["fix"]
    # a cache grown by torch.cat is told to preallocate and write in place since Dynamo round 31 (its truth's fix)
    assert code == 1 and "mark_dynamic" not in fix and ("pad" in fix or "preallocate" in fix)
