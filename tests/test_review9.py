"""New-user review 9 (2026-11-27), torch.compile and JAX findings F2, F3, F5, F6: each test is what the reviewer
read wrong, on a real capture (fixtures/scenarios/*/rev9_*), beside the look-alikes that share its evidence."""

from __future__ import annotations

from helpers import FIXTURES, cli, cli_json

DYN = FIXTURES / "scenarios" / "dynamo"
JAX = FIXTURES / "scenarios" / "jax"
DYN_MAP = ("--source-map", f"/home/user/project={DYN}")
JAX_MAP = ("--source-map", f"/home/user/project={JAX}")


def _top_fixes(out: str) -> list[str]:
    """The `fix:` lines at the left margin: what a reader takes as the run's advice."""
    return [line for line in out.splitlines() if line.startswith("fix:")]


def test_a_steady_compiled_loop_read_by_hand_without_the_debug_log_is_steady():
    """F2 (c5 by hand: dump + an empty TORCH_LOGS file, no PT_XLA_DEBUG log): the bridge's forward and the eager
    argmax `.cpu()` reads after the sync are two graphs, each compiled once; was '1 recompilation ... drop `dtype=`'
    for a program with no dtype=."""
    out = cli("explain-recompile", DYN / "rev9_c5_steady_infer", *DYN_MAP, codes=(0,)).stdout
    assert "0 recompilations" in out
    assert "dtype=" not in out and "torch.where" not in out


def test_bridge_graphs_of_a_dump_still_form_one_family_with_their_recompilation():
    """Look-alike of F2: the split is by where a graph comes from (the bridge's FX graph or eager code), so the
    bridge's own recompilation for Dynamo's new temperature (c1: a constant became an input) stays, told as
    following from Dynamo's guard."""
    out = cli("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,)).stdout
    assert "SyncTensorsGraph torch.compile (XLA bridge) (A,B) (constant)" in out
    assert "follows from Dynamo's recompilation 0/1" in out


def test_no_top_level_fix_contradicts_a_right_dynamo_story():
    """F5 (c1, c3 by hand): under Dynamo's right blocks, a second top-level fix said 'sync at the same points
    every step' / 'a value is kept on some steps only'. The XLA graphs changed because Dynamo recompiled; eager
    graphs that share almost nothing with each other are two programs, not a recompilation to fix."""
    c1 = cli("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,)).stdout
    assert _top_fixes(c1) == []
    assert "pass it as a tensor" in c1
    c3 = cli("explain-recompile", DYN / "rev9_c3_nonzero", *DYN_MAP, codes=(1,)).stdout
    assert _top_fixes(c3) == []
    assert "weight by the mask" in c3
    for out in (c1, c3):
        assert "sync at the same points every step" not in out.split("\n\n", 1)[0]
    doc = cli_json("explain-recompile", DYN / "rev9_c1_dict_config", *DYN_MAP, codes=(1,))
    assert "tensor" in doc["headline"]["fix"]


def test_a_python_loop_over_a_static_count_gets_fori_loop_not_buckets():
    """F3 (j2): `for _ in range(n_steps)` over a static n_steps is unrolled (10 -> 15 adds 30 instructions, 6 per
    step, every opcode one the 10-step graph has): lax.fori_loop with the count traced compiles once; was 'it must
    stay static ... pad to a few bucket sizes'."""
    doc = cli_json("explain-recompile", JAX / "rev9_j2_unrolled_solver" / "record", *JAX_MAP, codes=(1,))
    fix = doc["headline"]["fix"]
    assert "lax.fori_loop" in fix and "traced" in fix and "n_steps" in fix
    assert "must stay static" not in fix and "bucket" not in fix
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}
    assert rules == {"static_unrolled_loop"}


def test_static_arguments_that_are_no_unrolled_count_keep_their_rows():
    """Look-alikes of F3: a static tuple of kept blocks (a Python loop over a subset: no count to trace), a static
    k that sets a shape, and a static scan length (its trip count is a constant of the while loop) keep their
    rows; none is told fori_loop."""
    expected = {"jax_layerdrop_static": "static_structure", "jax_static_topk": "static_structure",
                "jax_scan_inner_static": "static_loop_count"}
    for name, rule in expected.items():
        doc = cli_json("explain-recompile", JAX / name, *JAX_MAP, codes=(1,))
        rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == "static_argument"}
        assert rule in rules and "static_unrolled_loop" not in rules, name


def test_mark_dynamic_names_the_users_compiled_object_and_no_expected_per_size_sync():
    """F6 (c2): the per-size finding named torch's wrapper `inner` ('XLA recompiled inner'); the compiled object is
    `compiled` on the user's line. The bridge's sync of each new-size input was 'each once; nothing to fix' under
    an 'unbounded' family: it compiles per size, and the same padding fixes it."""
    out = cli("explain-recompile", DYN / "rev9_c2_mark_dynamic" / "record", *DYN_MAP, codes=(1,)).stdout
    assert "inner" not in out
    assert "XLA recompiled `compiled` for new sizes" in out
    assert "each once; nothing to fix" not in out
    assert "compiles once per size" in out
    doc = cli_json("explain-recompile", DYN / "rev9_c2_mark_dynamic" / "record", *DYN_MAP, codes=(1,))
    rules = {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"]}
    assert "dynamo_bridge_new_size" in rules and "dynamo_bridge_own" not in rules
