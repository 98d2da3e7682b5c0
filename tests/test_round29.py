"""Round 29 (blind, 2026-11-28): a 1-D list made on the host and compared with every value of a batch (bucket
edges, the classes present) has the data's length, so its recurring sizes are no buckets a user chose."""

from __future__ import annotations

from helpers import FIXTURES, cli_json

SCEN = FIXTURES / "scenarios"


def test_deduped_bucket_edges_are_padded_not_called_expected():
    """r29_tx_bucketize_unique_edges: edges of 3 or 5 entries by epoch (np.unique of quantiles), compared with the
    batch as (x[:, None] > edges): two spread sizes that recur, which alone would read as buckets already chosen."""
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "r29_tx_bucketize_unique_edges"), codes=(1,))
    fix = doc["headline"]["fix"]
    assert "pad" in fix and not fix.startswith("expected") and "nothing to fix" not in fix


def test_sizes_of_a_batch_input_that_come_back_keep_one_graph_per_bucket():
    # look-alike: random scales per step (an image batch, no list compared with it): one graph per bucket, expected
    doc = cli_json("explain-recompile", str(SCEN / "torch_xla" / "rev11_tx_multiscale" / "record"), codes=(0, 1))
    assert doc["headline"]["fix"].startswith("expected")
