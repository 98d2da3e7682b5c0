"""Round 21 (blind, small, on merged main): what the first try told wrong or less than right, on its real captures
(fixtures/scenarios/*), beside the look-alikes that share the evidence."""

from __future__ import annotations

import pytest

from helpers import FIXTURES, cli_json, jax_scenario

from hlodiff.dumps.jax_log import read_jax_log

SC = FIXTURES / "scenarios"


def _sources(engine: str) -> dict:
    return {"env": {"HLODIFF_SOURCE_MAP": f"/home/user/project={SC / engine}"}}


def _rules(doc, kind: str) -> set[str]:
    return {c["fix_rule"] for r in doc["recompilations"] for c in r["causes"] if c["kind"] == kind}


_MISS = """TRACING CACHE MISS at /p/t.py:24:12 (<module>):
  never seen function:
    step id={id} defined at /p/t.py:11
{more}Compiling jit(step) with global shapes and types (ShapedArray(float32[4]),). Argument mapping: (None,).
"""
_AGAIN = "  but seen another function defined on the same line; maybe the function is\n  being re-defined repeatedly\n"


@pytest.mark.parametrize("ids, same", [
    ((7, 7, 7), [False, True, True]),      # one object forgotten and compiled again (the caches emptied)
    ((7, 8, 7, 8), [False] * 4),           # a new function each call, two alive at a time (jax_jit_in_loop)
    ((0, 0, 0), [False] * 3),              # ids a capture neutralised: nothing to compare
])
def test_the_log_says_when_jax_forgets_an_object_it_compiled(tmp_path, ids, same):
    log = tmp_path / "stderr.log"
    log.write_text("".join(_MISS.format(id=i, more=_AGAIN if n else "") for n, i in enumerate(ids)))
    misses = [c.cache_miss for c in read_jax_log(str(log)).compilations]
    assert [m.same_object for m in misses] == same


def test_clear_caches_in_the_loop_is_told_at_its_line_not_as_a_function_made_anew():
    """r21_jx_clear_caches_epoch: jax.clear_caches() at the end of every epoch; JAX's log says 'never seen function
    ... maybe re-defined repeatedly' for the very id it compiled. The first try said 'create and jit the function
    once, outside the loop', which the program already does."""
    doc = jax_scenario("r21_jx_clear_caches_epoch", **_sources("jax"))
    head = doc["headline"]
    assert _rules(doc, "cache_key") == {"cache_key_caches_cleared"}
    assert head["location"]["line"] == 26 and "clear_caches" in head["fix"]
    assert "outside the loop, and reuse" not in head["fix"] and "function object" not in head["fix"]


def test_without_the_source_the_same_id_alone_is_not_taken_for_cleared_caches():
    """The same id may be a function freed and made anew at its address: without a clear_caches call read in the
    program, the row stays the new function's (what the log alone supports)."""
    doc = jax_scenario("r21_jx_clear_caches_epoch")
    assert _rules(doc, "cache_key") == {"cache_key_new_function"}


@pytest.mark.parametrize("name", ["jax_jit_in_loop", "r10_jx_closure_table", "jax_config_identity"])
def test_functions_made_anew_keep_their_rows(name):
    doc = jax_scenario(name, **_sources("jax"))
    assert "cache_key_caches_cleared" not in _rules(doc, "cache_key")


def test_aot_compile_every_step_is_no_finding():
    """r21_jx_aot_compile_loop_control: .lower().compile() every step is cached: one compilation."""
    assert jax_scenario("r21_jx_aot_compile_loop_control", **_sources("jax"))["headline"] is None


def _tx(name: str) -> dict:
    folder = SC / "torch_xla" / name
    target = folder / "graphs.hlo.0" if (folder / "graphs.hlo.0").exists() else folder
    return cli_json("explain-recompile", str(target), codes=(0, 1), **_sources("torch_xla"))


def test_a_device_randperm_over_a_growing_pool_is_drawn_without_an_n_long_tensor():
    """r21_tx_randperm_pool: torch.randperm(n_seen, device=dev)[:12] with n_seen growing; the first try said
    'allocate the largest once, mask', which makes no permutation of n."""
    doc = _tx("r21_tx_randperm_pool")
    head = doc["headline"]
    assert head["kind"] == "shape" and head["location"]["line"] == 19
    assert "shape_randperm" in _rules(doc, "shape") and "randint" in head["fix"] and "host" in head["fix"]


@pytest.mark.parametrize("name", ["r17_tx_randint_negatives_control", "mixup_control", "r21_tx_cosine_restarts_control"])
def test_random_indices_whose_sizes_stay_put_are_no_finding(name):
    """randint with a growing bound (device data), randperm on the host moved over: nothing recompiles."""
    assert _tx(name)["headline"] is None


@pytest.mark.parametrize("name", ["ohem_ratio", "random_crop", "loss_history"])
def test_other_python_sizes_keep_their_rows(name):
    assert "shape_randperm" not in _rules(_tx(name), "shape")


def test_clear_caches_counts_only_inside_a_loop_around_the_call(tmp_path):
    """The tenth stop's last read: a jit rebuilt each epoch beside one jax.clear_caches() after the loop was told
    'stop clearing the caches inside the loop'; only a call in a loop that holds the step's call empties the cache
    between two calls."""
    from hlodiff.dumps.loop_counters import calls_in_loops_around

    src = tmp_path / "train.py"
    src.write_text("import jax\nfor epoch in range(3):\n    for b in range(4):\n        step(w)\n"
                   "    jax.clear_caches()\njax.clear_caches()\n")
    assert calls_in_loops_around(str(src), 4, ("clear_caches",)) == [5]
    after = tmp_path / "after.py"
    after.write_text("import jax\nfor epoch in range(3):\n    step = make_step(epoch)\n    step(w)\njax.clear_caches()\n")
    assert calls_in_loops_around(str(after), 4, ("clear_caches",)) == []
    assert calls_in_loops_around(str(tmp_path / "gone.py"), 4, ("clear_caches",)) == []
