"""``assert_stable``'s advice when the late graphs are expected: a warm-up length fits an optimizer's first steps,
which every run has in the same place; a new input shape comes whenever the data brings it, so the warm-up read
from one run is that data order's luck (review 23, F5: t1's 40-token task first seen at step 2 was told
warmup=3). Such a failure says to pad to one size or bound the compilations (assert_max_compilations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlodiff.testing import HloStabilityError
from hlodiff.testing.stability import check_path

TORCH_XLA = Path(__file__).resolve().parent.parent / "fixtures" / "torch_xla"


def _failure(name: str) -> str:
    with pytest.raises(HloStabilityError) as failed:
        check_path(TORCH_XLA / name / "graphs.hlo.0").assert_stable(warmup=1)
    return str(failed.value).split("\n\n")[0]


def test_buckets_of_input_sizes_ask_to_pad_or_bound_the_compilations_not_for_a_warm_up():
    """collate_buckets: sequences padded to the batch's bucket; new buckets come at steps 1 and 2."""
    head = _failure("collate_buckets")
    stability = check_path(TORCH_XLA / "collate_buckets" / "graphs.hlo.0")
    count = len([g for g in stability.compilations if g.ref not in stability.outside])
    assert f"assert_max_compilations({count})" in head and "pad every input to one size" in head
    assert "first seen at step 1" in head and "the check needs warmup" not in head


def test_an_optimizers_warm_up_still_gets_its_warm_up_length():
    """The look-alike: momentum's state makes the second step another graph, in every run at the same step."""
    head = _failure("momentum_warmup")
    assert "the check needs warmup=2" in head and "assert_max_compilations" not in head
