"""``assert_stable`` on JAX dumps counts what explain-recompile counts: JAX's eager ops (``jnp.ones``,
``jax.random.normal`` called outside ``jit``, compiled once per shape) are no step of the program, so a run the
report calls steady passes, and a real recompilation's failure names the jitted function's graphs, not the eager
ones beside it (review 13, F2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.testing import HloStabilityError, assert_max_compilations, assert_stable
from hlodiff.testing.stability import check_path

JAX = Path(__file__).resolve().parent.parent / "fixtures" / "scenarios" / "jax"

# controls whose jitted functions compile once, beside eager ops compiled for several shapes (real runs)
STEADY_WITH_EAGER_OPS = ["jax_eager_init_control", "jax_dict_order_control", "rev6_eager_control",
                         "jax_two_steps", "review_steady"]


@pytest.mark.parametrize("name", STEADY_WITH_EAGER_OPS)
def test_a_run_the_report_calls_steady_passes_though_eager_ops_compiled_late(name):
    check = check_path(JAX / name / "dump")
    assert any(check.steps[g.ref] >= 1 for g in check.compilations), "the eager ops compiled after step 0"
    assert_stable(JAX / name / "dump", warmup=1)


def test_a_real_recompilation_still_fails_and_names_only_the_jitted_functions_graphs():
    dump = JAX / "rev10_jx_sharding" / "dump"
    with pytest.raises(HloStabilityError) as err:
        assert_stable(dump, warmup=1)
    head = str(err.value).split("\n\n", 1)[0]
    assert head.startswith("1 graph compiled after the first 1 step")
    assert head.count(f"{dump}#") == 1 and f"{dump}#11 at step 1" in head


def test_max_compilations_counts_the_programs_compilations_not_eager_ops():
    dump = JAX / "jax_eager_init_control" / "dump"
    assert_max_compilations(dump, 1)  # jit_train_step once; 15 eager-op compilations beside it
    with pytest.raises(HloStabilityError, match="2 compilations, expected at most 1"):
        assert_max_compilations(JAX / "rev10_jx_sharding" / "dump", 1)
