"""New-user review 19, F2: a checkpoint restore that made every scalar of the optimizer state weakly typed was told
as 8 causes, each "pass `s.count` ... always a typed array (jnp.float32(x)) or always a Python scalar": the wrong
dtype for an int32 counter, no option for state the step returns, and the restore never named. One cause now, with
each leaf's dtype, at the restore and the call, with the fix that restores into the template's dtypes; a single
leaf keeps its own fix, with a constructor of its own dtype."""

from __future__ import annotations

import pytest

from hlodiff.explain.jax_weak_types import (FALLBACK_CONSTRUCTOR, TYPED_CONSTRUCTORS, WeakLeaf, leaf_fix,
                                            rebuilt_tree, root_of, typed_constructor)


@pytest.mark.parametrize("dtype, constructor", [("f32", "jnp.float32"), ("f16", "jnp.float16"),
                                                ("bf16", "jnp.bfloat16"), ("f64", "jnp.float64"),
                                                ("i32", "jnp.int32"), ("i64", "jnp.int64"), ("u32", "jnp.uint32"),
                                                ("c64", "jnp.complex64")])
def test_each_rows_constructor_is_the_leafs_own_dtype(dtype, constructor):
    assert TYPED_CONSTRUCTORS[dtype] == constructor
    assert typed_constructor(f"{dtype}[]{{weak_type=True}}") == f"{constructor}(x)"


def test_the_table_holds_the_rows_tested():
    assert set(TYPED_CONSTRUCTORS) == {"f32", "f16", "bf16", "f64", "i32", "i64", "u32", "c64"}


def test_an_int32_counter_is_never_told_float32():
    fix = leaf_fix("s.count", "i32[]{weak_type=True}", "i32[]{weak_type=False}")
    assert "jnp.int32(x)" in fix and "float32" not in fix


def test_an_unreadable_dtype_names_the_constructor_with_its_dtype_left_open():
    assert typed_constructor("") == FALLBACK_CONSTRUCTOR


def _leaf(path, dtype="f32", now=True, before=False):
    return WeakLeaf(path, dtype, now, before)


def test_every_leaf_of_one_argument_made_weak_at_once_is_a_rebuilt_tree():
    leaves = [_leaf("s.count", "i32"), _leaf("s.hyperparams['b1']"), _leaf("s.inner_state[0].count", "i32")]
    assert rebuilt_tree(leaves) == "s" and root_of("s.inner_state[0].count") == "s"


@pytest.mark.parametrize("leaves", [
    [_leaf("lr")],                                            # one leaf: its own fix (jax_weak_lr_switch)
    [_leaf("lr"), _leaf("wd")],                               # two arguments, not one tree
    [_leaf("s.step", "i32", now=False, before=True), _leaf("s.lr", now=False, before=True)],  # weak -> typed
], ids=["one leaf", "two arguments", "became typed"])
def test_lookalikes_are_no_rebuilt_tree(leaves):
    assert rebuilt_tree(leaves) is None
