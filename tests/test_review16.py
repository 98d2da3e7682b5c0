"""New-user review 16 (on 38136a9: 6 right, 0 wrong): what it found hard to read, on real captures."""

from __future__ import annotations

from helpers import FIXTURES, cli

SC = FIXTURES / "scenarios"


def test_the_bridge_s_own_graphs_are_one_line_each_not_a_block_of_false_differences():
    """F1: the bridge's own graphs (a forward against the sync of the call's inputs, 7 % alike) were told in 12-line
    blocks ("dtype ... at your torch.randn line") under a report whose answer was "nothing unexpected"; -v keeps
    the differences for whoever asks."""
    out = cli("explain-recompile", SC / "dynamo" / "d21_reseed_control", codes=(0,)).stdout
    bridge = [line for line in out.splitlines() if line.startswith("  bridge ")]
    assert bridge and all("expected" in line and "no change of yours" in line for line in bridge)
    verbose = cli("explain-recompile", SC / "dynamo" / "d21_reseed_control", "-v", codes=(0,)).stdout
    assert not any(line.startswith("  bridge ") for line in verbose.splitlines())


def test_a_bridge_graph_changed_by_a_size_keeps_its_differences():
    """Look-alike: a bridge graph of a new size has its own row, and its differences are the story."""
    out = cli("explain-recompile", SC / "dynamo" / "lead47_d_filtered_batch", codes=(1,)).stdout
    assert "shape changed" in out or "input shape changed" in out


def test_a_steady_jax_run_names_its_functions_and_its_eager_ops():
    """F5: '3 graphs, 3 compilations, 0 recompilations' for a loop compiling one step; the other two were eager
    ops outside jit. A run with no eager op keeps the plain count."""
    first = cli("explain-recompile", SC / "jax" / "jax_closure_global_control" / "dump", codes=(0,)).stdout
    head = first.splitlines()[0]
    assert "0 recompilations: steady: jit_train_step compiled once" in head
    assert "2 compilations of eager ops outside jit (once per op and shape: expected)" in head


def test_a_bucket_plan_of_several_sizes_also_gives_the_one_size_option():
    """F4: three sizes (6, 8, 12): the plan offered 8 and 12 (2 graphs) or powers of two, never 'pad all to 12'
    (1 graph, a third padded), the choice the reviewer would make for three small sizes."""
    from hlodiff.render.plan import plan_text

    plan = {"kind": "buckets", "dimension": "dim 1", "values": [{"size": 6, "executions": 2},
            {"size": 8, "executions": 2}, {"size": 12, "executions": 2}], "buckets": [8, 12], "graphs_now": 3,
            "graphs_planned": 2, "padded_fraction": 0.04, "powers_of_two": {"graphs": 2, "padded_fraction": 0.19},
            "cost_model": {"counts_from": "executions", "curve": [{"buckets": 1, "padded_fraction": 0.3333},
                                                                   {"buckets": 2, "padded_fraction": 0.04}]}}
    assert "one size (12): 1 graph for it, 33 %" in plan_text(plan)
    single = dict(plan, buckets=[12], graphs_planned=1)
    assert "one size" not in plan_text(single)  # the plan is that one size already
